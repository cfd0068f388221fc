package slate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rockstream/rockstream/slate/objstore"
)

// ReaderOptions configures a Reader.
type ReaderOptions struct {
	// MergeOperator must match the writer's.
	MergeOperator MergeOperator
	// InstanceID: unique per reader incarnation (empty: allocated).
	InstanceID string
	// CheckpointID pins the reader to an existing checkpoint: it reads that
	// state forever and never follows the writer. Empty: the reader follows
	// the latest state under its own checkpoint lease.
	CheckpointID string
	// CheckpointLifetime is the lease length of the reader's own checkpoint;
	// it is renewed by Poll after half of it. Default 10 min.
	CheckpointLifetime time.Duration
	// BlockCacheBytes bounds the reader's cache. Default 64 MiB.
	BlockCacheBytes int64

	// memtableChunksMax bounds the arena chunks of each memtable the WAL
	// tail is replayed into (0: what a nodeRef addresses); tests set it low.
	memtableChunksMax int
}

// Reader is a read-only view of a database, typically in another process. It
// exposes durable data only (SSTs and WAL objects in the store), and its
// visible sequence number never goes backwards. In following mode it holds a
// checkpoint lease on the manifest it reads, so GC keeps its files; Poll
// follows the writer.
type Reader struct {
	store    objstore.Store
	opts     ReaderOptions
	instance string
	tables   *tableReader

	checkpointID string
	leaseCreated int64
	manifest     *Manifest
	memtables    []*memtable // replayed WAL rows, oldest first
	nextWALID    uint64
	walLimit     uint64 // pinned mode: replay stops after this id
	seq          uint64
	fixed        bool
	putCounter   uint64
}

// OpenReader opens a reader of the database under path at time now.
func OpenReader(ctx context.Context, store objstore.Store, path string, now time.Time, opts ReaderOptions) (*Reader, error) {
	if opts.CheckpointLifetime <= 0 {
		opts.CheckpointLifetime = 10 * time.Minute
	}
	if opts.BlockCacheBytes == 0 {
		opts.BlockCacheBytes = 64 << 20
	}
	store = objstore.Prefixed(store, path)
	r := &Reader{store: store, opts: opts, instance: opts.InstanceID}
	r.tables = newTableReader(store, max(opts.BlockCacheBytes, 0), 16<<20)
	if opts.CheckpointID != "" {
		latest, err := latestManifest(ctx, store)
		if err != nil {
			return nil, err
		}
		if latest == nil {
			return nil, checkpointNotFound(opts.CheckpointID)
		}
		cp, ok := findCheckpoint(latest, opts.CheckpointID)
		if !ok {
			return nil, checkpointNotFound(opts.CheckpointID)
		}
		m, err := readManifest(ctx, store, cp.ManifestID)
		if err != nil {
			return nil, err
		}
		r.fixed = true
		r.walLimit = m.WALIDLastSeen
		if err := r.rebuild(ctx, m); err != nil {
			return nil, err
		}
		return r, nil
	}
	if r.instance == "" {
		id, err := allocateInstanceID(ctx, store)
		if err != nil {
			return nil, err
		}
		r.instance = id
	}
	r.checkpointID = "reader/" + r.instance
	m, err := r.lease(ctx, nil, now)
	if err != nil {
		return nil, err
	}
	if err := r.rebuild(ctx, m); err != nil {
		return nil, err
	}
	return r, nil
}

// lease (re)writes the reader's checkpoint to pin the manifest it commits,
// and returns that manifest.
func (r *Reader) lease(ctx context.Context, cur *Manifest, now time.Time) (*Manifest, error) {
	r.putCounter++
	nowMillis := now.UnixMilli()
	m, err := commitManifest(ctx, r.store, cur, manifestUpdate{
		putID: fmt.Sprintf("r/%s/%d", r.instance, r.putCounter), nowMillis: nowMillis,
		mutate: func(m *Manifest) error {
			kept := m.Checkpoints[:0:0]
			for _, cp := range m.Checkpoints {
				if cp.ID != r.checkpointID {
					kept = append(kept, cp)
				}
			}
			m.Checkpoints = append(kept, Checkpoint{
				ID: r.checkpointID, ManifestID: m.ID + 1, CreatedMillis: nowMillis,
				ExpireMillis: now.Add(r.opts.CheckpointLifetime).UnixMilli(),
			})
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	r.leaseCreated = nowMillis
	return m, nil
}

// rebuild switches to manifest m and replays its WAL tail. If the result
// would be older than what the reader already showed (a WAL object it had
// read was deleted), it keeps the old state and returns nil; a later Poll
// retries.
func (r *Reader) rebuild(ctx context.Context, m *Manifest) error {
	mts := []*memtable{newMemtableChunks(r.opts.memtableChunksMax)}
	seq := m.maxSeq()
	next, err := r.replayInto(ctx, &mts, m, m.ReplayAfterWALID+1, &seq)
	if err != nil {
		return err
	}
	if r.manifest != nil && seq < r.seq {
		return nil
	}
	r.manifest, r.memtables, r.nextWALID, r.seq = m, mts, next, seq
	return nil
}

// replayInto reads WAL objects from id on until one is missing (or past
// walLimit in pinned mode) into the last of mts, starting another when
// its arena is full, and returns the next id to read.
func (r *Reader) replayInto(ctx context.Context, mts *[]*memtable, m *Manifest, id uint64, seq *uint64) (uint64, error) {
	for ; !r.fixed || id <= r.walLimit; id++ {
		key := walKey(id)
		obj, err := r.store.Get(ctx, key)
		if err != nil {
			if isNotFound(err) {
				return id, nil // the tail, or GC raced us: stop quietly
			}
			return id, storeErr(err, "read %s", key)
		}
		w, err := decodeWAL(&r.tables.decomp, key, id, obj.Data)
		if err != nil {
			return id, err
		}
		rows := w.rows
		for len(rows) > 0 && rows[0].seq <= m.LastL0Seq {
			rows = rows[1:] // WAL rows are in seq order
		}
		if mt := (*mts)[len(*mts)-1]; !mt.fits(rows) && mt.rows > 0 {
			*mts = append(*mts, newMemtableChunks(r.opts.memtableChunksMax))
		}
		mt := (*mts)[len(*mts)-1]
		for _, row := range rows {
			mt.add(row)
			*seq = max(*seq, row.seq)
		}
	}
	return id, nil
}

// Poll follows the writer: on a new manifest it moves its lease and rebuilds;
// otherwise it reads newly written WAL objects. It renews the lease after
// half its lifetime (re-creating it if GC removed it).
func (r *Reader) Poll(ctx context.Context, now time.Time) error {
	if r.fixed {
		return nil
	}
	latest, err := openManifest(ctx, r.store)
	if err != nil {
		return err
	}
	_, held := findCheckpoint(latest, r.checkpointID)
	renew := !held || now.UnixMilli() >= r.leaseCreated+r.opts.CheckpointLifetime.Milliseconds()/2
	if latest.ID != r.manifest.ID || renew {
		m, err := r.lease(ctx, latest, now)
		if err != nil {
			return err
		}
		return r.rebuild(ctx, m)
	}
	seq := r.seq
	next, err := r.replayInto(ctx, &r.memtables, r.manifest, r.nextWALID, &seq)
	if err != nil {
		return err
	}
	r.nextWALID, r.seq = next, seq
	return nil
}

// Seq is the highest sequence number the reader shows. It never decreases.
func (r *Reader) Seq() uint64 { return r.seq }

// ManifestID is the manifest the reader reads.
func (r *Reader) ManifestID() uint64 { return r.manifest.ID }

func (r *Reader) view() *view {
	mts := make([]*memtable, 0, len(r.memtables))
	for i := len(r.memtables) - 1; i >= 0; i-- {
		mts = append(mts, r.memtables[i])
	}
	return &view{memtables: mts, l0: r.manifest.L0, runs: r.manifest.SortedRuns,
		tables: r.tables, op: r.opts.MergeOperator, readSeq: r.seq}
}

// Get returns key's durable value.
func (r *Reader) Get(ctx context.Context, key []byte) ([]byte, bool, error) {
	return r.view().get(ctx, key)
}

// Scan iterates live keys in [start, end).
func (r *Reader) Scan(ctx context.Context, start, end []byte) *Iterator {
	return r.view().scan(ctx, start, end, true)
}

// Close removes the reader's checkpoint lease.
func (r *Reader) Close(ctx context.Context, now time.Time) error {
	if r.fixed || r.checkpointID == "" {
		return nil
	}
	r.putCounter++
	_, err := removeCheckpoint(ctx, r.store, nil, fmt.Sprintf("r/%s/%d", r.instance, r.putCounter), now.UnixMilli(), r.checkpointID)
	if err != nil && !errors.Is(err, ErrFenced) {
		return err
	}
	return nil
}
