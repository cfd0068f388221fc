package shard

import (
	"slices"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/runtime"
)

// Staged views (experimental: engine --exchange-stages). A materialized
// view whose plan needs an exchange between its operators is cut there
// (ivm/sql/dist SplitStages) into lower stages, which run spread over the
// view shards like a spread view (each shard steps them on the input rows
// hashing to it), and an upper stage reading their outputs, which runs on
// the view's home: the first view shard, for every staged view, so no two
// shards wait on each other's outputs.
//
// Each lower stage is a relation of the shard's own (catalog.StageID,
// Relation.StageOf), added to its catalog snapshot (control.Snapshot
// WithHidden), so it is installed, filled, kept and dropped as a spread
// view is. The upper stage is the view itself, whose plan scans them.
//
// The home gathers the lower stages' outputs by generation: it asks every
// other view shard for them (StageSubscribe{Gen}); that shard answers with
// its parts' whole outputs at its frontier (a snapshot), then after every
// step with their deltas over the step's epochs. The upper stage starts
// empty and steps once every shard's snapshot is in, on the sum of the
// snapshots (its own parts' read from its store) and of the deltas up to
// the step's end; from then on each home step ends at an epoch every
// other shard's stream has a step end at (stageBound), and takes their
// deltas up to it. So the upper stage at epoch e is computed from the
// lower stages' outputs at e on every shard:
//
//	shard 2: snapshot@70, Δ(70,128], Δ(128,140]
//	home 1:  frontier 100, own parts read at 100 → steps to 128 (a step end
//	         of shard 2) on: snapshot@70 + Δ(70,128] + its own parts +
//	         its own step's deltas; then to 140.
//
// Nothing of the streams is durable: the lower stages' outputs at an
// epoch are a function of the committed log, so a restarted home drops the
// upper stage's state and subscribes again under a new generation, and a
// restarted lower-stage shard, asked again by the home's tick, answers
// with a snapshot, on which the home starts the upper stage over. Reads
// of the view wait while it is being started.
//
// Not yet: staged views read by other views, SUBSCRIBE and sinks of them
// (refused at CREATE and SUBSCRIBE by the engine), partitioned layouts;
// the upper stage spread too (dist.Stages.UpperSpread), which needs
// shards to step stages at separate frontiers.
type (
	// StageSubscribe (home → view shard): send the outputs of the lower
	// stages of staged view View under generation Gen.
	StageSubscribe struct {
		View catalog.ID
		Gen  uint64
	}
	// StageData (view shard → home): for generation Gen of staged view
	// View, each lower stage's output (Batches, by stage): with Snapshot
	// its whole output at epoch Through, else its delta over epochs
	// (After, Through], a step of the sender. Seq numbers a generation's
	// messages from 0. Failed: a lower stage failed on the sender (its
	// reason), and the stream ends.
	StageData struct {
		View     catalog.ID
		Gen      uint64
		Seq      uint64
		Snapshot bool
		After    uint64
		Through  uint64
		Batches  []zset.Batch
		Failed   string
	}
)

// stageTick asks the lower-stage shards again (a restarted one answers
// with a snapshot).
type stageTick struct{}

// stageStream is a lower-stage shard's stream of a staged view's outputs
// to its home.
type stageStream struct {
	view    catalog.ID
	gen     uint64
	home    runtime.ActorID
	seq     uint64
	started bool
	through uint64
}

// upperStage is the home's state of a staged view's upper stage
// (installedView.upper).
type upperStage struct {
	gen uint64
	// valid: it consumed a snapshot of every shard's lower stages.
	valid bool
	from  []stageIn
}

// stageIn is the home's stream from one other view shard.
type stageIn struct {
	shard    partition.ShardID
	seq      uint64
	snapshot []zset.Batch
	snapAt   uint64
	hasSnap  bool
	consumed bool
	deltas   []StageData
}

// boundaries reports whether the stream has a step end at epoch e
// (its snapshot's epoch, or a delta's end) and whether it has one above.
func (in *stageIn) boundary(e uint64) bool {
	if !in.hasSnap {
		return false
	}
	if !in.consumed && in.snapAt == e {
		return true
	}
	for _, d := range in.deltas {
		if d.Through == e {
			return true
		}
	}
	return false
}

// lastBoundary is the stream's last step end.
func (in *stageIn) lastBoundary() uint64 {
	if n := len(in.deltas); n > 0 {
		return in.deltas[n-1].Through
	}
	return in.snapAt
}

// stagesOf are the lower-stage relations of the staged views of snap
// (its planner's, StagePlanner), to add to it; a view whose stages cannot
// be planned is failed when it is built.
func (a *Actor) stagesOf(snap *control.Snapshot) []*catalog.Relation {
	p, ok := a.cfg.Planner.(StagePlanner)
	if !ok {
		return nil
	}
	var out []*catalog.Relation
	for _, rel := range snap.Relations() {
		if rel.Kind != catalog.KindMaterializedView || !rel.Stages {
			continue
		}
		lowers, err := p.StageRelations(snap, rel)
		if err != nil {
			continue
		}
		out = append(out, lowers...)
	}
	return out
}

// withStages is snap with its staged views' lower stages (stagesOf).
func (a *Actor) withStages(snap *control.Snapshot) *control.Snapshot {
	return snap.WithHidden(a.stagesOf(snap))
}

// stageShards are the shards other than the home running the lower stages
// of a staged view, under bucket map m.
func stageShards(m partition.Map, home partition.ShardID) []partition.ShardID {
	var out []partition.ShardID
	for _, s := range SpreadShardsOf(m) {
		if s != home {
			out = append(out, s)
		}
	}
	return out
}

// lowerStages are the installed lower stages of staged view id, by
// index; ok is false unless every one of them is installed.
func (a *Actor) lowerStages(id catalog.ID) ([]*installedView, bool) {
	var out []*installedView
	for i := 0; ; i++ {
		sid := catalog.StageID(id, i)
		if _, ok := a.snap.RelationByID(sid); !ok {
			return out, len(out) > 0
		}
		v := a.installed(sid)
		if v == nil || a.backfilling(sid) != nil {
			return nil, false
		}
		out = append(out, v)
	}
}

// installUpper installs staged view rel's upper stage on its home, from
// empty (its stored state, of an earlier run, is dropped: the streams it
// was computed from are gone), and subscribes to the lower stages.
func (a *Actor) installUpper(ctx runtime.Context, snap *control.Snapshot, rel *catalog.Relation) error {
	if err := a.dropState(rel.ID); err != nil {
		return err
	}
	v, err := a.build(snap, rel)
	if err != nil {
		a.fail(ctx, rel, err)
		return nil
	}
	v.upper = &upperStage{gen: a.newRequestID(ctx)}
	for _, s := range stageShards(snap.BucketMap(), a.cfg.ID) {
		v.upper.from = append(v.upper.from, stageIn{shard: s})
	}
	if err := a.addView(v); err != nil {
		return err
	}
	a.subscribeStages(ctx, v)
	if !a.stageTicking {
		a.stageTicking = true
		ctx.After(exchangeResendEvery, stageTick{})
	}
	return nil
}

func (a *Actor) subscribeStages(ctx runtime.Context, v *installedView) {
	for _, in := range v.upper.from {
		ctx.Send(ActorOf(in.shard), StageSubscribe{View: v.rel.ID, Gen: v.upper.gen})
	}
}

// restartUpper starts staged view v's upper stage over under a new
// generation (a lower-stage shard restarted, or its stream broke).
func (a *Actor) restartUpper(ctx runtime.Context, v *installedView) {
	i := slices.Index(a.views, v)
	if i < 0 {
		return
	}
	a.views = slices.Delete(a.views, i, i+1)
	if err := a.installUpper(ctx, a.snap, v.rel); err != nil {
		a.poison(err)
	}
}

func (a *Actor) receiveStageTick(ctx runtime.Context) {
	a.stageTicking = false
	any := false
	for _, v := range a.views {
		if v.upper != nil {
			any = true
			a.subscribeStages(ctx, v)
		}
	}
	if any {
		a.stageTicking = true
		ctx.After(exchangeResendEvery, stageTick{})
	}
}

// receiveStageSubscribe starts (or keeps) the stream of a staged view's
// lower stages to its home.
func (a *Actor) receiveStageSubscribe(ctx runtime.Context, m StageSubscribe) {
	for i := range a.stageStreams {
		s := &a.stageStreams[i]
		if s.view != m.View {
			continue
		}
		if s.gen == m.Gen {
			return
		}
		a.stageStreams = slices.Delete(a.stageStreams, i, i+1)
		break
	}
	a.stageStreams = append(a.stageStreams, stageStream{view: m.View, gen: m.Gen, home: ctx.From()})
	a.startStageStreams(ctx)
}

// startStageStreams sends the snapshot of every stream not started whose
// lower stages are all installed here.
func (a *Actor) startStageStreams(ctx runtime.Context) {
	if a.snap == nil {
		return
	}
	keep := a.stageStreams[:0]
	for _, s := range a.stageStreams {
		if rel, ok := a.snap.RelationByID(s.view); !ok || !rel.Stages {
			continue // dropped
		}
		keep = append(keep, s)
	}
	a.stageStreams = keep
	for i := range a.stageStreams {
		s := &a.stageStreams[i]
		if s.started {
			continue
		}
		lowers, ok := a.lowerStages(s.view)
		if !ok {
			continue
		}
		d := StageData{View: s.view, Gen: s.gen, Seq: s.seq, Snapshot: true, After: a.frontier, Through: a.frontier}
		for _, l := range lowers {
			b, err := circuit.ReadView(a.store, ViewID(l.rel.ID))
			if err != nil {
				ctx.Logger().Error("reading a lower stage's output", "view", l.rel.Name, "err", err)
				return
			}
			d.Batches = append(d.Batches, b)
		}
		ctx.Send(s.home, d)
		s.seq++
		s.started, s.through = true, a.frontier
	}
}

// sendStageDeltas sends every started stream the deltas of its lower
// stages over a step (prev, upTo] (viewDeltas: the step's outputs).
func (a *Actor) sendStageDeltas(ctx runtime.Context, prev, upTo uint64, viewDeltas map[catalog.ID]zset.Delta) {
	for i := range a.stageStreams {
		s := &a.stageStreams[i]
		if !s.started {
			continue
		}
		lowers, ok := a.lowerStages(s.view)
		if !ok {
			// A lower stage failed here (or the view is being dropped):
			// the home fails the view rather than wait for its steps.
			reason := "a lower stage is not maintained"
			for j := 0; ; j++ {
				id := catalog.StageID(s.view, j)
				if _, ok := a.snap.RelationByID(id); !ok {
					break
				}
				if f, failed := a.failed[id]; failed {
					reason = f.reason
				}
			}
			ctx.Send(s.home, StageData{View: s.view, Gen: s.gen, Seq: s.seq, Failed: reason})
			s.started, s.gen = false, 0
			continue
		}
		// INVARIANT: a started stream took every step since its snapshot.
		d := StageData{View: s.view, Gen: s.gen, Seq: s.seq, After: s.through, Through: upTo}
		for _, l := range lowers {
			var b zset.Batch
			if delta, ok := viewDeltas[l.rel.ID]; ok {
				b = delta.Batch()
			}
			d.Batches = append(d.Batches, b)
		}
		ctx.Send(s.home, d)
		s.seq++
		s.through = upTo
	}
}

// receiveStageData takes a lower-stage shard's snapshot or delta for the
// upper stage of a staged view of this home.
func (a *Actor) receiveStageData(ctx runtime.Context, m StageData) {
	var v *installedView
	for _, w := range a.views {
		if w.upper != nil && w.rel.ID == m.View {
			v = w
		}
	}
	if v == nil || v.upper.gen != m.Gen {
		return // a dropped view's, or an earlier generation's
	}
	var in *stageIn
	for i := range v.upper.from {
		if ActorOf(v.upper.from[i].shard) == ctx.From() {
			in = &v.upper.from[i]
		}
	}
	if in == nil {
		return
	}
	if m.Failed != "" {
		if err := a.failMaintained(ctx, v, errcode.New(errcode.ViewBuildFailed, "a lower stage of it failed on shard %d: %s", in.shard, m.Failed)); err != nil {
			a.poison(err)
		}
		return
	}
	if m.Seq != in.seq || (m.Snapshot && in.hasSnap) {
		// A message lost, or the shard restarted and began again:
		// start the upper stage over.
		a.restartUpper(ctx, v)
		return
	}
	in.seq++
	if m.Snapshot {
		in.snapshot, in.snapAt, in.hasSnap = m.Batches, m.Through, true
	} else {
		in.deltas = append(in.deltas, m)
	}
	if err := a.startUpperAtFrontier(ctx, v); err != nil {
		ctx.Logger().Error("starting a staged view's upper stage", "view", v.rel.Name, "err", err)
		a.poison(err)
		return
	}
	a.scheduleStep(ctx)
	a.replayWaitingReads(ctx)
}

// gathering reports whether upper stage u steps (or starts) with the
// shard's steps: it is valid, or every other shard's snapshot is in.
func (u *upperStage) gathering() bool {
	if u.valid {
		return true
	}
	for _, in := range u.from {
		if !in.hasSnap {
			return false
		}
	}
	return true
}

// stageBound is the highest epoch up to target the shard may step to for
// the started upper stages of this home: one every other shard's stream
// of each has a step end at (the frontier when there is none: no step).
// An upper stage not started does not hold the steps back: it starts at
// a step end (or a frontier) its streams all have one at (stageStepEnd).
func (a *Actor) stageBound(target uint64) uint64 {
	if target <= a.frontier {
		return target
	}
	return a.commonEnd(target, nil)
}

// commonEnd is the highest epoch in (frontier, target] every stream of
// every started upper stage, and of also (not started: at or after its
// snapshots' epochs), has a step end at; the frontier when none.
func (a *Actor) commonEnd(target uint64, also *upperStage) uint64 {
	var ups []*upperStage
	for _, v := range a.views {
		if v.upper != nil && v.upper.valid {
			ups = append(ups, v.upper)
		}
	}
	if also != nil {
		ups = append(ups, also)
	}
	if len(ups) == 0 {
		return target
	}
	var cands []uint64
	for _, in := range ups[0].from {
		if !in.consumed && in.hasSnap && in.snapAt > a.frontier && in.snapAt <= target {
			cands = append(cands, in.snapAt)
		}
		for _, d := range in.deltas {
			if d.Through > a.frontier && d.Through <= target {
				cands = append(cands, d.Through)
			}
		}
	}
	if len(ups[0].from) == 0 {
		// No other view shard (cannot happen: a staged view needs two).
		return target
	}
	slices.Sort(cands)
	for i := len(cands) - 1; i >= 0; i-- {
		if e := cands[i]; a.endsAt(ups, e) {
			return e
		}
	}
	return a.frontier
}

// endsAt reports whether every stream of ups has a step end at e, and
// each upper stage not started has its snapshots at or before e.
func (a *Actor) endsAt(ups []*upperStage, e uint64) bool {
	for _, u := range ups {
		for j := range u.from {
			in := &u.from[j]
			if !in.boundary(e) || (!u.valid && (!in.hasSnap || in.snapAt > e)) {
				return false
			}
		}
	}
	return true
}

// stageStepEnd is where a step of the shard up to upTo (stepTarget,
// capped) ends for its upper stages: at the highest step end of every
// started one's streams, and there, when an upper stage not started can
// start at one (its snapshots all in), at the highest such. ok is false
// when there is none after the frontier (cannot happen: the other shards
// end a step at every multiple of SpreadStepEvery, as this one does).
func (a *Actor) stageStepEnd(upTo uint64) (uint64, bool) {
	end := a.commonEnd(upTo, nil)
	if end <= a.frontier {
		return end, false
	}
	for _, v := range a.views {
		if u := v.upper; u != nil && !u.valid && u.gathering() {
			if e := a.commonEnd(end, u); e > a.frontier {
				return e, true
			}
		}
	}
	return end, true
}

// upperInputs are the inputs of upper stage v for a step ending at upTo
// (stageBound): for each lower stage, the other shards' snapshots (when
// it starts) and deltas up to upTo, and, when it starts, its own lower
// stages' outputs at the frontier (before this step); nil when v does
// not step. Its own lower stages' deltas of the step are added by the
// step (viewDeltas).
func (a *Actor) upperInputs(v *installedView, upTo uint64) (map[catalog.ID]zset.Batch, error) {
	u := v.upper
	if !u.gathering() || !a.endsAt([]*upperStage{u}, upTo) {
		return nil, nil
	}
	lowers, ok := a.lowerStages(v.rel.ID)
	if !ok {
		return nil, nil
	}
	out := map[catalog.ID]zset.Batch{}
	for _, l := range lowers {
		// Every lower stage is named, so the step adds its own deltas.
		out[l.rel.ID] = zset.Batch{}
	}
	add := func(i int, b zset.Batch) {
		if i < len(lowers) {
			id := lowers[i].rel.ID
			acc := out[id]
			acc.AddBatch(b, 1)
			out[id] = acc
		}
	}
	if !u.valid {
		for i, l := range lowers {
			b, err := circuit.ReadView(a.store, ViewID(l.rel.ID))
			if err != nil {
				return nil, err
			}
			add(i, b)
		}
	}
	for _, in := range u.from {
		if !in.consumed {
			for i, b := range in.snapshot {
				add(i, b)
			}
		}
		for _, d := range in.deltas {
			if d.Through > upTo {
				break
			}
			for i, b := range d.Batches {
				add(i, b)
			}
		}
	}
	return out, nil
}

// consumedUpper drops what a step (or start) up to upTo took from v's
// streams; v is valid from then on.
func (a *Actor) consumedUpper(ctx runtime.Context, v *installedView, upTo uint64) {
	u := v.upper
	for j := range u.from {
		in := &u.from[j]
		in.consumed, in.snapshot = true, nil
		k := 0
		for k < len(in.deltas) && in.deltas[k].Through <= upTo {
			k++
		}
		in.deltas = in.deltas[k:]
	}
	if !u.valid {
		u.valid = true
		// NB: the reads waiting for it are replayed after the message
		// (afterMessage), not inside the step that started it.
		a.upperStarted = true
	}
}

// startUpperAtFrontier starts upper stage v at the shard's frontier when
// every other shard's stream has a step end there (no step would: the
// shard may have no more epochs to step): on the snapshots and deltas up
// to it and its own lower stages' outputs, in a batch of its own.
func (a *Actor) startUpperAtFrontier(ctx runtime.Context, v *installedView) error {
	u := v.upper
	if u.valid || !u.gathering() {
		return nil
	}
	inputs, err := a.upperInputs(v, a.frontier)
	if err != nil || inputs == nil {
		return err
	}
	txn := kv.NewTxn(a.store)
	in := v.firstInputs(inputs)
	v.circuit.SetNow(a.frontierTime)
	v.circuit.SetWatermarks(a.stepMarks)
	if _, err := v.circuit.StepDeltas(txn, in); err != nil {
		a.discardCaches()
		return errcode.Wrap(errcode.ShardUnavailable, err, "starting the upper stage of %s", v.rel.Name)
	}
	if err := a.applyNoWait(txn.Batch()); err != nil {
		a.discardCaches()
		return err
	}
	a.consumedUpper(ctx, v, a.frontier)
	return nil
}

// startUppers starts the upper stages that can start at the frontier
// (startUpperAtFrontier): their own lower stages were just filled, or
// the frontier reached their snapshots.
func (a *Actor) startUppers(ctx runtime.Context) {
	defer func() {
		if a.upperStarted {
			a.upperStarted = false
			a.replayWaitingReads(ctx)
		}
	}()
	for _, v := range a.views {
		if v.upper == nil || v.upper.valid || !v.upper.gathering() {
			continue
		}
		if err := a.startUpperAtFrontier(ctx, v); err != nil {
			ctx.Logger().Error("starting a staged view's upper stage", "view", v.rel.Name, "err", err)
			a.poison(err)
			return
		}
	}
}

// firstInputs are upper stage v's circuit inputs from the lower stages'
// batches: at its first step, every source named (an aggregate without
// GROUP BY emits its row over empty input) and its constants fed.
func (v *installedView) firstInputs(batches map[catalog.ID]zset.Batch) map[circuit.SourceID]zset.Delta {
	in := map[circuit.SourceID]zset.Delta{}
	if !v.upper.valid {
		for id, c := range v.constants { //lint:maprange copied into a map keyed the same way
			in[id] = zset.RowDelta(c)
		}
		for _, s := range v.sources {
			in[SourceID(s)] = zset.RowDelta(zset.Batch{})
		}
	}
	for id, b := range batches { //lint:maprange copied into a map keyed the same way
		in[SourceID(id)] = zset.RowDelta(b)
	}
	return in
}

// hasUppers reports whether an upper stage runs here.
func (a *Actor) hasUppers() bool {
	for _, v := range a.views {
		if v.upper != nil {
			return true
		}
	}
	return false
}

// upperStarting reports whether ids name a staged view whose upper stage
// has not started here.
func (a *Actor) upperStarting(ids []catalog.ID) bool {
	for _, id := range ids {
		if v := a.installed(id); v != nil && v.upper != nil && !v.upper.valid {
			return true
		}
	}
	return false
}

// upperStartWaitMax bounds a read's wait for a staged view's upper stage
// to start (awaitUpper), which waits for its lower stages' fills.
const upperStartWaitMax = 2 * time.Minute

// awaitUpper parks a read of a staged view whose upper stage has not
// started here; it reports whether it did.
func (a *Actor) awaitUpper(ctx runtime.Context, msg runtime.Message, ids []catalog.ID) bool {
	if a.upperStarting(ids) {
		return a.park(ctx, msg)
	}
	return false
}
