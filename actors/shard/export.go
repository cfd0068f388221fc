package shard

import (
	"bytes"
	"time"

	"github.com/rockstream/rockstream/internal/assert"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
)

// An export fills a view on a view shard (placement.go) from the tables on
// the table shard. The view shard's backfill (backfill.go) asks for its
// input tables; the table shard makes its commits durable, pins a snapshot
// at its last epoch E and streams the tables' stored rows, one chunk per
// acknowledgement (so at most one chunk per export is in memory). The view
// shard stages the rows under the same keys in its own store, which holds
// no tables of its own, pins, and backfills from the staged rows as the
// table shard would from its own. Its other views step on meanwhile: no
// step straddles E, and the steps past E buffer the view's input deltas,
// as for any backfill (stagesAside); a view that reads a materialized view
// of this shard or has a temporal filter holds the steps at exactly E
// until it is pinned instead. The staged rows are deleted when the
// backfill ends.
//
//	view shard                         table shard
//	ExportRequest{view, tables, attempt} ──►  sync; pin at E
//	  ◄── ExportChunk{E, seq 1, rows}
//	stage rows; ExportAck{seq 1} ──►      (other views step; past E the
//	  ◄── ExportChunk{E, seq 2, rows, Last}    view's deltas are buffered)
//	stage; pin; backfill from E as usual
//
// Until the first chunk names E, the view shard steps nothing (it does not
// know where E is), and reads that need later epochs wait. A chunk that
// does not continue the current attempt is ignored; an attempt without
// progress for exportTimeout starts again.
type (
	// ExportRequest (view shard → table shard) asks for the stored rows
	// of Tables, for the backfill of View. → ExportChunk messages.
	//
	// Pause: a partitioned layout's first step (exportparts.go), answered
	// with ExportPaused.
	ExportRequest struct {
		CatalogVersion uint64
		View           catalog.ID
		Tables         []catalog.ID
		Attempt        uint64
		Pause          bool
	}
	// ExportChunk (table shard → view shard) carries stored table rows
	// (keys and values as the table shard stores them) as of Epoch.
	ExportChunk struct {
		View    catalog.ID
		Attempt uint64
		Epoch   uint64
		Seq     uint64
		Keys    [][]byte
		Values  [][]byte
		Last    bool
	}
	// ExportAck (view shard → table shard): chunk Seq is staged; send the
	// next.
	ExportAck struct {
		View    catalog.ID
		Attempt uint64
		Seq     uint64
	}
)

// exportTick checks an attempt's progress on the view shard.
type exportTick struct {
	View    catalog.ID
	Attempt uint64
}

// Export limits. Simulation range: fixed.
const (
	exportChunkRowsMax  = 4096
	exportChunkBytesMax = 1 << 20
	exportTimeout       = 10 * time.Second
	// exportArenaBytes is the first size of a chunk's row buffer (it
	// grows to the chunk's rows, at most about exportChunkBytesMax).
	exportArenaBytes = 64 << 10
)

// export is the table shard's state of one export.
type export struct {
	to      runtime.ActorID
	view    catalog.ID
	attempt uint64
	epoch   uint64
	reader  kv.Reader
	release func()
	tables  []catalog.ID
	table   int
	resume  []byte
	seq     uint64
}

// remoteInputs is a view shard's backfill's state of its export.
type remoteInputs struct {
	attempt uint64
	tables  []catalog.ID
	// epoch is the export's epoch, known from the first chunk.
	epoch uint64
	known bool
	seq   uint64
	// staged counts the rows staged so far (the fill's progress).
	staged int64
	done   bool
	// seqAtTick is seq at the last exportTick: no progress since means
	// the attempt is lost.
	seqAtTick uint64
	// sources are the table shards of a partitioned layout, each
	// exporting its part (exportparts.go); nil: the table shard alone.
	sources []remoteSource
	// stream: the rows are fed to the view's circuit as they arrive
	// (exportstream.go), not staged; pending are the chunks received and
	// not yet fed whole, and fed counts the rows fed (progress, for
	// exportTick).
	stream  bool
	pending []exportedChunk
	fed     uint64
}

func (a *Actor) dropExports() {
	for _, x := range a.exports {
		x.release()
	}
	a.exports = nil
}

// receiveExportRequest starts an export (replacing an earlier attempt for
// the same view shard and view).
func (a *Actor) receiveExportRequest(ctx runtime.Context, m ExportRequest, from runtime.ActorID) {
	if !a.isTableShard() {
		ctx.Logger().Error("a view shard got an export request", "from", from)
		return
	}
	if m.Pause {
		a.receiveExportPause(ctx, m, from)
		return
	}
	for i, x := range a.exports {
		if x.to == from && x.view == m.View {
			x.release()
			a.exports = append(a.exports[:i], a.exports[i+1:]...)
			break
		}
	}
	// The rows exported must be durable: a view shard must never show
	// an epoch a crash of the table shard can take back.
	if s, ok := a.store.(Syncer); ok && a.durableEpoch < a.lastEpoch {
		if err := s.Sync(); err != nil {
			a.poison(err)
			return
		}
		a.durableEpoch = a.lastEpoch
		a.durableFrontier = a.frontier
	}
	reader, release := a.pinInputs()
	x := &export{to: from, view: m.View, attempt: m.Attempt, epoch: a.lastEpoch, reader: reader, release: release, tables: m.Tables}
	a.exports = append(a.exports, x)
	ctx.Logger().Info("exporting tables for a view backfill", "view", m.View, "to", from, "epoch", x.epoch)
	a.sendExportChunk(ctx, x)
}

// sendExportChunk sends export x's next chunk; the last one ends it.
func (a *Actor) sendExportChunk(ctx runtime.Context, x *export) {
	c := ExportChunk{View: x.view, Attempt: x.attempt, Epoch: x.epoch}
	bytes := 0
	// NB: the rows are copied into one buffer per chunk (keys and values
	// slice it), not two allocations a row; a buffer that grows leaves
	// the slices taken so far on its old array, where they stay valid.
	var arena []byte
	for x.table < len(x.tables) {
		prefix := tablePrefix(x.tables[x.table])
		start := x.resume
		if start == nil {
			start = prefix
		}
		var next []byte
		err := scanOnce(x.reader)(start, kv.PrefixEnd(prefix), func(k, v []byte) error {
			if len(c.Keys) >= exportChunkRowsMax || bytes >= exportChunkBytesMax {
				next = append([]byte(nil), k...)
				return kv.ErrStop
			}
			if arena == nil {
				arena = make([]byte, 0, exportArenaBytes)
			}
			at := len(arena)
			arena = append(append(arena, k...), v...)
			c.Keys = append(c.Keys, arena[at:at+len(k):at+len(k)])
			c.Values = append(c.Values, arena[at+len(k):len(arena):len(arena)])
			bytes += len(k) + len(v)
			return nil
		})
		if err != nil {
			ctx.Logger().Error("reading tables for an export", "view", x.view, "err", err)
			a.endExport(x)
			return
		}
		if next != nil {
			x.resume = next
			break
		}
		x.table, x.resume = x.table+1, nil
	}
	x.seq++
	c.Seq = x.seq
	c.Last = x.table >= len(x.tables)
	ctx.Send(x.to, c)
	if c.Last {
		a.endExport(x)
	}
}

func (a *Actor) endExport(x *export) {
	for i, y := range a.exports {
		if y == x {
			x.release()
			a.exports = append(a.exports[:i], a.exports[i+1:]...)
			return
		}
	}
}

func (a *Actor) receiveExportAck(ctx runtime.Context, m ExportAck, from runtime.ActorID) {
	for _, x := range a.exports {
		if x.to == from && x.view == m.View && x.attempt == m.Attempt && x.seq == m.Seq {
			a.sendExportChunk(ctx, x)
			return
		}
	}
}

// tableSources are the tables (and sources) of a view's inputs.
func (a *Actor) tableSources(v *installedView) []catalog.ID {
	var ids []catalog.ID
	for _, s := range v.sources {
		if rel, ok := a.snap.RelationByID(s); ok && rel.Kind != catalog.KindMaterializedView {
			ids = append(ids, s)
		}
	}
	return ids
}

// remoteBackfill runs on a view shard before a backfill's first chunk:
// it starts the export of the view's tables, and once they are staged and
// the frontier is at the export's epoch, it pins the inputs. remote
// reports that the view shard's flow applies (the inputs are pinned when
// waiting is false); waiting, that the backfill waits for the export or
// for frames.
func (a *Actor) remoteBackfill(ctx runtime.Context, b *backfill) (remote, waiting bool, err error) {
	if a.isTableShard() {
		return false, false, nil
	}
	tables := a.tableSources(b.view)
	if len(tables) == 0 && b.remote == nil {
		return false, false, nil
	}
	if b.remote == nil {
		if err := a.prepareBackfill(ctx, b); err != nil {
			return true, false, err
		}
		if err := a.startExport(ctx, b, tables); err != nil {
			return true, false, err
		}
		return true, true, nil
	}
	r := b.remote
	if r.stream {
		return true, !a.startStream(ctx, b), nil
	}
	if !r.done {
		return true, true, nil
	}
	if err := a.stepTo(ctx, r.epoch); err != nil {
		return true, false, err
	}
	if a.frontier < r.epoch {
		return true, true, nil // the frames up to the epoch are on their way
	}
	// INVARIANT: steps stop at the export's epoch (stepTarget), unless
	// they buffer the view's deltas past it (stagesAside).
	assert.That(a.frontier == r.epoch || a.stagesAside(b), "view shard frontier %d passed the export's epoch %d", a.frontier, r.epoch)
	b.reader, b.release = a.pinInputs()
	// The staged rows are the tables at the export's epoch; the steps
	// since buffered the rest (bufferBackfillDeltas).
	b.from, b.fromTime = r.epoch, a.frontierTime
	ctx.Logger().Info("view backfill started from exported tables", "view", b.view.rel.Name, "frontier", b.from)
	a.replayWaitingReads(ctx)
	return true, false, nil
}

// startExport clears rows staged by an earlier attempt and asks the table
// shard for the tables.
func (a *Actor) startExport(ctx runtime.Context, b *backfill, tables []catalog.ID) error {
	if err := a.clearStaged(tables); err != nil {
		return err
	}
	if a.exportAttempts == 0 {
		// NB: attempts of an earlier run of this shard are told apart
		// from this run's by starting at the clock.
		a.exportAttempts = uint64(ctx.Now().UnixNano())
	}
	a.exportAttempts++
	b.remote = &remoteInputs{attempt: a.exportAttempts, tables: tables, stream: a.streamsExport(b)}
	ctx.After(exportTimeout, exportTick{View: b.view.rel.ID, Attempt: b.remote.attempt})
	if a.partitioned() {
		a.startPartitionedExport(ctx, b)
		return nil
	}
	m := a.snap.BucketMap()
	ctx.Send(ActorOf(TableShardOf(m)), ExportRequest{CatalogVersion: a.snap.Version, View: b.view.rel.ID, Tables: tables, Attempt: b.remote.attempt})
	return nil
}

// clearStaged deletes staged table rows (a view shard stores no tables of
// its own, so every table row it holds is staged).
func (a *Actor) clearStaged(tables []catalog.ID) error {
	for _, t := range tables {
		prefix := tablePrefix(t)
		// NB: each round scans on from the last key it deleted: from the
		// prefix again, it walked every earlier round's tombstones
		// (quadratic: 6s of a 7s backfill of 200K rows).
		from := prefix
		for {
			txn := kv.NewTxn(a.store)
			n := 0
			err := a.store.Scan(from, kv.PrefixEnd(prefix), func(k, _ []byte) error {
				if n >= exportChunkRowsMax {
					return kv.ErrStop
				}
				n++
				from = append(append(from[:0:0], k...), 0)
				return txn.Delete(append([]byte(nil), k...))
			})
			if err != nil {
				return err
			}
			if n == 0 {
				break
			}
			if err := a.applyNoWait(txn.Batch()); err != nil {
				a.poison(err)
				return err
			}
		}
	}
	return nil
}

// receiveExportChunk stages a chunk of the current attempt.
func (a *Actor) receiveExportChunk(ctx runtime.Context, m ExportChunk) {
	b := a.backfilling(m.View)
	if b == nil || b.remote == nil || b.remote.attempt != m.Attempt || b.remote.done {
		return
	}
	var src *remoteSource
	if b.remote.sources != nil {
		// One of several table shards' parts (exportparts.go).
		if src = b.remote.sourceOf(ctx.From()); src == nil || m.Seq != src.seq+1 || src.done || m.Epoch != b.remote.epoch {
			return
		}
	} else if m.Seq != b.remote.seq+1 {
		return
	}
	if b.remote.stream {
		a.streamExportChunk(ctx, b, m, src)
		return
	}
	txn := kv.NewTxn(a.store)
	keep := a.stagedKeep(b)
	for i, k := range m.Keys {
		if keep != nil && !keep(k, m.Values[i]) {
			continue
		}
		if err := txn.Put(k, m.Values[i]); err != nil {
			ctx.Logger().Error("staging exported rows", "err", err)
			return
		}
		b.remote.staged++
	}
	a.stats.BackfillRowsStaged += uint64(len(txn.Batch().Ops))
	if err := a.applyNoWait(txn.Batch()); err != nil {
		a.poison(err)
		return
	}
	if src != nil {
		b.remote.seq++ // progress, for exportTick
		src.seq, src.done = m.Seq, m.Last
		if !m.Last {
			ctx.Send(ctx.From(), ExportAck{View: m.View, Attempt: m.Attempt, Seq: m.Seq})
			return
		}
		for _, s := range b.remote.sources {
			if !s.done {
				return
			}
		}
		b.remote.done = true
		a.scheduleBackfill(ctx)
		return
	}
	b.remote.epoch, b.remote.known, b.remote.seq = m.Epoch, true, m.Seq
	if m.Last {
		b.remote.done = true
		a.scheduleBackfill(ctx)
		return
	}
	ctx.Send(ctx.From(), ExportAck{View: m.View, Attempt: m.Attempt, Seq: m.Seq})
}

// stagedKeep selects the exported rows a part of a spread view stages:
// those whose partition key hashes to this shard (nil: every row). The
// others would be staged, scanned and trimmed away (installedView.trim)
// by every part: each would hold the whole tables once.
func (a *Actor) stagedKeep(b *backfill) func(k, v []byte) bool {
	p := b.view.spread
	if p == nil {
		return nil
	}
	type source struct {
		prefix []byte
		codec  tableCodec
		key    SpreadKey
		types  []types.Type
	}
	var sources []source
	width := 0
	for _, t := range b.remote.tables {
		k, ok := p.keys[t]
		codec, known := a.codecOfID(t)
		if !ok || !known {
			continue
		}
		sources = append(sources, source{prefix: tablePrefix(t), codec: codec, key: k, types: p.types[t]})
		width = max(width, len(p.types[t]))
	}
	scratch := make(types.Row, width)
	return func(k, v []byte) bool {
		for _, s := range sources {
			if !bytes.HasPrefix(k, s.prefix) {
				continue
			}
			row, err := s.codec.decode(v)
			if err != nil {
				return true // the backfill reports it
			}
			return p.mine(s.key, s.types, scratch[:len(s.types)], row)
		}
		return true
	}
}

// receiveExportTick starts an attempt again when it made no progress.
func (a *Actor) receiveExportTick(ctx runtime.Context, m exportTick) {
	b := a.backfilling(m.View)
	if b == nil || b.remote == nil || b.remote.attempt != m.Attempt || b.remote.done {
		return
	}
	if progress := b.remote.seq + b.remote.fed; progress != b.remote.seqAtTick {
		b.remote.seqAtTick = progress
		ctx.After(exportTimeout, m)
		return
	}
	ctx.Logger().Info("an export made no progress: asking again", "view", b.view.rel.Name)
	if err := a.restartExport(ctx, b); err != nil {
		ctx.Logger().Error("restarting an export", "view", b.view.rel.Name, "err", err)
	}
}

// stepTarget is the epoch steps may reach: the last epoch, except on a
// view shard whose running backfill waits for an export, where the steps
// stop at the export's epoch (or, before it is known, where they are), so
// the pinned inputs and the frontier describe one epoch, and on a view
// shard with a transaction's pin not taken yet, where they stop at its
// epoch (pins.go).
func (a *Actor) stepTarget() uint64 {
	if b, ok := a.pinBound(); ok {
		// A transaction's pin (pins.go): stop at its epoch first.
		return a.stageBound(min(b, a.backfillStepTarget()))
	}
	// A staged view's upper stage steps to epochs its lower stages'
	// outputs reached on every shard (stages.go).
	return a.stageBound(a.backfillStepTarget())
}

// backfillStepTarget is stepTarget without pins.
func (a *Actor) backfillStepTarget() uint64 {
	if len(a.backfills) > 0 {
		// NB: a streamed export's backfill is fed before the frontier
		// reaches its epoch: the steps stop there all the same.
		if b := a.backfills[0]; b.remote != nil && (b.reader == nil || b.remote.stream && !b.scanned) {
			switch {
			case !b.remote.known:
				return a.frontier
			case a.frontier < b.remote.epoch:
				// No step straddles the export's epoch: the epochs
				// after it are the view's to buffer, the ones before
				// are in the rows exported.
				return min(a.lastEpoch, b.remote.epoch)
			case a.stagesAside(b):
				return a.lastEpoch
			}
			return a.frontier
		}
	}
	return a.lastEpoch
}

// stagesAside reports whether the other views of this view shard step on
// while b's tables are copied (staged) and buffer b's input deltas past the
// export's epoch, as a backfill on the table shard does: b reads only
// tables, whose rows at the epoch are the staged ones. A view reading a
// materialized view of this shard (its state at the epoch is read by the
// fill) or with a temporal filter (filled at the epoch's time) holds the
// steps at the epoch until it is pinned, as before. Without this, a large
// view's copy held every running view of its shard at the export's epoch:
// a session's read of another view waited for the whole copy.
func (a *Actor) stagesAside(b *backfill) bool {
	if b.remote == nil || !b.remote.known || b.view.temporal {
		return false
	}
	for _, s := range b.view.sources {
		if rel, ok := a.snap.RelationByID(s); !ok || rel.Kind == catalog.KindMaterializedView {
			return false
		}
	}
	return true
}

// endStaged deletes a finished or abandoned backfill's staged rows.
func (a *Actor) endStaged(b *backfill) error {
	if b.remote == nil {
		return nil
	}
	tables, stream := b.remote.tables, b.remote.stream
	b.remote = nil
	if stream {
		return nil // nothing staged (startExport cleared what an older version left)
	}
	return a.clearStaged(tables)
}
