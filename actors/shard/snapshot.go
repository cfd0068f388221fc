package shard

import (
	"slices"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
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
	OpenSnapshot struct {
		CatalogVersion uint64
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
	// ReleasePin (table shard → view shard, one way) ends PinAt ID.
	ReleasePin struct{ ID uint64 }
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

func (a *Actor) openSnapshot(ctx runtime.Context, _ OpenSnapshot) (runtime.Message, error) {
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
				// As a read of the current state answers (snapshotOf).
				return nil, errcode.New(errcode.ShardUnavailable, "materialized view %s is still being filled from its inputs (backfilling); read it once SHOW VIEW STATUS shows it running", rel.Name)
			}
			return nil, errcode.New(errcode.SnapshotUnavailable, "could not serialize access: materialized view %s was created after the transaction's snapshot was taken", rel.Name)
		}
		from := r
		if plantSpreadUnmet && !a.isTableShard() {
			if rel, ok := a.snap.RelationByID(id); ok && IsSpread(rel) {
				from = a.store // the part at this shard's own frontier
			}
		}
		b, err := a.snapshotIn(from, id, m.rangesOf(i))
		if err != nil {
			return nil, err
		}
		res.Batches = append(res.Batches, b)
	}
	return res, nil
}
