package shard

import (
	"slices"
	"time"

	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/runtime"
)

// An export in a partitioned layout (placement.go): the view's tables are
// on every table shard, and the view shard needs their rows as of ONE
// epoch E, every later change coming through the exchange. Each table
// shard pauses its commits' allocations (seal.go) and answers its last
// epoch once everything up to it is durable; E is the highest answer, no
// table shard can write an entry at or below it while paused, so each
// pins its tables as they are, which is as of E, seals E, resumes, and
// streams its rows as a lone table shard does (export.go).
//
//	view shard                           each table shard
//	ExportRequest{Pause} ────────────────►  pause allocations; sync
//	  ◄──────────────── ExportPaused{Last}
//	E = max(Last)
//	ExportStart{E} ──────────────────────►  pin (as of E); seal E; resume
//	  ◄──────── ExportChunk{E, seq 1, rows} … as a lone table shard
//
// A pause ends by itself after exportTimeout if no ExportStart comes (the
// view shard asks again, with a new attempt).
type (
	// ExportPaused (table shard → view shard): the table shard holds its
	// allocations for the export; its entries up to Last are durable.
	ExportPaused struct {
		View    catalog.ID
		Attempt uint64
		Last    uint64
	}
	// ExportStart (view shard → table shard): pin the tables as of Epoch,
	// at or above the shard's Last, and stream them.
	ExportStart struct {
		CatalogVersion uint64
		View           catalog.ID
		Tables         []catalog.ID
		Attempt        uint64
		Epoch          uint64
	}
)

// exportPause is a table shard's pause for one export.
type exportPause struct {
	to       runtime.ActorID
	view     catalog.ID
	attempt  uint64
	answered bool
	until    time.Time
}

// exportPauseTick ends the pauses past their time.
type exportPauseTick struct{}

// paused reports whether an export holds the shard's allocations.
func (a *Actor) paused() bool { return len(a.seal.pauses) > 0 }

// receiveExportPause pauses the allocations for a view shard's export.
func (a *Actor) receiveExportPause(ctx runtime.Context, m ExportRequest, from runtime.ActorID) {
	a.seal.pauses = slices.DeleteFunc(a.seal.pauses, func(p exportPause) bool { return p.to == from && p.view == m.View })
	a.seal.pauses = append(a.seal.pauses, exportPause{to: from, view: m.View, attempt: m.Attempt, until: ctx.Now().Add(exportTimeout)})
	ctx.After(exportTimeout, exportPauseTick{})
	a.answerPauses(ctx)
}

// answerPauses tells the view shards of unanswered pauses the last epoch
// once no allocation is unanswered and every commit is durable.
func (a *Actor) answerPauses(ctx runtime.Context) {
	if !a.paused() || a.seal.asking || len(a.pending) > 0 || a.lastEpoch > a.durableEpoch {
		return
	}
	for i := range a.seal.pauses {
		p := &a.seal.pauses[i]
		if !p.answered {
			p.answered = true
			ctx.Send(p.to, ExportPaused{View: p.view, Attempt: p.attempt, Last: a.lastEpoch})
		}
	}
}

// receiveExportStart pins the tables of a paused export as of its epoch,
// seals it, resumes the allocations and streams the rows.
func (a *Actor) receiveExportStart(ctx runtime.Context, m ExportStart, from runtime.ActorID) {
	i := slices.IndexFunc(a.seal.pauses, func(p exportPause) bool {
		return p.to == from && p.view == m.View && p.attempt == m.Attempt && p.answered
	})
	if i < 0 || m.Epoch < a.lastEpoch {
		// The pause ended (its time passed, or a restart): the view shard
		// asks again after its timeout.
		ctx.Logger().Info("an export started after its pause ended", "view", m.View)
		return
	}
	a.seal.pauses = slices.Delete(a.seal.pauses, i, i+1)
	// NB: E was handed out (another table shard's last epoch), and this
	// shard wrote nothing above its last while paused.
	a.hear(m.Epoch)
	reader, release := a.pinInputs()
	x := &export{to: from, view: m.View, attempt: m.Attempt, epoch: m.Epoch, reader: reader, release: release, tables: m.Tables}
	a.exports = append(a.exports, x)
	ctx.Logger().Info("exporting tables for a view backfill", "view", m.View, "to", from, "epoch", x.epoch)
	a.sendExportChunk(ctx, x)
	a.askEpochs(ctx)
	a.pushFrames(ctx)
}

// receiveExportPauseTick ends the pauses past their time.
func (a *Actor) receiveExportPauseTick(ctx runtime.Context) {
	now := ctx.Now()
	a.seal.pauses = slices.DeleteFunc(a.seal.pauses, func(p exportPause) bool { return !now.Before(p.until) })
	a.askEpochs(ctx)
}

// remoteSource is a view shard's state of one table shard's part of a
// partitioned export.
type remoteSource struct {
	shard  partition.ShardID
	last   uint64
	paused bool
	seq    uint64
	done   bool
}

// startPartitionedExport asks every table shard to pause for b's export.
func (a *Actor) startPartitionedExport(ctx runtime.Context, b *backfill) {
	r := b.remote
	r.sources = nil
	for _, s := range TableShardsOf(a.snap.BucketMap()) {
		r.sources = append(r.sources, remoteSource{shard: s})
		ctx.Send(ActorOf(s), ExportRequest{CatalogVersion: a.snap.Version, View: b.view.rel.ID, Tables: r.tables, Attempt: r.attempt, Pause: true})
	}
}

// sourceOf is the state of the table shard actor from in b's export.
func (r *remoteInputs) sourceOf(from runtime.ActorID) *remoteSource {
	for i := range r.sources {
		if ActorOf(r.sources[i].shard) == from {
			return &r.sources[i]
		}
	}
	return nil
}

// receiveExportPaused starts the export once every table shard paused,
// at the highest of their last epochs.
func (a *Actor) receiveExportPaused(ctx runtime.Context, m ExportPaused) {
	b := a.backfilling(m.View)
	if b == nil || b.remote == nil || b.remote.attempt != m.Attempt || b.remote.known {
		return
	}
	src := b.remote.sourceOf(ctx.From())
	if src == nil {
		return
	}
	src.paused, src.last = true, m.Last
	epoch := uint64(0)
	for _, s := range b.remote.sources {
		if !s.paused {
			return
		}
		epoch = max(epoch, s.last)
	}
	// NB: the steps stop here until the epoch is known (backfillStepTarget),
	// and frames may not have brought it yet: they will (every table
	// shard seals it).
	b.remote.epoch, b.remote.known = epoch, true
	for _, s := range b.remote.sources {
		ctx.Send(ActorOf(s.shard), ExportStart{CatalogVersion: a.snap.Version, View: m.View, Tables: b.remote.tables, Attempt: m.Attempt, Epoch: epoch})
	}
	a.askSeals(ctx, epoch)
}
