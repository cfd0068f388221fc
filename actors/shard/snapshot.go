package shard

import (
	"slices"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/runtime"
)

// Pinned snapshots serve REPEATABLE READ transactions: one consistent
// picture of every table and materialized view, taken at the
// transaction's first statement, which its later Reads and Lookups name
// with At. The views are first brought up to the last committed epoch, so
// tables and views describe the same epoch.
type (
	// OpenSnapshot pins the shard's current state, every committed epoch
	// applied to the views too. → SnapshotOpened.
	//
	// With ID set (a partitioned layout's table shard, pins.go): pin the
	// tables as of Epoch, which the view shards pinned their views at
	// (PinViews), under the session's ID, once this shard sealed it.
	OpenSnapshot struct {
		CatalogVersion uint64
		ID, Epoch      uint64
	}
	// SnapshotOpened names the pinned snapshot (ID, for Read.At and
	// Lookup.At) and the last source epoch it contains.
	SnapshotOpened struct {
		ID    uint64
		Epoch uint64
	}
	// ReleaseSnapshot unpins a snapshot. → struct{}.
	ReleaseSnapshot struct{ ID uint64 }

	// PinAt (table shard → view shard, one way) pins the view shard's
	// views as of epoch Epoch under the table shard's snapshot ID, for a
	// REPEATABLE READ transaction reading views there (pins.go).
	PinAt struct{ ID, Epoch uint64 }
	// ReleasePin (table shard or session → view shard, one way) ends
	// PinAt or PinViews ID.
	ReleasePin struct{ ID uint64 }

	// PinViews (session → view shard of a partitioned layout) pins the
	// views as of Epoch under ID (pins.go). → ViewsPinned.
	PinViews struct {
		CatalogVersion uint64
		ID, Epoch      uint64
	}
	// ViewsPinned answers PinViews: Behind, the views already passed
	// Epoch (Frontier) and nothing was pinned.
	ViewsPinned struct {
		Behind   bool
		Frontier uint64
	}
)

// Snapshotter is implemented by stores that can pin a point-in-time
// reader (storage.KV); Release ends the pin.
type Snapshotter interface {
	Snapshot() kv.Reader
}

type releaser interface{ Release() }

type pinnedSnapshot struct {
	reader kv.Reader
	epoch  uint64
	// filling are the views being backfilled at the pin: their state in
	// the snapshot is partial, so reads of them are refused.
	filling []catalog.ID
	// views are the views maintained at the pin: a view installed since
	// has no state in the snapshot.
	views []catalog.ID
	// undoAfter, undoThrough: a partitioned layout's table shard pinned
	// its store with the entries in (undoAfter, undoThrough] applied,
	// after the snapshot's epoch: reads take them away (undo, by table).
	undoAfter, undoThrough uint64
	undo                   map[catalog.ID]zset.Batch
}

func (a *Actor) isFailed(id catalog.ID) bool {
	_, failed := a.failed[id]
	return failed
}

// maintainedViews are the shard's installed views not being filled.
func (a *Actor) maintainedViews() []catalog.ID {
	var out []catalog.ID
	for _, v := range a.views {
		if a.backfilling(v.rel.ID) == nil {
			out = append(out, v.rel.ID)
		}
	}
	return out
}

func (a *Actor) openSnapshot(ctx runtime.Context, m OpenSnapshot) (runtime.Message, error) {
	if m.ID != 0 {
		return a.openSnapshotAt(m)
	}
	// Views reflect the frontier, tables every commit: catch the views up
	// so both describe the last epoch.
	for a.frontier < a.stepTarget() {
		if err := a.step(ctx); err != nil {
			return nil, err
		}
	}
	if err := a.makeFrontierShowable(); err != nil {
		return nil, err
	}
	s, ok := a.store.(Snapshotter)
	if !ok {
		return nil, errcode.New(errcode.SnapshotUnavailable, "this shard's storage cannot pin a snapshot")
	}
	if a.snapshots == nil {
		a.snapshots = map[uint64]pinnedSnapshot{}
	}
	a.nextSnapshot++
	p := pinnedSnapshot{reader: s.Snapshot(), epoch: a.lastEpoch, views: a.maintainedViews()}
	for _, b := range a.backfills {
		p.filling = append(p.filling, b.view.rel.ID)
	}
	a.snapshots[a.nextSnapshot] = p
	a.pinOnViewShards(ctx, a.nextSnapshot, a.lastEpoch)
	return SnapshotOpened{ID: a.nextSnapshot, Epoch: a.lastEpoch}, nil
}

// openSnapshotAt pins a partitioned layout's table shard as of epoch
// m.Epoch under m.ID, once it sealed it (shard.go parks it until then):
// the store as it is, with the entries after m.Epoch taken away by reads
// (undoOf). They are kept: the view shards' pins hold their frontiers at
// m.Epoch, so none acknowledges them.
func (a *Actor) openSnapshotAt(m OpenSnapshot) (runtime.Message, error) {
	if !a.partitioned() || !a.isTableShard() || m.Epoch > a.sealed() {
		return nil, errcode.New(errcode.InternalError, "a snapshot at epoch %d asked of a shard that has not sealed it", m.Epoch)
	}
	if m.Epoch < a.exchange.logFloor {
		return nil, errcode.New(errcode.SnapshotUnavailable, "could not serialize access: the changes after epoch %d are no longer kept", m.Epoch)
	}
	s, ok := a.store.(Snapshotter)
	if !ok {
		return nil, errcode.New(errcode.SnapshotUnavailable, "this shard's storage cannot pin a snapshot")
	}
	if a.snapshots == nil {
		a.snapshots = map[uint64]pinnedSnapshot{}
	}
	a.dropSnapshot(m.ID) // asked again
	a.snapshots[m.ID] = pinnedSnapshot{reader: s.Snapshot(), epoch: m.Epoch, undoAfter: m.Epoch, undoThrough: max(m.Epoch, a.lastEpoch)}
	return SnapshotOpened{ID: m.ID, Epoch: m.Epoch}, nil
}

// undoOf is what reads of table id in snapshot at take away from its rows
// in the pinned store (openSnapshotAt); empty for other snapshots.
func (a *Actor) undoOf(at uint64, id catalog.ID) (zset.Batch, error) {
	p, ok := a.snapshots[at]
	if !ok || p.undoThrough <= p.undoAfter {
		return zset.Batch{}, nil
	}
	if b, ok := p.undo[id]; ok {
		return b, nil
	}
	later, err := a.laterDeltas(p.reader, []catalog.ID{id}, p.undoAfter, p.undoThrough, true)
	if err != nil {
		return zset.Batch{}, err
	}
	if p.undo == nil {
		p.undo = map[catalog.ID]zset.Batch{}
		a.snapshots[at] = p
	}
	p.undo[id] = later[0]
	return later[0], nil
}

func (a *Actor) releaseSnapshot(ctx runtime.Context, id uint64) {
	if _, ok := a.snapshots[id]; ok {
		a.releasePinsOnViewShards(ctx, id)
	}
	a.dropSnapshot(id)
}

func (a *Actor) dropSnapshot(id uint64) {
	if p, ok := a.snapshots[id]; ok {
		if r, ok := p.reader.(releaser); ok {
			r.Release()
		}
		delete(a.snapshots, id)
	}
}

// dropSnapshots forgets every pinned snapshot (the store was reopened:
// they no longer read it); reads naming them fail with 40001.
func (a *Actor) dropSnapshots() {
	a.snapshots = nil
	a.pins = nil
}

// readerAt is the store as of pinned snapshot id (0: the current state).
func (a *Actor) readerAt(id uint64) (kv.Reader, error) {
	if id == 0 {
		return a.store, nil
	}
	p, ok := a.snapshots[id]
	if !ok {
		return nil, errcode.New(errcode.SnapshotUnavailable, "could not serialize access: the transaction's snapshot is no longer available")
	}
	return p.reader, nil
}

// readAt serves a Read of pinned snapshot m.At.
func (a *Actor) readAt(m Read) (runtime.Message, error) {
	r, err := a.readerAt(m.At)
	if err != nil {
		return nil, err
	}
	if m.PinEpoch != 0 && a.snapshots[m.At].epoch != m.PinEpoch {
		return nil, errcode.New(errcode.SnapshotUnavailable, "could not serialize access: the statement's snapshot (epoch %d) is no longer available", m.PinEpoch)
	}
	res := ReadResult{Frontier: a.snapshots[m.At].epoch}
	// The snapshot's own frontier time: a view shard pins at the epoch.
	if res.FrontierTime, err = getTime(r, frontierTimeKey()); err != nil {
		return nil, err
	}
	for i, id := range m.Relations {
		if slices.Contains(a.snapshots[m.At].filling, id) {
			name := id.String()
			if rel, ok := a.snap.RelationByID(id); ok {
				name = rel.Name
			}
			return nil, errcode.New(errcode.SnapshotUnavailable, "could not serialize access: materialized view %s was still being filled when the transaction's snapshot was taken", name)
		}
		if rel, ok := a.snap.RelationByID(id); ok && rel.Kind == catalog.KindMaterializedView && !slices.Contains(a.snapshots[m.At].views, id) && !a.isFailed(id) {
			if a.backfilling(id) != nil || a.installed(id) == nil {
				// A statement's snapshot waits for the fill by taking
				// another (session readSpread); a transaction's is retried.
				return nil, errcode.New(errcode.SnapshotUnavailable, "could not serialize access: materialized view %s was still being filled from its inputs (backfilling) when the snapshot was taken", rel.Name)
			}
			return nil, errcode.New(errcode.SnapshotUnavailable, "could not serialize access: materialized view %s was created after the transaction's snapshot was taken", rel.Name)
		}
		from := r
		if plantSpreadUnmet && !a.isTableShard() {
			if rel, ok := a.snap.RelationByID(id); ok && IsSpread(rel) {
				from = a.store // the part at this shard's own frontier
			}
		}
		undo, err := a.undoOf(m.At, id)
		if err != nil {
			return nil, err
		}
		ranges := m.rangesOf(i)
		if len(undo.Rows) > 0 {
			// NB: read whole, the changes taken away whole (a range may
			// hold more rows than the statement keeps, never fewer).
			ranges = nil
		}
		b, err := a.snapshotIn(from, id, ranges)
		if err != nil {
			return nil, err
		}
		if len(undo.Rows) > 0 {
			b.AddBatch(undo, -1)
			b = zset.Consolidate(b)
		}
		res.Batches = append(res.Batches, b)
	}
	return res, nil
}
