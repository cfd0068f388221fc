package shard

import (
	"bytes"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/runtime"
)

// A view shard's backfill of a view that reads only tables (and no
// temporal filter) feeds the exported rows to the view's circuit as they
// arrive, instead of staging them in its store first (export.go): staged,
// each row was written (WAL, memtable, then L0 and compaction), scanned
// back, and deleted at the end with a scan and a tombstone per row, about
// half of a two-shard backfill's CPU.
//
//	view shard                             table shard
//	ExportRequest ──────────────────────►  pin at E
//	  ◄── ExportChunk{E, seq 1, rows}
//	held until the backfill's chunks feed its rows to the circuit
//	(at most one unfed chunk per table shard: it is acknowledged once
//	fed, and the table shard sends the next one on the acknowledgement)
//	ExportAck{seq 1} ──────────────────►
//	  ◄── ExportChunk{E, seq n, Last}
//	fed; frontier stepped to E; catching up as any backfill
//
// The circuit steps on the rows in the order they arrive: by table, in key
// order, the parts of several table shards interleaved. Any order gives
// the same state (the operators are incremental), and the chunks are the
// same size as those of a scan.
//
// Crash: the view's state is built in memory or in the store as for any
// backfill, so a crash leaves what an interrupted backfill leaves (the
// attempt record, partial state), and the restarted backfill drops it and
// asks for the tables again. An attempt lost without a crash (no chunk
// and no row fed for exportTimeout: the table shard restarted) cannot
// simply be asked again: the rows fed so far would be fed twice. Its
// partial state is dropped and the fill starts over (restartExport).

// exportedChunk is a received export chunk not yet fed whole.
type exportedChunk struct {
	from         runtime.ActorID
	seq          uint64
	last         bool
	keys, values [][]byte
	// next is the first row not fed yet.
	next int
}

// streamsExport reports whether b's view is filled from its export as it
// arrives: it reads only tables and has no temporal filter, so its inputs
// at the export's epoch are the exported rows alone, and the steps of the
// shard's other views go on meanwhile (stagesAside).
func (a *Actor) streamsExport(b *backfill) bool {
	if b.view.temporal || len(b.view.sources) == 0 {
		return false
	}
	if a.partitioned() {
		// NB: not yet over several table shards' exports: after a kill
		// -9 during CREATE, the view shard stopped receiving epochs
		// (TestCrashKill9Partitioned: reads of the view failed 57P03).
		return false
	}
	return len(a.tableSources(b.view)) == len(b.view.sources)
}

// streamExportChunk keeps a received chunk of a streamed export until the
// backfill's chunks feed it (its acknowledgement waits for that).
func (a *Actor) streamExportChunk(ctx runtime.Context, b *backfill, m ExportChunk, src *remoteSource) {
	r := b.remote
	// NB: a part of a spread view keeps the rows it maintains when they
	// are fed (installedView.trimDelta, on the decoded columns), not here
	// as staging does (stagedKeep decodes each row once more).
	c := exportedChunk{from: ctx.From(), seq: m.Seq, last: m.Last, keys: m.Keys, values: m.Values}
	r.staged += int64(len(c.keys))
	r.pending = append(r.pending, c)
	if src != nil {
		// One of several table shards' parts (exportparts.go).
		r.seq++ // progress, for exportTick
		src.seq, src.done = m.Seq, m.Last
		r.done = true
		for _, s := range r.sources {
			r.done = r.done && s.done
		}
	} else {
		r.epoch, r.known, r.seq, r.done = m.Epoch, true, m.Seq, m.Last
	}
	a.scheduleBackfill(ctx)
}

// startStream starts feeding a streamed export once a chunk of it is
// there: the backfill is from the export's epoch. It reports false while
// none is.
func (a *Actor) startStream(ctx runtime.Context, b *backfill) bool {
	r := b.remote
	if len(r.pending) == 0 {
		return false
	}
	// NB: the inputs are the export's rows, never read from a store: the
	// reader only marks the backfill started (the first step, the state
	// to drop if it is abandoned).
	b.reader, b.release = kv.NewMemory(), func() {}
	b.from, b.fromTime = r.epoch, a.frontierTime
	ctx.Logger().Info("view backfill started from the exported tables as they arrive", "view", b.view.rel.Name, "frontier", b.from)
	a.replayWaitingReads(ctx)
	return true
}

// streamWaiting runs before a streamed backfill's chunk once it started:
// with no chunk to feed it reports that the backfill waits (for the
// next chunk, or for the frames up to the export's epoch); with every
// chunk fed and the frontier at the epoch it marks the rows scanned.
func (a *Actor) streamWaiting(ctx runtime.Context, b *backfill) (bool, error) {
	r := b.remote
	if b.scanned || len(r.pending) > 0 {
		return false, nil
	}
	if !r.done {
		return true, nil
	}
	// INVARIANT: the steps since the export's epoch buffered the view's
	// deltas; the view joins the steps only once the frontier is there.
	if err := a.stepTo(ctx, r.epoch); err != nil {
		return false, err
	}
	if a.frontier < r.epoch {
		return true, nil // the frames up to the epoch are on their way
	}
	b.scanned = true
	return false, nil
}

// stepTo runs epoch steps toward epoch (as far as the step target lets
// them).
func (a *Actor) stepTo(ctx runtime.Context, epoch uint64) error {
	for a.frontier < epoch && a.frontier < a.stepTarget() {
		before := a.frontier
		if err := a.step(ctx); err != nil {
			return err
		}
		// INVARIANT: a step makes progress or fails.
		if a.frontier <= before {
			return errcode.New(errcode.InternalError, "epoch step made no progress at frontier %d", before)
		}
	}
	return nil
}

// streamBackfill moves up to rowsPerChunk received rows into inputs. A
// chunk stops at a change of table when the held state is to be ingested
// before the next source (spillBeforeNextSource), as a scan's does. The
// chunks fed whole are acknowledged once the step's batch is applied
// (ackFedChunks): a chunk refused for memory is fed again, smaller.
func (a *Actor) streamBackfill(b *backfill, inputs map[circuit.SourceID]zset.Delta) error {
	r := b.remote
	v := b.view
	budget := b.rowsPerChunk
	prefixes := make([][]byte, len(v.sources))
	decs := make([]scanDecoder, len(v.sources))
	counts := make([]int, len(v.sources))
	for j := 0; budget > 0 && j < len(r.pending); j++ {
		c := &r.pending[j]
		for ; c.next < len(c.keys) && budget > 0; c.next++ {
			k := c.keys[c.next]
			i, err := a.streamSource(b, prefixes, k)
			if err != nil {
				return err
			}
			if i != b.source {
				b.source = i
				if b.state != nil && b.state.spillBeforeNextSource() {
					// The next chunk ingests the held state before this
					// source is fed (backfillSpillEntriesMin).
					b.state.flush = true
					budget = 0
					break
				}
			}
			if decs[i] == nil {
				_, dec, err := a.backfillDecoder(v, v.sources[i])
				if err != nil {
					return err
				}
				dec.grow(min(budget, len(c.keys)-c.next))
				decs[i] = dec
			}
			if err := decs[i].add(k[len(prefixes[i]):], c.values[c.next]); err != nil {
				return err
			}
			counts[i]++
			budget--
		}
	}
	for i, dec := range decs {
		if dec == nil {
			continue
		}
		s := v.sources[i]
		trimmed := v.trimDelta(s, dec.delta())
		inputs[SourceID(s)] = trimmed
		b.rowsRead += int64(counts[i])
		r.fed += uint64(counts[i])
		if _, ok := dec.(tableScan); ok && trimmed.Columnar() {
			a.stats.BackfillColumnarRows += uint64(counts[i])
		}
	}
	return nil
}

// streamPositions are the feeding positions of b's received chunks (nil:
// b is not streamed), for rewindStream.
func streamPositions(b *backfill) []int {
	if b.remote == nil || !b.remote.stream {
		return nil
	}
	out := make([]int, len(b.remote.pending))
	for i, c := range b.remote.pending {
		out[i] = c.next
	}
	return out
}

// rewindStream puts b's received chunks back at positions
// (streamPositions), so a chunk refused for memory is fed again.
func rewindStream(b *backfill, positions []int) {
	if b.remote == nil || !b.remote.stream {
		return
	}
	for i := range positions {
		b.remote.pending[i].next = positions[i]
	}
}

// ackFedChunks acknowledges the received chunks fed whole (their rows are
// in the applied state): the table shards send the next ones.
func (a *Actor) ackFedChunks(ctx runtime.Context, b *backfill) {
	r := b.remote
	if r == nil || !r.stream {
		return
	}
	n := 0
	for n < len(r.pending) && r.pending[n].next == len(r.pending[n].keys) {
		if c := r.pending[n]; !c.last {
			ctx.Send(c.from, ExportAck{View: b.view.rel.ID, Attempt: r.attempt, Seq: c.seq})
		}
		n++
	}
	clear(r.pending[:n])
	r.pending = r.pending[n:]
}

// streamSource is the index in b's sources of the table exported key k
// belongs to; prefixes caches the sources' key prefixes.
func (a *Actor) streamSource(b *backfill, prefixes [][]byte, k []byte) (int, error) {
	for i, s := range b.view.sources {
		if prefixes[i] == nil {
			prefixes[i] = tablePrefix(s)
		}
		if bytes.HasPrefix(k, prefixes[i]) {
			return i, nil
		}
	}
	return 0, corrupt("an exported row of key %x belongs to none of the tables of view %s", k, b.view.rel.Name)
}

// restartExport asks for a lost export again. Rows of a streamed export
// fed already are in the view's partial state (and the deltas buffered
// since the export's epoch are covered by the next export's): both are
// dropped and the fill starts over.
func (a *Actor) restartExport(ctx runtime.Context, b *backfill) error {
	if b.reader != nil {
		// NB: as a backfill abandoned and queued again, with a circuit
		// built afresh (nothing of the lost attempt's steps kept).
		v, err := a.build(a.snap, b.view.rel)
		if err != nil {
			return err
		}
		b.view.circuit.DiscardCaches()
		b.release()
		b.view, b.reader, b.release, b.state = v, nil, nil, nil
		b.source, b.resume, b.scanned, b.rowsRead, b.rowsPerChunk = 0, nil, false, 0, 1
	}
	if b.remote.known {
		if err := a.dropState(b.view.rel.ID); err != nil {
			return err
		}
	}
	return a.startExport(ctx, b, b.remote.tables)
}
