package pgcdc

import (
	"context"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// stream applies the replication stream of one session.
type stream struct {
	src  *Source
	repl *pgconn.PgConn
	// committed is the LSN durably stored with the mirrors' rows: every
	// transaction ending at or before it is already applied.
	committed uint64
	// pending are the writes of complete transactions not yet committed,
	// up to pendingLSN (the end of the last of them).
	pending      []shard.RowWrite
	pendingLSN   uint64
	pendingSince time.Time
	// txn collects the transaction being received.
	txn   []shard.RowWrite
	inTxn bool
	// relations are the upstream relations announced in this session
	// (pgoutput sends a Relation message before a relation's first change
	// and after its schema changes).
	relations  map[uint32]*relation
	mirrors    map[[2]string]*catalog.Relation
	nextStatus time.Time
	// nextIdleAdvance is when an idle stream may next store a keepalive's
	// position (idleAdvance).
	nextIdleAdvance time.Time
}

// relation maps an upstream relation's columns onto its mirror.
type relation struct {
	mirror *catalog.Relation // nil: not mirrored (added to the publication later)
	// columnOf[i] is the mirror column of upstream column i (-1: not
	// mirrored, e.g. added upstream after the source was created).
	columnOf []int
}

func newStream(src *Source, repl *pgconn.PgConn, committed uint64) *stream {
	st := &stream{src: src, repl: repl, committed: committed, relations: map[uint32]*relation{}, mirrors: map[[2]string]*catalog.Relation{}}
	for _, m := range src.cfg.Mirrors {
		st.mirrors[[2]string{m.Relation.Upstream.Schema, m.Relation.Upstream.Table}] = m.Relation
	}
	return st
}

func (st *stream) run(ctx context.Context) error {
	st.nextStatus = time.Now().Add(statusInterval)
	for {
		deadline := st.nextStatus
		if flushAt := st.pendingSince.Add(flushInterval); len(st.pending) > 0 && flushAt.Before(deadline) {
			deadline = flushAt
		}
		rctx, cancel := context.WithDeadline(ctx, deadline)
		msg, err := st.repl.ReceiveMessage(rctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !pgconn.Timeout(err) {
				return errcode.Wrap(errcode.ConnectorUnreachable, err, "the replication connection to the upstream failed")
			}
			if err := st.flush(ctx); err != nil {
				return err
			}
			if !time.Now().Before(st.nextStatus) {
				if err := st.sendStatus(ctx); err != nil {
					return err
				}
			}
			continue
		}
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			return replicationError(pgconn.ErrorResponseToPgError(m), st.src.cfg.Slot)
		case *pgproto3.CopyData:
			if err := st.copyData(ctx, m.Data); err != nil {
				return err
			}
		default:
			// NoticeResponse and the like carry nothing to apply.
		}
		if len(st.pending) >= batchRowsMax {
			if err := st.flush(ctx); err != nil {
				return err
			}
		}
	}
}

func (st *stream) copyData(ctx context.Context, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	switch data[0] {
	case pglogrepl.PrimaryKeepaliveMessageByteID:
		pkm, err := pglogrepl.ParsePrimaryKeepaliveMessage(data[1:])
		if err != nil {
			return errcode.Wrap(errcode.ConnectorUnreachable, err, "malformed keepalive from the upstream")
		}
		st.src.update(func(s *Status) { s.UpstreamLSN = max(s.UpstreamLSN, uint64(pkm.ServerWALEnd)) })
		if advanced, err := st.idleAdvance(ctx, uint64(pkm.ServerWALEnd)); err != nil || advanced {
			return err
		}
		if pkm.ReplyRequested {
			return st.sendStatus(ctx)
		}
	case pglogrepl.XLogDataByteID:
		xld, err := pglogrepl.ParseXLogData(data[1:])
		if err != nil {
			return errcode.Wrap(errcode.ConnectorUnreachable, err, "malformed WAL data from the upstream")
		}
		st.src.update(func(s *Status) { s.UpstreamLSN = max(s.UpstreamLSN, uint64(xld.ServerWALEnd)) })
		msg, err := pglogrepl.Parse(xld.WALData)
		if err != nil {
			return errcode.Wrap(errcode.ConnectorUnreachable, err, "malformed pgoutput message from the upstream")
		}
		return st.apply(ctx, msg)
	}
	return nil
}

// apply handles one pgoutput message.
func (st *stream) apply(ctx context.Context, msg pglogrepl.Message) error {
	switch m := msg.(type) {
	case *pglogrepl.RelationMessage:
		return st.relation(ctx, m)
	case *pglogrepl.BeginMessage:
		st.inTxn, st.txn = true, st.txn[:0]
	case *pglogrepl.InsertMessage:
		rel, err := st.relationOf(m.RelationID)
		if err != nil || rel.mirror == nil {
			return err
		}
		row, err := st.decode(ctx, rel, m.Tuple, nil)
		if err != nil {
			return err
		}
		return st.write(shard.RowWrite{Table: rel.mirror.ID, Row: row, Key: keyOf(rel.mirror, row)})
	case *pglogrepl.UpdateMessage:
		rel, err := st.relationOf(m.RelationID)
		if err != nil || rel.mirror == nil {
			return err
		}
		var oldKey types.Row
		if m.OldTuple != nil {
			old, err := st.decodeKey(rel, m.OldTuple)
			if err != nil {
				return err
			}
			oldKey = old
		}
		row, err := st.decode(ctx, rel, m.NewTuple, oldKey)
		if err != nil {
			return err
		}
		key := keyOf(rel.mirror, row)
		if oldKey != nil && !sameKey(rel.mirror, oldKey, key) {
			// The key changed: the row moves.
			if err := st.write(shard.RowWrite{Table: rel.mirror.ID, Key: oldKey}); err != nil {
				return err
			}
		}
		return st.write(shard.RowWrite{Table: rel.mirror.ID, Row: row, Key: key})
	case *pglogrepl.DeleteMessage:
		rel, err := st.relationOf(m.RelationID)
		if err != nil || rel.mirror == nil {
			return err
		}
		key, err := st.decodeKey(rel, m.OldTuple)
		if err != nil {
			return err
		}
		return st.write(shard.RowWrite{Table: rel.mirror.ID, Key: key})
	case *pglogrepl.TruncateMessage:
		return st.truncate(ctx, m)
	case *pglogrepl.CommitMessage:
		st.inTxn = false
		end := uint64(m.TransactionEndLSN)
		if end <= st.committed || end <= st.pendingLSN {
			// Already applied before a restart: exactly once means
			// dropping it.
			st.txn = st.txn[:0]
			return nil
		}
		if len(st.pending) == 0 {
			st.pendingSince = time.Now()
		}
		st.pending = append(st.pending, st.txn...)
		st.pendingLSN = end
		st.txn = st.txn[:0]
	}
	// Type, Origin and logical decoding messages carry nothing to mirror.
	return nil
}

// write adds a row change to the transaction being received.
func (st *stream) write(w shard.RowWrite) error {
	if len(st.txn) >= txnRowsMax {
		return blocked(errcode.New(errcode.ConnectorTransactionTooLarge, "an upstream transaction changes more than %d rows", txnRowsMax))
	}
	st.txn = append(st.txn, w)
	return nil
}

// flush commits the pending transactions with the LSN they reach, then
// tells the upstream it may discard the WAL before it.
func (st *stream) flush(ctx context.Context) error {
	if len(st.pending) == 0 {
		return nil
	}
	if err := st.src.cfg.Sink.Commit(ctx, st.pending, st.pendingLSN); err != nil {
		return err
	}
	n := uint64(len(st.pending))
	st.committed = st.pendingLSN
	// NB: a fresh slice, not pending[:0]: the commit message shared this
	// one with the shard actor.
	st.pending = nil
	st.src.update(func(s *Status) { s.CommittedLSN = st.committed; s.Rows += n })
	return st.sendStatus(ctx)
}

// idleAdvance stores the position of a keepalive received between
// transactions with nothing pending, and reports it upstream. A logical
// walsender's keepalive carries the position up to which it has decoded
// and sent everything, so every transaction ending before it has arrived
// already. Without this, a source whose tables are quiet would hold the
// slot (and the upstream's WAL of every other table) where its last change
// was. At most once per statusInterval: each advance is a commit.
func (st *stream) idleAdvance(ctx context.Context, sent uint64) (bool, error) {
	now := time.Now()
	if st.inTxn || len(st.pending) > 0 || sent <= st.committed || now.Before(st.nextIdleAdvance) {
		return false, nil
	}
	st.nextIdleAdvance = now.Add(statusInterval)
	if err := st.src.cfg.Sink.Commit(ctx, nil, sent); err != nil {
		return false, err
	}
	st.committed = sent
	st.src.update(func(s *Status) { s.CommittedLSN = sent })
	return true, st.sendStatus(ctx)
}

// sendStatus reports the durably committed LSN as written, flushed and
// applied: the slot advances only past what RockStream has stored.
func (st *stream) sendStatus(ctx context.Context) error {
	st.nextStatus = time.Now().Add(statusInterval)
	err := pglogrepl.SendStandbyStatusUpdate(ctx, st.repl, pglogrepl.StandbyStatusUpdate{WALWritePosition: pglogrepl.LSN(st.committed)})
	if err != nil {
		return errcode.Wrap(errcode.ConnectorUnreachable, err, "cannot report the replication position upstream")
	}
	return nil
}

func (st *stream) relationOf(id uint32) (*relation, error) {
	rel, ok := st.relations[id]
	if !ok {
		return nil, errcode.New(errcode.ConnectorUnreachable, "the upstream sent a change of relation %d before describing it", id)
	}
	return rel, nil
}

// relation checks an upstream relation's (possibly changed) schema
// against its mirror. Compatible: columns added upstream (not mirrored)
// and type changes within one kind (e.g. varchar(10) to varchar(20)).
// Anything else blocks the source: a mirrored column dropped, renamed or
// changed to another type, or a different primary key.
func (st *stream) relation(ctx context.Context, m *pglogrepl.RelationMessage) error {
	mirror, ok := st.mirrors[[2]string{m.Namespace, m.RelationName}]
	if !ok {
		st.relations[m.RelationID] = &relation{}
		return nil
	}
	rel := &relation{mirror: mirror, columnOf: make([]int, len(m.Columns))}
	seen := make([]bool, len(mirror.Columns))
	keyMatches := true
	upstreamKeys := 0
	for i, c := range m.Columns {
		rel.columnOf[i] = mirror.ColumnIndex(c.Name)
		isKey := c.Flags&1 != 0
		if isKey {
			upstreamKeys++
		}
		j := rel.columnOf[i]
		if j < 0 {
			if isKey {
				keyMatches = false
			}
			continue
		}
		seen[j] = true
		if want := kindOIDs[mirror.Columns[j].Type.Kind]; c.DataType != want {
			return st.block(ctx, "column %q of upstream table %s.%s changed type (type oid %d, mirrored as %s)", c.Name, m.Namespace, m.RelationName, c.DataType, mirror.Columns[j].Type.SQLName())
		}
		if isKey != inKey(mirror, j) && m.ReplicaIdentity == 'd' {
			keyMatches = false
		}
	}
	for j, ok := range seen {
		if !ok {
			return st.block(ctx, "column %q of upstream table %s.%s was dropped or renamed", mirror.Columns[j].Name, m.Namespace, m.RelationName)
		}
	}
	if m.ReplicaIdentity == 'd' && (!keyMatches || upstreamKeys != len(mirror.PrimaryKey)) {
		return st.block(ctx, "the primary key of upstream table %s.%s changed", m.Namespace, m.RelationName)
	}
	if m.ReplicaIdentity != 'd' && m.ReplicaIdentity != 'f' {
		return st.block(ctx, "upstream table %s.%s changed to REPLICA IDENTITY %c", m.Namespace, m.RelationName, m.ReplicaIdentity)
	}
	st.relations[m.RelationID] = rel
	return nil
}

// block commits the complete transactions received so far, then stops
// the source with RS-1002.
func (st *stream) block(ctx context.Context, format string, args ...any) error {
	if err := st.flush(ctx); err != nil {
		return err
	}
	return blocked(errcode.New(errcode.ConnectorSchemaDrift, format, args...))
}

func inKey(rel *catalog.Relation, col int) bool {
	for _, k := range rel.PrimaryKey {
		if k == col {
			return true
		}
	}
	return false
}

// decode turns an upstream tuple into a mirror row. Unchanged TOAST
// values (not sent) are taken from the row's current version under
// oldKey (or the new row's key).
func (st *stream) decode(ctx context.Context, rel *relation, tuple *pglogrepl.TupleData, oldKey types.Row) (types.Row, error) {
	row := make(types.Row, len(rel.mirror.Columns))
	var unchanged []int
	for i, c := range tuple.Columns {
		j := rel.columnOf[i]
		if j < 0 {
			continue
		}
		switch c.DataType {
		case pglogrepl.TupleDataTypeNull:
		case pglogrepl.TupleDataTypeToast:
			unchanged = append(unchanged, j)
		case pglogrepl.TupleDataTypeText:
			d, err := types.Parse(rel.mirror.Columns[j].Type, string(c.Data), nil)
			if err != nil {
				return nil, st.blockDecode(ctx, err, rel, j)
			}
			row[j] = d
		default:
			return nil, st.blockDecode(ctx, errcode.New(errcode.ConnectorDecodeError, "value format %q", c.DataType), rel, j)
		}
	}
	if len(unchanged) > 0 {
		key := oldKey
		if key == nil {
			key = keyOf(rel.mirror, row)
		}
		prev, err := st.current(ctx, rel.mirror, key)
		if err != nil {
			return nil, err
		}
		if prev == nil {
			return nil, blocked(errcode.New(errcode.ConnectorDecodeError, "an update of upstream table %s.%s kept a stored value of a row the mirror lacks", rel.mirror.Upstream.Schema, rel.mirror.Upstream.Table))
		}
		for _, j := range unchanged {
			row[j] = prev[j]
		}
	}
	return row, nil
}

func (st *stream) blockDecode(ctx context.Context, err error, rel *relation, col int) error {
	if ferr := st.flush(ctx); ferr != nil {
		return ferr
	}
	up := rel.mirror.Upstream
	return blocked(errcode.Wrap(errcode.ConnectorDecodeError, err, "cannot read column %q of upstream table %s.%s as %s", rel.mirror.Columns[col].Name, up.Schema, up.Table, rel.mirror.Columns[col].Type.SQLName()))
}

// decodeKey reads the primary key out of an old tuple (key or full row).
func (st *stream) decodeKey(rel *relation, tuple *pglogrepl.TupleData) (types.Row, error) {
	if tuple == nil {
		return nil, errcode.New(errcode.ConnectorDecodeError, "the upstream sent a change of %s.%s without its key", rel.mirror.Upstream.Schema, rel.mirror.Upstream.Table)
	}
	row := make(types.Row, len(rel.mirror.Columns))
	for i, c := range tuple.Columns {
		j := rel.columnOf[i]
		if j < 0 || !inKey(rel.mirror, j) || c.DataType != pglogrepl.TupleDataTypeText {
			continue
		}
		d, err := types.Parse(rel.mirror.Columns[j].Type, string(c.Data), nil)
		if err != nil {
			return nil, blocked(errcode.Wrap(errcode.ConnectorDecodeError, err, "cannot read key column %q", rel.mirror.Columns[j].Name))
		}
		row[j] = d
	}
	return keyOf(rel.mirror, row), nil
}

// current is a mirror row as the writes so far leave it: the transaction
// being received, then the pending ones, then the shard.
func (st *stream) current(ctx context.Context, rel *catalog.Relation, key types.Row) (types.Row, error) {
	for _, writes := range [][]shard.RowWrite{st.txn, st.pending} {
		for i := len(writes) - 1; i >= 0; i-- {
			if w := writes[i]; w.Table == rel.ID && sameKey(rel, w.Key, key) {
				return w.Row, nil
			}
		}
	}
	return st.src.cfg.Sink.Lookup(ctx, rel.ID, key)
}

// truncate deletes every row of the truncated mirrors: the pending
// transactions commit first, so the shard's rows plus this transaction's
// writes are all there is.
func (st *stream) truncate(ctx context.Context, m *pglogrepl.TruncateMessage) error {
	if err := st.flush(ctx); err != nil {
		return err
	}
	for _, id := range m.RelationIDs {
		rel, err := st.relationOf(id)
		if err != nil {
			return err
		}
		if rel.mirror == nil {
			continue
		}
		rows, err := st.src.cfg.Sink.Rows(ctx, rel.mirror.ID)
		if err != nil {
			return err
		}
		var keys []types.Row
		for _, row := range rows {
			keys = append(keys, keyOf(rel.mirror, row))
		}
		for _, w := range st.txn {
			if w.Table == rel.mirror.ID && w.Row != nil {
				keys = append(keys, w.Key)
			}
		}
		for _, k := range keys {
			if err := st.write(shard.RowWrite{Table: rel.mirror.ID, Key: k}); err != nil {
				return err
			}
		}
	}
	return nil
}

func sameKey(rel *catalog.Relation, a, b types.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i, c := range rel.PrimaryKey {
		if !types.Equal(rel.Columns[c].Type, a[i], b[i]) {
			return false
		}
	}
	return true
}
