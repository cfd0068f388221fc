package shard

import (
	"math"
	"slices"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/runtime"
)

// stepAll runs epoch steps until the frontier reaches the last epoch
// (as far as the step target lets it).
func (a *Actor) stepAll(ctx runtime.Context) error { return a.stepTo(ctx, math.MaxUint64) }

// step consumes log entries (frontier, frontier+LogEntriesPerStepMax], steps
// every view circuit once on their union, and commits operator state, view
// outputs, the consumed entries' deletion and the new frontier as ONE batch.
func (a *Actor) step(ctx runtime.Context) error {
	if a.frontier >= a.stepTarget() {
		return nil
	}
	if a.snap == nil {
		// No catalog yet (still starting): nothing can be maintained; the
		// startup SyncCatalog runs the step.
		return nil
	}
	// The view shards' acknowledgements decide which log entries the
	// step may delete (exchange.go).
	if err := a.exchangePeers(ctx); err != nil {
		return err
	}
	start := a.now()
	// NB: stepEntries bounds the entries one step consumes.
	upTo := a.stepTarget()
	if a.runsSpreadViews() {
		// Every shard ends a step at each multiple of SpreadStepEvery, so
		// a spread view's parts all know their state there (the edge of a
		// subscription merges them there, actors/subscriber).
		upTo = min(upTo, (a.frontier/SpreadStepEvery+1)*SpreadStepEvery)
	}
	if a.hasUppers() {
		// The step ends where the other shards' lower stages ended one
		// (stages.go); stepEntries takes every epoch up to it.
		end, ok := a.stageStepEnd(min(upTo, a.frontier+uint64(a.cfg.LogEntriesPerStepMax)))
		if !ok {
			return errcode.New(errcode.InternalError, "no step of the lower stages ends in epochs (%d, %d]", a.frontier, upTo)
		}
		upTo = end
	}
	// NB: one decoder per table accumulates its rows over the step's
	// entries, in columnar form when every view reading it steps columns.
	decoders := map[catalog.ID]deltaDecoder{}
	// NB: only the tables a view or backfill here reads are decoded: a
	// table shard whose views all run on view shards skips every row.
	read := a.tablesReadHere()
	decoderOf := func(id catalog.ID) (deltaDecoder, bool) {
		if d, ok := decoders[id]; ok {
			return d, true
		}
		if !read[id] {
			return nil, false
		}
		d, ok := a.newDecoder(id)
		if ok {
			decoders[id] = d
		}
		return d, ok
	}
	// The step's time (epochtime.go): its last entry's, never earlier
	// than the frontier's.
	stepTime := a.frontierTime
	// The step's watermarks (watermark.go): the largest each table's
	// entries carry, never lower than the frontier's.
	// NB: a copy, adopted once the step's batch is applied.
	marks := a.stepWatermarks()
	var movedMarks []logWatermark
	onMark := func(m logWatermark) {
		if raiseMark(&marks, m.table, m.at) {
			movedMarks = append(movedMarks, m)
		}
	}
	// NB: the entries are read and decoded before the step's Txn is made,
	// so it is sized for what this step's rows will write (stepWritesHint).
	entries, upTo, err := a.stepEntries(a.store, upTo)
	if err != nil {
		return err
	}
	var consumed []uint64
	for _, en := range entries {
		at, err := decodeLogMarks(en.v, a.snap.Namespace(), decoderOf, onMark)
		if err != nil {
			return err
		}
		stepTime = max(stepTime, at)
		if len(a.exchange.out) > 0 {
			// The view shards may not have it yet: gcExchangedLog
			// deletes it once they all have (exchange.go).
			continue
		}
		if !en.stored {
			continue // taken from a frame, never stored
		}
		consumed = append(consumed, en.epoch)
	}
	tableDeltas := make(map[catalog.ID]zset.Delta, len(decoders))
	logRows := 0
	for id, d := range decoders { //lint:maprange copied into a map keyed the same way; the sum is order-free
		tableDeltas[id] = d.delta()
		logRows += tableDeltas[id].Len()
	}
	txn := kv.NewTxnSized(a.store, a.stepWritesHint(logRows))
	for _, e := range consumed {
		if err := txn.Delete(logKey(e)); err != nil {
			return err
		}
	}
	if !a.isTableShard() && upTo > a.exchange.storedLast {
		// The last epoch read back at open is never below the frontier
		// (the entries past the frontier come again from the table shard).
		if err := putUint64(txn, lastEpochKey(), upTo); err != nil {
			return err
		}
	}
	runtime.Report(ctx, runtime.WorkLogRow, logRows)
	viewDeltas := map[catalog.ID]zset.Delta{}
	// uppers are the upper stages of staged views this step takes the
	// lower stages' outputs into (stages.go).
	var uppers, restart []*installedView
	for _, v := range a.views {
		var inputs map[circuit.SourceID]zset.Delta
		if v.upper != nil {
			batches, err := a.upperInputs(v, upTo)
			if err != nil {
				return err
			}
			if batches == nil {
				if v.upper.valid {
					// Cannot happen: a started upper stage steps at every
					// step (stageStepEnd), and its own lower stages fail
					// with it (failMaintained). Were it to, it starts over.
					restart = append(restart, v)
				}
				continue
			}
			for id := range batches { //lint:maprange adding to each entry, order-free
				if d, ok := viewDeltas[id]; ok {
					b := batches[id]
					b.AddBatch(d.Batch(), 1)
					batches[id] = b
				}
			}
			inputs = v.firstInputs(batches)
			uppers = append(uppers, v)
		} else {
			inputs = v.stepInputs(tableDeltas, viewDeltas)
		}
		// NB: a view with a temporal filter steps as time passes, also
		// with no input: its rows leave when their time comes.
		if len(inputs) == 0 && !(v.temporal && stepTime > a.frontierTime) {
			continue
		}
		v.circuit.SetNow(stepTime)
		v.circuit.SetWatermarks(marks)
		runtime.Report(ctx, runtime.WorkStepRow, deltaRows(inputs))
		outs, err := v.circuit.StepDeltas(txn, inputs)
		if err != nil {
			a.discardCaches()
			if viewFault(err) {
				// The same deltas would be refused again: the view fails
				// (and the views reading it), the step runs again without
				// them, and every other view and commit goes on.
				if err := a.failMaintained(ctx, v, err); err != nil {
					return err
				}
				return a.step(ctx)
			}
			return errcode.Wrap(errcode.ShardUnavailable, err, "maintaining view %s", v.rel.Name)
		}
		if d, ok := outs[ViewID(v.rel.ID)]; ok {
			viewDeltas[v.rel.ID] = d
		}
	}
	// The view being backfilled gets its inputs stored, to be stepped on
	// once its backfill has fed its pinned inputs (backfill.go).
	if err := a.bufferBackfillDeltas(txn, upTo, tableDeltas, viewDeltas); err != nil {
		return err
	}
	// The history entries (history.go) go in the step's batch: a view's
	// output and its history never disagree after a crash.
	outputs := a.outputDeltas(viewDeltas)
	if err := a.writeHistory(txn, upTo, outputs); err != nil {
		return err
	}
	floors, err := a.pruneHistory(txn)
	if err != nil {
		return err
	}
	if err := writeStepMarks(txn, movedMarks); err != nil {
		return err
	}
	if err := putUint64(txn, frontierKey(), upTo); err != nil {
		return err
	}
	if stepTime != a.frontierTime {
		if err := putTime(txn, frontierTimeKey(), stepTime); err != nil {
			return err
		}
	}
	batch := txn.Batch()
	a.lastStepWrites = batch.Len()
	if logRows > 0 {
		a.lastStepRows, a.lastRowStepWrites = logRows, batch.Len()
	}
	// NB: an epoch step need not be durable before anyone proceeds: its
	// inputs (the delta log) are durable, and the step is a deterministic
	// function of them, so a step lost in a crash is recomputed identically
	// from the log on restart. Writing it without waiting halves the
	// synchronous object-store writes per commit.
	if err := a.applyNoWait(batch); err != nil {
		a.discardCaches()
		a.poison(err)
		return errcode.Wrap(errcode.ShardUnavailable, err, "epoch %d was not made durable", upTo)
	}
	// INVARIANT: frontiers never go backwards.
	if upTo < a.frontier {
		panic("shard: frontier went backwards")
	}
	prev := a.frontier
	a.frontier, a.frontierTime = upTo, stepTime
	a.dropTaken(prev, upTo)
	for _, v := range uppers {
		a.consumedUpper(ctx, v, upTo)
	}
	for _, v := range restart {
		ctx.Logger().Error("the upper stage of a staged view missed a step: starting it over", "view", v.rel.Name)
		a.restartUpper(ctx, v)
	}
	a.sendStageDeltas(ctx, prev, upTo, viewDeltas)
	a.stepMarks = marks
	a.lastEpochTime = max(a.lastEpochTime, stepTime)
	for _, v := range a.views {
		if f, ok := floors[v.rel.ID]; ok {
			v.history.floor = f
		}
	}
	a.stats.EpochSteps++
	a.stats.StateWrites += uint64(batch.Len())
	a.stats.StepNanos = a.now() - start
	a.publish(ctx, prev, outputs)
	if err := a.gcExchangedLog(); err != nil {
		return errcode.Wrap(errcode.ShardUnavailable, err, "collecting the exchanged delta log")
	}
	a.reportFrontier(ctx)
	if a.frontier < a.stepTarget() {
		a.scheduleStep(ctx)
	}
	return nil
}

// stepEntry is one log entry an epoch step consumes: stored in this
// shard's store, or taken from an exchange frame.
type stepEntry struct {
	epoch  uint64
	v      []byte
	stored bool
}

// stepEntries are the log entries of epochs (frontier, upTo], in epoch
// order (an epoch's from several table shards in the order of their
// ids), and the epoch the step ends at: upTo, or lower when the entries of
// a sparse log reached LogEntriesPerStepMax.
func (a *Actor) stepEntries(r kv.Reader, upTo uint64) ([]stepEntry, uint64, error) {
	var out []stepEntry
	switch {
	case !a.isTableShard() && a.exchange.in != nil:
		// A view shard of a partitioned layout: the entries taken from
		// every table shard, sparse.
		epochs := make([]uint64, 0, len(a.exchange.takenFrom))
		for e := range a.exchange.takenFrom { //lint:maprange sorted below
			if e > a.frontier && e <= upTo {
				epochs = append(epochs, e)
			}
		}
		slices.Sort(epochs)
		for i, e := range epochs {
			if i > 0 && len(out) >= a.cfg.LogEntriesPerStepMax {
				return out, epochs[i-1], nil
			}
			for _, v := range a.exchange.takenFrom[e] {
				out = append(out, stepEntry{epoch: e, v: v})
			}
		}
		return out, upTo, nil
	case a.isTableShard() && a.partitioned():
		// A table shard of a partitioned layout: its own entries, sparse.
		end := upTo
		err := scanLog(r, a.frontier, upTo, func(e uint64, v []byte) error {
			if len(out) >= a.cfg.LogEntriesPerStepMax {
				end = out[len(out)-1].epoch
				return kv.ErrStop
			}
			out = append(out, stepEntry{epoch: e, v: v, stored: true})
			return nil
		})
		return out, end, err
	}
	upTo = min(upTo, a.frontier+uint64(a.cfg.LogEntriesPerStepMax))
	for e := a.frontier + 1; e <= upTo; e++ {
		v, ok := a.exchange.taken[e]
		var err error
		if !ok {
			v, ok, err = r.Get(logKey(e))
		}
		if err != nil {
			return nil, 0, err
		}
		// INVARIANT: every epoch in (frontier, last] has a log entry.
		if !ok {
			return nil, 0, corrupt("delta log entry for epoch %d is missing (frontier %d, last %d)", e, a.frontier, a.lastEpoch)
		}
		// NB: an entry a view shard read back was stored by an earlier
		// build (storedLast); it goes with the step.
		out = append(out, stepEntry{epoch: e, v: v, stored: a.isTableShard() || e <= a.exchange.storedLast})
	}
	return out, upTo, nil
}

// stepWritesHint is how many writes a step over rows input rows is
// expected to make: as many per row as the last step with input rows made
// (the state and outputs of the views here), and at least the last step's.
// NB: sized from the last step alone, a step after a step with no rows
// (a commit to a table no view here reads) grew its Txn by doubling, a
// tenth of a large step's time (bench ivm 10% change).
func (a *Actor) stepWritesHint(rows int) int {
	hint := a.lastStepWrites
	if rows > 0 && a.lastStepRows > 0 {
		hint = max(hint, int(int64(rows)*int64(a.lastRowStepWrites)/int64(a.lastStepRows)))
	}
	return hint
}

// dropTaken forgets the entries taken from frames that a step through
// upTo consumed.
func (a *Actor) dropTaken(prev, upTo uint64) {
	if a.exchange.in != nil {
		for e := range a.exchange.takenFrom { //lint:maprange deleting, order-free
			if e <= upTo {
				delete(a.exchange.takenFrom, e)
			}
		}
		return
	}
	for e := prev + 1; e <= upTo; e++ {
		delete(a.exchange.taken, e)
	}
}

// stepInputs are a view's input deltas of one step: its tables' (trimmed
// to the columns it was planned with) and the output deltas of the views
// it reads, computed earlier in the same step.
func (v *installedView) stepInputs(tableDeltas, viewDeltas map[catalog.ID]zset.Delta) map[circuit.SourceID]zset.Delta {
	inputs := map[circuit.SourceID]zset.Delta{}
	for _, s := range v.sources {
		if d, ok := tableDeltas[s]; ok {
			inputs[SourceID(s)] = v.trimDelta(s, d)
		} else if d, ok := viewDeltas[s]; ok {
			inputs[SourceID(s)] = d
		}
	}
	return inputs
}

// tablesReadHere are the relations the views and backfills of this shard
// read.
func (a *Actor) tablesReadHere() map[catalog.ID]bool {
	read := map[catalog.ID]bool{}
	for _, v := range a.views {
		for _, s := range v.sources {
			read[s] = true
		}
	}
	for _, b := range a.backfills {
		for _, s := range b.view.sources {
			read[s] = true
		}
	}
	return read
}

// deltaRows is the number of rows of a circuit's inputs (the cost
// model's step rows, runtime.WorkStepRow).
func deltaRows[K comparable, D interface{ Len() int }](inputs map[K]D) int {
	n := 0
	for _, d := range inputs { //lint:maprange a sum, order-free
		n += d.Len()
	}
	return n
}

func (a *Actor) discardCaches() {
	for _, v := range a.views {
		v.circuit.DiscardCaches()
	}
}

// NoWaitApplier is implemented by stores that can apply a batch without
// waiting for durability (it becomes durable with the next durable write).
type NoWaitApplier interface {
	ApplyNoWait(b *kv.WriteBatch) error
}

func (a *Actor) applyNoWait(b *kv.WriteBatch) error {
	if s, ok := a.store.(NoWaitApplier); ok {
		return s.ApplyNoWait(b)
	}
	return a.store.Apply(b)
}
