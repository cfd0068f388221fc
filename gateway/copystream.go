package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/types"
)

// copyIn runs COPY ... FROM STDIN: CopyInResponse, then CopyData until
// CopyDone, parsing records into typed rows and handing them to the engine
// in chunks of at most copyChunkRowsMax rows. Any bad record aborts the sink
// and returns an error naming the line; the caller then rolls back the
// transaction, so nothing of the COPY is committed.
func (c *conn) copyIn(ctx context.Context, spec *copySpec) (err error) {
	if c.txReadOnly {
		return errcode.New(errcode.ReadOnlyTransaction, "cannot execute COPY FROM in a read-only transaction")
	}
	if err := c.ensureTx(ctx); err != nil {
		return canceledError(ctx, err)
	}
	sink, err := c.session.CopyIn(ctx, CopyInRequest{Schema: spec.schema, Table: spec.table, Columns: spec.columns, Settings: c.settings})
	if err != nil {
		return canceledError(ctx, err)
	}
	finished := false
	defer func() {
		if !finished {
			if abortErr := sink.Abort(context.WithoutCancel(ctx)); abortErr != nil {
				c.log.Warn("gateway: aborting COPY failed", "err", abortErr)
			}
		}
	}()
	progress := c.startCopyProgress("COPY FROM", spec)
	defer func() { progress.end(err) }()
	cols := sink.Columns()
	c.backend.Send(copyResponseIn(spec, len(cols)))
	if err := c.flush(); err != nil {
		return err
	}
	dec := &copyDecoder{spec: spec}
	// NB: the settings cannot change during a COPY; reading the input
	// style from them per field was 6% of a COPY's CPU.
	in := c.settings.InputStyle()
	var binDec *copyBinaryDecoder
	if spec.format == copyBinary {
		binDec = &copyBinaryDecoder{cols: cols, table: spec.table}
	}
	// The engine writes a chunk while the next is read and decoded
	// (copyWriter); every return below stops the writer first, and an
	// error of the rows it was given comes before one of later rows.
	w := startCopyWriter(ctx, sink, progress)
	defer w.stop()
	chunk := make([]types.Row, 0, 64)
	chunkBytes := 0
	writeChunk := func() error {
		if len(chunk) == 0 {
			return nil
		}
		if err := w.write(chunk); err != nil {
			return canceledError(ctx, err)
		}
		// NB: a fresh slice: the writer holds the last one until written.
		chunk, chunkBytes = make([]types.Row, 0, min(cap(chunk), copyChunkRowsMax)), 0
		return nil
	}
	// fail is a decode or protocol error at the current point of the
	// stream: an error of the rows before it, still being written, is the
	// COPY's error instead.
	fail := func(err error) error {
		if werr := w.stop(); werr != nil {
			return canceledError(ctx, werr)
		}
		return err
	}
	// slab is where rows' datums are carved from: one allocation per
	// CopyData message's records instead of one per row. It is never
	// reused: the engine keeps the rows it is handed.
	var slab []types.Datum
	var box expr.Boxer
	convert := func(records [][]*string) error {
		if need := len(records) * len(cols); cap(slab)-len(slab) < need {
			slab = make([]types.Datum, 0, max(need, 64*len(cols)))
		}
		for i, rec := range records {
			// The decoder's line counter is at the last record handed out.
			line := dec.line - int64(len(records)-1-i)
			var row types.Row
			if len(rec) == len(cols) {
				row, slab = slab[len(slab):len(slab)+len(cols):len(slab)+len(cols)], slab[:len(slab)+len(cols)]
			}
			row, err := copyRow(spec, cols, rec, line, in, &box, row)
			if err != nil {
				return err
			}
			chunk = append(chunk, row)
			for _, f := range rec {
				if f != nil {
					chunkBytes += len(*f)
				}
			}
			if len(chunk) >= copyChunkRowsMax || chunkBytes >= copyChunkBytesMax {
				if err := writeChunk(); err != nil {
					return err
				}
			}
		}
		return nil
	}
	// convertBinary hands a binary COPY's decoded rows on.
	convertBinary := func(rows []types.Row, size int) error {
		chunk = append(chunk, rows...)
		chunkBytes += size
		if len(chunk) >= copyChunkRowsMax || chunkBytes >= copyChunkBytesMax {
			return writeChunk()
		}
		return nil
	}
	for {
		if ctx.Err() != nil {
			return fail(canceledError(ctx, ctx.Err()))
		}
		msg, err := c.backend.Receive()
		if err != nil {
			return fail(err)
		}
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			progress.add(int64(len(m.Data)), 0)
			if binDec != nil {
				rows, err := binDec.feed(m.Data, false)
				if err != nil {
					return fail(err)
				}
				if err := convertBinary(rows, len(m.Data)); err != nil {
					return fail(err)
				}
				continue
			}
			records, err := dec.feed(m.Data, false)
			if err != nil {
				return fail(err)
			}
			if err := convert(records); err != nil {
				return fail(err)
			}
		case *pgproto3.CopyDone:
			if binDec != nil {
				rows, err := binDec.feed(nil, true)
				if err != nil {
					return fail(err)
				}
				if err := convertBinary(rows, 0); err != nil {
					return fail(err)
				}
			} else {
				records, err := dec.feed(nil, true)
				if err != nil {
					return fail(err)
				}
				if err := convert(records); err != nil {
					return fail(err)
				}
			}
			if err := writeChunk(); err != nil {
				return err
			}
			if err := w.stop(); err != nil {
				return canceledError(ctx, err)
			}
			n, err := sink.Finish(ctx)
			if err != nil {
				return canceledError(ctx, err)
			}
			finished = true
			c.backend.Send(&pgproto3.CommandComplete{CommandTag: []byte("COPY " + strconv.FormatInt(n, 10))})
			return nil
		case *pgproto3.CopyFail:
			return fail(errcode.New(errcode.CopyClientFailed, "COPY from stdin failed: %s", m.Message))
		case *pgproto3.Flush, *pgproto3.Sync:
			// Ignored during COPY IN, as PostgreSQL does.
		case *pgproto3.Terminate:
			return fail(errors.New("client terminated during COPY"))
		default:
			return fail(errcode.New(errcode.ProtocolViolation, "unexpected message type %T during COPY from stdin", msg))
		}
	}
}

// copyWriter hands a COPY FROM's chunks to the engine on a goroutine of
// its own, one at a time and in order, so the connection reads and
// decodes the next chunk meanwhile. The sink is used by one goroutine at a
// time: the writer until stop returns, then the connection's.
type copyWriter struct {
	chunks  chan []types.Row
	done    chan struct{}
	stopped bool
	// err is the first Write's error; read after done is closed.
	err error
}

func startCopyWriter(ctx context.Context, sink CopyInSink, progress *copyProgress) *copyWriter {
	// NB: one chunk queued behind the one being written: at most three
	// chunks of memory (copyChunkBytesMax) with the one being decoded.
	w := &copyWriter{chunks: make(chan []types.Row, 1), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		defer func() {
			// A panic in the engine fails the COPY, as it fails a
			// statement on the connection's goroutine (dispatch).
			if r := recover(); r != nil {
				progress.c.log.Error("gateway: panic in COPY", "panic", r, "stack", string(debug.Stack()))
				w.err = errcode.New(errcode.InternalError, "internal error: %v", r)
			}
		}()
		for chunk := range w.chunks {
			if err := sink.Write(ctx, chunk); err != nil {
				w.err = err
				return
			}
			progress.add(0, int64(len(chunk)))
		}
	}()
	return w
}

// write queues a chunk, or returns the error that stopped the writer.
func (w *copyWriter) write(chunk []types.Row) error {
	select {
	case <-w.done:
		return w.err
	default:
	}
	select {
	case w.chunks <- chunk:
		return nil
	case <-w.done:
		return w.err
	}
}

// stop waits for the chunks queued to be written and ends the writer,
// returning the first Write's error. It may be called again.
func (w *copyWriter) stop() error {
	if !w.stopped {
		w.stopped = true
		close(w.chunks)
	}
	<-w.done
	return w.err
}

// copyRow converts one record's fields to a typed row, read in the
// session's input style.
// It fills row (len(cols) nil datums), or a new row when row is nil.
func copyRow(spec *copySpec, cols types.Schema, rec []*string, line int64, in types.InputStyle, box *expr.Boxer, row types.Row) (types.Row, error) {
	where := func() string { return fmt.Sprintf("COPY %s, line %d", spec.table, line) }
	if len(rec) > len(cols) {
		e := errcode.New(errcode.CopyColumnCountMismatch, "extra data after last expected column")
		e.Detail = where()
		return nil, e
	}
	if len(rec) < len(cols) {
		e := errcode.New(errcode.CopyColumnCountMismatch, "missing data for column %q", cols[len(rec)].Name)
		e.Detail = where()
		return nil, e
	}
	if row == nil {
		row = make(types.Row, len(cols))
	}
	for i, f := range rec {
		if f == nil {
			continue
		}
		v, err := parseCopyField(cols[i].Type, *f, in, box)
		if err != nil {
			e := errcode.New(errcode.CopyInvalidValue, "%v", err)
			if inner, ok := errcode.As(err); ok {
				e.Message, e.SQLState = inner.Message, inner.State()
			}
			e.Detail = fmt.Sprintf("%s, column %s: %q", where(), cols[i].Name, *f)
			return nil, e
		}
		row[i] = v
	}
	return row, nil
}

// parseCopyField is types.ParseStyle, with integers and text boxed by box
// (the common column types of a bulk load, without an allocation each).
func parseCopyField(t types.Type, s string, in types.InputStyle, box *expr.Boxer) (types.Datum, error) {
	bits, name := 0, ""
	switch t.Kind {
	case types.KindText:
		return box.String(s), nil
	case types.KindInt2:
		bits, name = 16, "smallint"
	case types.KindInt4:
		bits, name = 32, "integer"
	case types.KindInt8:
		bits, name = 64, "bigint"
	default:
		return types.ParseStyle(t, s, in)
	}
	n, err := types.ParseInt64(s, bits, name)
	if err != nil {
		return nil, err
	}
	return box.Int64(n), nil
}

// copyOut runs COPY ... TO STDOUT: the query runs through the engine and
// each row is sent as one CopyData message.
func (c *conn) copyOut(ctx context.Context, spec *copySpec) (err error) {
	stmt, err := c.session.Prepare(ctx, PrepareRequest{SQL: spec.query, Settings: c.settings})
	if err != nil {
		return canceledError(ctx, err)
	}
	if stmt.Columns == nil {
		return errcode.New(errcode.CopyMalformedStatement, "COPY query must return rows")
	}
	if err := c.ensureTx(ctx); err != nil {
		return canceledError(ctx, err)
	}
	cur, err := c.session.Execute(ctx, c.executeRequest(stmt, nil))
	if err != nil {
		return canceledError(ctx, err)
	}
	defer func() {
		if cerr := cur.Close(); cerr != nil {
			c.log.Warn("gateway: closing COPY cursor failed", "err", cerr)
		}
	}()
	progress := c.startCopyProgress("COPY TO", spec)
	defer func() { progress.end(err) }()
	c.backend.Send(copyResponseOut(spec, len(stmt.Columns)))
	var buf []byte
	if spec.format == copyBinary {
		c.backend.Send(&pgproto3.CopyData{Data: appendCopyBinaryHeader(nil)})
	}
	if spec.header {
		for i, col := range stmt.Columns {
			if i > 0 {
				buf = append(buf, spec.delimiter)
			}
			if spec.format == copyCSV {
				buf = appendCopyCSVField(buf, []byte(col.Name), spec)
			} else {
				buf = appendCopyTextField(buf, []byte(col.Name), spec.delimiter)
			}
		}
		buf = append(buf, '\n')
		c.backend.Send(&pgproto3.CopyData{Data: buf})
	}
	var n int64
	for {
		row, err := cur.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return canceledError(ctx, err)
		}
		if spec.format == copyBinary {
			buf, err = appendCopyBinaryRow(buf[:0], row, stmt.Columns)
		} else {
			buf, err = appendCopyRow(buf[:0], row, stmt.Columns, spec, c.settings)
		}
		if err != nil {
			return errcode.Wrap(errcode.InternalError, err, "cannot encode COPY row")
		}
		c.backend.Send(&pgproto3.CopyData{Data: buf})
		c.unflushedBytes += len(buf)
		n++
		progress.add(int64(len(buf)), 1)
		if c.unflushedBytes > copyOutFlushBytes || isStreaming(cur) {
			if err := c.flush(); err != nil {
				return err
			}
		}
	}
	if spec.format == copyBinary {
		c.backend.Send(&pgproto3.CopyData{Data: appendCopyBinaryTrailer(nil)})
	}
	c.backend.Send(&pgproto3.CopyDone{})
	c.backend.Send(&pgproto3.CommandComplete{CommandTag: []byte("COPY " + strconv.FormatInt(n, 10))})
	return nil
}

// copyFormats is the per-column format codes of a COPY response: all
// binary (1) for FORMAT binary, all text (0) otherwise.
func copyFormats(spec *copySpec, n int) (overall byte, cols []uint16) {
	cols = make([]uint16, n)
	if spec.format != copyBinary {
		return 0, cols
	}
	for i := range cols {
		cols[i] = 1
	}
	return 1, cols
}

func copyResponseIn(spec *copySpec, n int) *pgproto3.CopyInResponse {
	overall, cols := copyFormats(spec, n)
	return &pgproto3.CopyInResponse{OverallFormat: overall, ColumnFormatCodes: cols}
}

func copyResponseOut(spec *copySpec, n int) *pgproto3.CopyOutResponse {
	overall, cols := copyFormats(spec, n)
	return &pgproto3.CopyOutResponse{OverallFormat: overall, ColumnFormatCodes: cols}
}
