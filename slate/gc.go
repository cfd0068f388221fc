package slate

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rockstream/rockstream/slate/objstore"
)

// GCOptions configures one GC pass.
type GCOptions struct {
	// MinAge: only objects older than this are deleted (0 in tests).
	MinAge time.Duration
	// InstanceID for GC's manifest commits (expiring checkpoints); empty:
	// allocated from the store.
	InstanceID string
}

// GCStats counts what one pass deleted.
type GCStats struct {
	CheckpointsExpired int
	ManifestsDeleted   int
	WALDeleted         int
	SSTsDeleted        int
}

// GC deletes objects no longer reachable. The referenced set is the newest
// manifest plus every manifest a checkpoint names:
//   - checkpoints past their expiry are removed first (a manifest commit);
//   - manifests: never the newest nor a checkpointed one; the boundary file
//     gc/manifest.boundary is advanced before any delete, so a stalled
//     writer's late create of a deleted id is recognized as stale;
//   - WAL: objects below the newest manifest's ReplayAfterWALID and outside
//     every checkpointed manifest's (ReplayAfterWALID, WALIDLastSeen] range;
//     fence objects are kept forever (they are what stops a stalled writer);
//   - SSTs: unreferenced and created before min(now − MinAge, the newest L0
//     flush time, the oldest running compaction's start), which protects
//     SSTs uploaded but not yet published.
func GC(ctx context.Context, store objstore.Store, path string, now time.Time, opts GCOptions) (GCStats, error) {
	store = objstore.Prefixed(store, path)
	if opts.InstanceID == "" {
		id, err := allocateInstanceID(ctx, store)
		if err != nil {
			return GCStats{}, err
		}
		opts.InstanceID = id
	}
	return runGC(ctx, store, now, opts)
}

// GC runs a GC pass with Options.GCMinAge and refreshes the writer's view.
func (d *DB) GC(ctx context.Context, now time.Time) (GCStats, error) {
	if err := d.check(); err != nil {
		return GCStats{}, err
	}
	if now.After(d.now) {
		d.now = now
	}
	st, err := runGC(ctx, d.store, now, GCOptions{MinAge: d.opts.GCMinAge, InstanceID: d.instance + "g"})
	if err != nil {
		return st, err
	}
	return st, d.RefreshManifest(ctx)
}

func sstCreatedMillis(key string) (int64, bool) {
	name := strings.TrimPrefix(key, "compacted/")
	i := strings.IndexByte(name, '-')
	if i <= 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(name[:i], 10, 64)
	return n, err == nil
}

func runGC(ctx context.Context, store objstore.Store, now time.Time, opts GCOptions) (GCStats, error) {
	var st GCStats
	nowMillis := now.UnixMilli()
	latest, err := latestManifest(ctx, store)
	if err != nil || latest == nil {
		return st, err
	}
	// 1. Expire checkpoints.
	expired := 0
	for _, cp := range latest.Checkpoints {
		if cp.ExpireMillis != 0 && cp.ExpireMillis <= nowMillis {
			expired++
		}
	}
	if expired > 0 {
		latest, err = commitManifest(ctx, store, latest, manifestUpdate{
			putID: fmt.Sprintf("gc/%s/%d", opts.InstanceID, nowMillis), nowMillis: nowMillis,
			mutate: func(m *Manifest) error {
				kept := m.Checkpoints[:0:0]
				for _, cp := range m.Checkpoints {
					if cp.ExpireMillis != 0 && cp.ExpireMillis <= nowMillis {
						continue
					}
					kept = append(kept, cp)
				}
				m.Checkpoints = kept
				return nil
			},
		})
		if err != nil {
			return st, err
		}
		st.CheckpointsExpired = expired
	}
	// 2. The referenced set.
	referenced := []*Manifest{latest}
	pinned := map[uint64]bool{latest.ID: true}
	for _, cp := range latest.Checkpoints {
		if pinned[cp.ManifestID] {
			continue
		}
		m, err := readManifest(ctx, store, cp.ManifestID)
		if err != nil {
			return st, fmt.Errorf("gc: checkpoint %s pins manifest %d: %w", cp.ID, cp.ManifestID, err)
		}
		pinned[cp.ManifestID] = true
		referenced = append(referenced, m)
	}
	liveSSTs := map[string]bool{}
	for _, m := range referenced {
		for _, s := range m.allSSTs() {
			liveSSTs[s.Key] = true
		}
	}
	// 3. Manifests.
	infos, err := store.List(ctx, "manifest/")
	if err != nil {
		return st, storeErr(err, "gc: list manifests")
	}
	var deletable []uint64
	for _, o := range infos {
		id, ok := parseManifestKey(o.Key)
		if !ok || id >= latest.ID || pinned[id] {
			continue
		}
		if opts.MinAge > 0 {
			m, err := readManifest(ctx, store, id)
			if err != nil {
				if isNotFound(err) {
					continue
				}
				return st, err
			}
			if m.CreatedMillis > nowMillis-opts.MinAge.Milliseconds() {
				continue
			}
		}
		deletable = append(deletable, id)
	}
	if len(deletable) > 0 {
		if err := advanceBoundary(ctx, store, manifestBoundaryKey, deletable[len(deletable)-1]); err != nil {
			return st, err
		}
		for _, id := range deletable {
			if err := store.Delete(ctx, manifestKey(id)); err != nil {
				return st, storeErr(err, "gc: delete %s", manifestKey(id))
			}
			st.ManifestsDeleted++
		}
	}
	// 4. WAL.
	walInfos, err := store.List(ctx, "wal/")
	if err != nil {
		return st, storeErr(err, "gc: list WAL")
	}
	for _, o := range walInfos {
		id, ok := parseWALKey(o.Key)
		if !ok || id >= latest.ReplayAfterWALID {
			continue
		}
		keep := false
		for _, m := range referenced[1:] {
			if id >= m.ReplayAfterWALID && id <= max(m.WALIDLastSeen, m.ReplayAfterWALID) {
				keep = true
			}
		}
		if keep {
			continue
		}
		if o.Size == walHeaderBytes {
			continue // a fence (data objects always hold rows): kept forever
		}
		if err := store.Delete(ctx, o.Key); err != nil {
			return st, storeErr(err, "gc: delete %s", o.Key)
		}
		st.WALDeleted++
	}
	// 5. SSTs.
	threshold := nowMillis - opts.MinAge.Milliseconds()
	threshold = min(threshold, latest.L0WatermarkMillis)
	for _, j := range latest.Compactions {
		threshold = min(threshold, j.StartedMillis)
	}
	sstInfos, err := store.List(ctx, "compacted/")
	if err != nil {
		return st, storeErr(err, "gc: list SSTs")
	}
	for _, o := range sstInfos {
		if liveSSTs[o.Key] {
			continue
		}
		created, ok := sstCreatedMillis(o.Key)
		if !ok || created >= threshold {
			continue
		}
		if err := store.Delete(ctx, o.Key); err != nil {
			return st, storeErr(err, "gc: delete %s", o.Key)
		}
		st.SSTsDeleted++
	}
	return st, nil
}
