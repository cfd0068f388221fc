package slate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/rockstream/rockstream/slate/objstore"
)

// DB is the single writer of one database. It is not safe for concurrent use:
// one owner (a shard actor) calls it; background work happens only inside the
// owner's calls (FlushWAL, FlushMemtable, Compact, GC, Tick). See doc.go.
type DB struct {
	store    objstore.Store
	opts     Options
	instance string
	epoch    uint64
	manifest *Manifest
	tables   *tableReader
	// compressor compresses WAL objects and L0 SSTs (Options.Compression).
	compressor *compressor

	memtable   *memtable
	immutables []immutableMemtable // oldest first

	walBuffer      []row
	walBufferBytes int64
	sealed         []sealedWAL // oldest first; flushed strictly in order
	sealedBytes    int64
	nextWALID      uint64

	lastSeq    uint64 // committed: visible to default reads
	durableSeq uint64 // in a WAL object or SST in the store

	snapshots map[uint64]int // seq -> open snapshot count

	now        time.Time
	lastGC     time.Time
	sstCounter uint64
	putCounter uint64
	compactor  *Compactor
	// compactionDeferred: Tick compacts only once L0 holds
	// deferredCompactionL0Groups flushes (DeferCompaction).
	compactionDeferred bool

	// failed is terminal (fenced or closed).
	failed error

	stats Stats
}

type immutableMemtable struct {
	mt *memtable
	// lastWALID: every row of mt is in a WAL object at or below this id.
	lastWALID uint64
}

type sealedWAL struct {
	id     uint64
	data   []byte
	maxSeq uint64
}

// Stats are counters for tests, benchmarks and `debug slate`.
type Stats struct {
	WALObjectsWritten int64
	WALBytesWritten   int64
	SSTsWritten       int64
	SSTBytesWritten   int64
	ManifestsWritten  int64
	BytesWritten      int64 // user key+value bytes accepted by Write and Ingest
	BytesIngested     int64 // of them, those Ingest wrote straight to L0
}

// Open opens (creating if needed) the database stored under path in store,
// becoming its single writer: it claims a new writer epoch, fences the WAL,
// and replays the WAL above the L0 watermark. An older writer of the same
// database is fenced by this (its next WAL flush or manifest commit fails
// with ErrFenced).
func Open(ctx context.Context, store objstore.Store, path string, opts Options) (*DB, error) {
	opts = opts.withDefaults()
	store = objstore.Prefixed(store, path)
	d := &DB{
		store:     store,
		opts:      opts,
		memtable:  newMemtableChunks(opts.memtableChunksMax),
		snapshots: map[uint64]int{},
	}
	d.tables = newTableReader(store, opts.BlockCacheBytes, opts.MetaCacheBytes)
	d.compressor = newCompressor(opts.Compression)
	d.instance = opts.InstanceID
	if d.instance == "" {
		id, err := allocateInstanceID(ctx, store)
		if err != nil {
			return nil, err
		}
		d.instance = id
	}
	m, err := initManifest(ctx, store, "init/"+d.instance, d.nowMillis())
	if err != nil {
		return nil, err
	}
	// 1. Claim a writer epoch.
	m, err = commitManifest(ctx, store, m, manifestUpdate{
		putID:     d.putID("epoch"),
		nowMillis: d.nowMillis(),
		mutate: func(m *Manifest) error {
			m.WriterEpoch++
			d.epoch = m.WriterEpoch
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	d.manifest = m
	// 2. Fence the WAL at the first free id.
	fenceID, err := d.fenceWAL(ctx)
	if err != nil {
		return nil, err
	}
	// 3. Replay (replay_after_wal_id, fence).
	if err := d.replay(ctx, fenceID); err != nil {
		return nil, err
	}
	d.nextWALID = fenceID + 1
	// 4. Confirm the epoch is still ours.
	if err := d.RefreshManifest(ctx); err != nil {
		return nil, err
	}
	d.publish()
	return d, nil
}

func (d *DB) nowTime() time.Time {
	if d.opts.Clock != nil {
		return d.opts.Clock()
	}
	return d.now
}

func (d *DB) nowMillis() int64 { return d.nowTime().UnixMilli() }

func (d *DB) putID(what string) string {
	d.putCounter++
	return fmt.Sprintf("w%d/%s/%s/%d", d.epoch, d.instance, what, d.putCounter)
}

func (d *DB) fenceWAL(ctx context.Context) (uint64, error) {
	infos, err := d.store.List(ctx, "wal/")
	if err != nil {
		return 0, storeErr(err, "list WAL")
	}
	candidate := d.manifest.ReplayAfterWALID + 1
	for _, o := range infos {
		if id, ok := parseWALKey(o.Key); ok && id >= candidate {
			candidate = id + 1
		}
	}
	for attempt := 0; attempt < manifestCommitAttemptsMax; attempt++ {
		_, err := objstore.PutIfAbsentVerified(ctx, d.store, walKey(candidate), encodeWAL(d.compressor, walKindFence, d.epoch, candidate, nil))
		if err == nil {
			return candidate, nil
		}
		if !errors.Is(err, objstore.ErrPreconditionFailed) {
			return 0, storeErr(err, "write WAL fence %s", walKey(candidate))
		}
		// The old writer took the slot: refresh (fails if someone newer
		// claimed the epoch) and try the next one.
		if err := d.RefreshManifest(ctx); err != nil {
			return 0, err
		}
		candidate = max(candidate+1, d.manifest.ReplayAfterWALID+1)
	}
	return 0, storeErr(fmt.Errorf("no free WAL slot after %d attempts", manifestCommitAttemptsMax), "fence WAL")
}

// replayReadAttemptsMax bounds the reads of one WAL object in replay that
// fail transiently: an open reads up to WALObjectsUnflushedMax of them, so
// with one call in thirty failing (a throttled S3) an open that gave up at
// the first failure would almost never succeed. Simulation range: fixed.
const replayReadAttemptsMax = 4

// replay loads WAL objects (ReplayAfterWALID, fenceID) into memtables,
// skipping rows already in L0 (seq <= LastL0Seq); a read failing
// transiently is tried again (replayReadAttemptsMax).
func (d *DB) replay(ctx context.Context, fenceID uint64) error {
	d.lastSeq = d.manifest.maxSeq()
	for id := d.manifest.ReplayAfterWALID + 1; id < fenceID; id++ {
		key := walKey(id)
		obj, err := d.store.Get(ctx, key)
		for attempt := 1; attempt < replayReadAttemptsMax && errors.Is(err, objstore.ErrTransient); attempt++ {
			obj, err = d.store.Get(ctx, key)
		}
		if err != nil {
			if isNotFound(err) {
				return corruptErr(key, "WAL object missing below the fence (ids must be dense)")
			}
			return storeErr(err, "read %s", key)
		}
		w, err := decodeWAL(&d.tables.decomp, key, id, obj.Data)
		if err != nil {
			return err
		}
		rows := w.rows
		for len(rows) > 0 && rows[0].seq <= d.manifest.LastL0Seq {
			rows = rows[1:] // WAL rows are in seq order
		}
		if !d.memtable.fits(rows) && d.memtable.rows > 0 {
			// NB: rotate between WAL objects: a batch never spans two,
			// so none spans two memtables either.
			d.immutables = append(d.immutables, immutableMemtable{mt: d.memtable, lastWALID: id - 1})
			d.memtable = newMemtableChunks(d.opts.memtableChunksMax)
		}
		for _, r := range rows {
			d.memtable.add(r)
			d.lastSeq = max(d.lastSeq, r.seq)
		}
		if d.memtable.bytes >= d.opts.MemtableBytesMax {
			d.immutables = append(d.immutables, immutableMemtable{mt: d.memtable, lastWALID: id})
			d.memtable = newMemtableChunks(d.opts.memtableChunksMax)
		}
	}
	d.durableSeq = d.lastSeq
	return nil
}

func (d *DB) check() error {
	if d.failed != nil {
		return d.failed
	}
	return nil
}

// fail makes err terminal when it is a fencing error.
func (d *DB) noteErr(err error) error {
	if errors.Is(err, ErrFenced) && d.failed == nil {
		d.failed = err
	}
	return err
}

// Write applies batch atomically with one new sequence number, which it
// returns. The batch is visible to reads immediately. With AwaitDurable,
// Write returns only once the batch's WAL object is in the store; if that
// flush fails the batch stays applied in memory (it will be flushed by a
// later FlushWAL) and Write returns the seq with the error, so the caller
// must not acknowledge it as durable.
//
// ErrBackpressure (nothing applied): memtables and unflushed WAL exceed
// Options.UnflushedBytesMax; run FlushMemtable and retry.
func (d *DB) Write(ctx context.Context, b *Batch, opts WriteOptions) (uint64, error) {
	if err := d.check(); err != nil {
		return 0, err
	}
	if b == nil || len(b.ops) == 0 {
		if opts.AwaitDurable {
			return d.lastSeq, d.FlushWAL(ctx)
		}
		return d.lastSeq, nil
	}
	if unflushed := d.unflushedBytes(); unflushed > 0 {
		if unflushed+b.bytes > d.opts.UnflushedBytesMax {
			return 0, backpressureErr("unflushed bytes %d + batch %d exceed budget %d", unflushed, b.bytes, d.opts.UnflushedBytesMax)
		}
		if p := d.opts.Pool; p != nil && p.overBudget(d.opts.PoolSlot, unflushed+b.bytes) {
			return 0, backpressureErr("unflushed bytes %d + batch %d exceed this database's share of the process's budget %d", unflushed, b.bytes, p.unflushedMax)
		}
	}
	seq := d.lastSeq + 1
	rows, err := b.resolve(d.opts.MergeOperator, seq)
	if err != nil {
		return 0, err
	}
	if !d.memtable.fits(rows) {
		// The arena cannot address the batch: start a new memtable (a
		// batch never spans two, see memtable.fits).
		d.freeze()
		if !d.memtable.fits(rows) {
			return 0, batchTooLargeErr(b.bytes)
		}
	}
	d.memtable.addSorted(rows) // resolve returns the rows in key order
	if len(d.walBuffer) == 0 {
		// NB: the buffer takes resolve's rows (the batch's own array, which
		// the batch no longer changes) instead of a copy: a large commit's
		// rows are a big array of pointers. Capped, so appends move it.
		d.walBuffer = rows[:len(rows):len(rows)]
		for _, r := range rows {
			d.walBufferBytes += int64(r.encodedSize())
		}
	} else {
		d.walBuffer = slices.Grow(d.walBuffer, len(rows))
		for _, r := range rows {
			d.walBuffer = append(d.walBuffer, r)
			d.walBufferBytes += int64(r.encodedSize())
		}
	}
	d.lastSeq = seq
	d.stats.BytesWritten += b.bytes
	if d.memtableFull() {
		d.freeze()
	}
	d.publish()
	if opts.AwaitDurable || d.walBufferBytes+d.sealedBytes >= d.opts.WALBufferBytesMax {
		if err := d.FlushWAL(ctx); err != nil && opts.AwaitDurable {
			return seq, err
		}
	}
	return seq, nil
}

// Put, Delete and Merge are one-operation batches.
func (d *DB) Put(ctx context.Context, key, value []byte, opts WriteOptions) (uint64, error) {
	var b Batch
	b.Put(key, value)
	return d.Write(ctx, &b, opts)
}

// Delete removes key.
func (d *DB) Delete(ctx context.Context, key []byte, opts WriteOptions) (uint64, error) {
	var b Batch
	b.Delete(key)
	return d.Write(ctx, &b, opts)
}

// Merge applies a merge operand to key.
func (d *DB) Merge(ctx context.Context, key, operand []byte, opts WriteOptions) (uint64, error) {
	var b Batch
	b.Merge(key, operand)
	return d.Write(ctx, &b, opts)
}

// unflushedBytes is the memory held until flushes: memtables, sealed WAL
// objects, and the WAL buffer (which becomes a sealed copy when flushed).
// memtableFull reports whether the active memtable is to be frozen: it
// reached MemtableBytesMax, or its share of the pool's (Options.Pool).
func (d *DB) memtableFull() bool {
	if d.memtable.bytes >= d.opts.MemtableBytesMax {
		return true
	}
	return d.opts.Pool != nil && d.opts.Pool.memtableFull(d.opts.PoolSlot, d.memtable.bytes)
}

// publish records the database's memtable and unflushed bytes in its pool
// slot (Options.Pool), after anything that changes them.
func (d *DB) publish() {
	if d.opts.Pool != nil {
		d.opts.Pool.publish(d.opts.PoolSlot, d.memtable.bytes, d.unflushedBytes())
	}
}

func (d *DB) unflushedBytes() int64 {
	n := d.memtable.bytes + d.sealedBytes + d.walBufferBytes
	for _, im := range d.immutables {
		n += im.mt.bytes
	}
	return n
}

// seal turns the WAL buffer into the next WAL object (fixed id and bytes).
func (d *DB) seal() {
	if len(d.walBuffer) == 0 {
		return
	}
	id := d.nextWALID
	d.nextWALID++
	data := encodeWAL(d.compressor, walKindData, d.epoch, id, d.walBuffer)
	d.sealed = append(d.sealed, sealedWAL{id: id, data: data, maxSeq: d.walBuffer[len(d.walBuffer)-1].seq})
	d.sealedBytes += int64(len(data))
	d.walBuffer, d.walBufferBytes = nil, 0
}

// freeze makes the active memtable immutable.
func (d *DB) freeze() {
	if d.memtable.rows == 0 {
		return
	}
	d.seal()
	d.immutables = append(d.immutables, immutableMemtable{mt: d.memtable, lastWALID: d.nextWALID - 1})
	d.memtable = newMemtableChunks(d.opts.memtableChunksMax)
}

// FlushWAL writes every buffered batch to WAL objects, strictly in id order,
// one at a time. A failed object is retried with the same id and bytes by
// the next call (never skipped). "Already exists" with other bytes means a
// newer writer fenced this one: ErrFenced, terminal.
func (d *DB) FlushWAL(ctx context.Context) error {
	defer d.publish()
	if err := d.check(); err != nil {
		return err
	}
	d.seal()
	for len(d.sealed) > 0 {
		s := d.sealed[0]
		key := walKey(s.id)
		if _, err := objstore.PutIfAbsentVerified(ctx, d.store, key, s.data); err != nil {
			if errors.Is(err, objstore.ErrPreconditionFailed) {
				return d.noteErr(fencedErr("WAL slot %s was taken by a newer writer (this writer's epoch is %d)", key, d.epoch))
			}
			return storeErr(err, "write %s", key)
		}
		d.stats.WALObjectsWritten++
		d.stats.WALBytesWritten += int64(len(s.data))
		d.durableSeq = max(d.durableSeq, s.maxSeq)
		d.sealed = d.sealed[1:]
		d.sealedBytes -= int64(len(s.data))
	}
	return nil
}

// DurableSeq is the highest sequence number known to be in the store.
func (d *DB) DurableSeq() uint64 { return d.durableSeq }

// LastSeq is the highest committed (visible) sequence number.
func (d *DB) LastSeq() uint64 { return d.lastSeq }

// Epoch is this writer's epoch.
func (d *DB) Epoch() uint64 { return d.epoch }

// Stats returns counters.
func (d *DB) Stats() Stats { return d.stats }

// Manifest returns (a copy of) the writer's current view of the manifest.
func (d *DB) Manifest() *Manifest { return d.manifest.clone() }

func (d *DB) sstKey(role string) string {
	d.sstCounter++
	return fmt.Sprintf("compacted/%013d-%s%d-%s-%d.sst", max(d.nowMillis(), 0), role, d.epoch, d.instance, d.sstCounter)
}

func (d *DB) minSnapshotSeq(def uint64) uint64 {
	m := def
	//lint:maprange taking a minimum is independent of order.
	for seq := range d.snapshots {
		m = min(m, seq)
	}
	return m
}

// FlushMemtable freezes the active memtable and writes every immutable
// memtable to an L0 SST (oldest first), publishing each with a manifest
// commit that advances ReplayAfterWALID and LastL0Seq. The WAL is flushed
// first so the manifest never points past durable WAL.
func (d *DB) FlushMemtable(ctx context.Context) error {
	if err := d.check(); err != nil {
		return err
	}
	defer d.publish()
	d.freeze()
	if err := d.FlushWAL(ctx); err != nil {
		return err
	}
	for len(d.immutables) > 0 {
		if d.manifest.l0Groups() >= d.opts.L0MaxSSTs {
			if err := d.RefreshManifest(ctx); err != nil {
				return err
			}
			if d.manifest.l0Groups() >= d.opts.L0MaxSSTs {
				return backpressureErr("L0 holds %d flushes (limit %d): compaction must catch up before the next memtable flush", d.manifest.l0Groups(), d.opts.L0MaxSSTs)
			}
		}
		im := d.immutables[0]
		retention := d.minSnapshotSeq(im.mt.maxSeq)
		w := d.newL0Writer(im.mt.maxSeq, im.mt.bytes)
		groups := groupIter{src: im.mt.iter([]byte{}, nil)}
		for {
			key, versions, ok, err := groups.nextGroup()
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			out, err := collapseVersions(d.opts.MergeOperator, key, versions, retention, false)
			if err != nil {
				return err
			}
			if err := w.add(ctx, out); err != nil {
				return err
			}
		}
		infos, err := w.finish(ctx)
		if err != nil {
			return err
		}
		watermark := d.nowMillis()
		lastWAL := d.nextWALID - 1
		m, err := commitManifest(ctx, d.store, d.manifest, manifestUpdate{
			putID:     d.putID("l0"),
			nowMillis: d.nowMillis(),
			mutate: func(m *Manifest) error {
				if m.WriterEpoch != d.epoch {
					return fencedErr("manifest writer epoch is %d, this writer's is %d", m.WriterEpoch, d.epoch)
				}
				if m.LastL0Seq >= im.mt.maxSeq {
					// An earlier attempt's commit landed although it was
					// reported failed: its SSTs hold these rows, folded
					// as they were then (another snapshot may fold them
					// otherwise now), so listing these too could count a
					// merge operand twice.
					return errFlushedBefore
				}
				m.L0 = append(append([]SSTInfo(nil), infos...), m.L0...)
				m.ReplayAfterWALID = max(m.ReplayAfterWALID, im.lastWALID)
				m.WALIDLastSeen = max(m.WALIDLastSeen, lastWAL)
				m.LastL0Seq = max(m.LastL0Seq, im.mt.maxSeq)
				m.L0WatermarkMillis = max(m.L0WatermarkMillis, watermark)
				m.RecentSnapshotMinSeq = max(m.RecentSnapshotMinSeq, d.minSnapshotSeq(m.LastL0Seq))
				return nil
			},
		})
		if errors.Is(err, errFlushedBefore) {
			// The SSTs just written are garbage; the refreshed manifest
			// drops the memtable (setManifest).
			if err := d.RefreshManifest(ctx); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return d.noteErr(err)
		}
		d.stats.ManifestsWritten++
		d.immutables = d.immutables[1:]
		d.setManifest(m)
	}
	return nil
}

// errFlushedBefore ends a flush's manifest commit that finds its memtable
// already in L0.
var errFlushedBefore = errors.New("slate: memtable flushed by an earlier attempt")

// setManifest makes m the writer's view of the manifest. An immutable
// memtable whose rows are all in L0 by m (its newest seq at or below
// m.LastL0Seq) is dropped: a flush whose manifest commit was reported
// failed may have committed after all (the create succeeded, a read after
// it did not), and a later manifest then lists its L0 SSTs while the
// memtable is still held. Read both, a key's merge operands would be
// counted twice, once folded in L0 and once in the memtable (a put is
// only shadowed twice, which is why it needs saying).
func (d *DB) setManifest(m *Manifest) {
	d.manifest = m
	for len(d.immutables) > 0 && d.immutables[0].mt.maxSeq <= m.LastL0Seq {
		d.immutables = d.immutables[1:]
	}
}

// RefreshManifest re-reads the newest manifest (to see the compactor's and
// readers' changes) and fails with ErrFenced if a newer writer exists.
func (d *DB) RefreshManifest(ctx context.Context) error {
	if err := d.check(); err != nil {
		return err
	}
	m, err := openManifest(ctx, d.store)
	if err != nil {
		return err
	}
	if m.WriterEpoch != d.epoch {
		return d.noteErr(fencedErr("manifest %d has writer epoch %d, this writer's is %d", m.ID, m.WriterEpoch, d.epoch))
	}
	d.setManifest(m)
	return nil
}

func (d *DB) view(opts ReadOptions) *view {
	return &view{memtables: d.memtablesNewestFirst(nil), l0: d.manifest.L0, runs: d.manifest.SortedRuns, tables: d.tables, op: d.opts.MergeOperator, readSeq: d.readSeq(opts)}
}

// Get returns key's value; ok is false if the key does not exist.
func (d *DB) Get(ctx context.Context, key []byte, opts ReadOptions) (value []byte, ok bool, err error) {
	if err := d.check(); err != nil {
		return nil, false, err
	}
	// NB: a view on the stack (d.view allocates one for iterators that
	// outlive the call); a point lookup is the hot path of every commit.
	var mts [4]*memtable
	v := view{memtables: d.memtablesNewestFirst(mts[:0]), l0: d.manifest.L0, runs: d.manifest.SortedRuns,
		tables: d.tables, op: d.opts.MergeOperator, readSeq: d.readSeq(opts)}
	return v.get(ctx, key)
}

// readSeq is the sequence number reads with opts see.
func (d *DB) readSeq(opts ReadOptions) uint64 {
	seq := d.lastSeq
	if opts.Snapshot != nil {
		seq = opts.Snapshot.seq
	}
	if opts.DurableOnly {
		seq = min(seq, d.durableSeq)
	}
	return seq
}

// memtablesNewestFirst appends the active and immutable memtables, newest
// first.
func (d *DB) memtablesNewestFirst(dst []*memtable) []*memtable {
	dst = append(dst, d.memtable)
	for i := len(d.immutables) - 1; i >= 0; i-- {
		dst = append(dst, d.immutables[i].mt)
	}
	return dst
}

// Scan iterates live keys in [start, end) in ascending order (end nil =
// unbounded). For a prefix: Scan(ctx, p, PrefixEnd(p), opts).
func (d *DB) Scan(ctx context.Context, start, end []byte, opts ReadOptions) *Iterator {
	if err := d.check(); err != nil {
		return &Iterator{err: err}
	}
	return d.view(opts).scan(ctx, start, end, !opts.NoCacheFill)
}

// Snapshot pins the current sequence number: reads with it see exactly the
// writes up to now. While open, flush and compaction keep the versions it
// needs. Release it when done.
type Snapshot struct {
	db       *DB
	seq      uint64
	released bool
}

// Snapshot opens a snapshot at the last committed seq.
func (d *DB) Snapshot() *Snapshot {
	s := &Snapshot{db: d, seq: d.lastSeq}
	d.snapshots[s.seq]++
	return s
}

// Seq is the snapshot's sequence number.
func (s *Snapshot) Seq() uint64 { return s.seq }

// Release unpins the snapshot. Idempotent.
func (s *Snapshot) Release() {
	if s.released || s.db == nil {
		return
	}
	s.released = true
	if s.db.snapshots[s.seq]--; s.db.snapshots[s.seq] <= 0 {
		delete(s.db.snapshots, s.seq)
	}
}

// Tick runs due background work at time now: flushes the WAL, writes
// immutable memtables to L0, runs the embedded compactor when
// Options.AutoCompact, and GC every Options.GCInterval. The owner calls it
// from a timer (e.g. every 100 ms); everything is synchronous.
func (d *DB) Tick(ctx context.Context, now time.Time) error {
	if err := d.check(); err != nil {
		return err
	}
	if now.After(d.now) {
		d.now = now
	}
	if err := d.FlushWAL(ctx); err != nil {
		return err
	}
	if d.opts.AutoCompact && d.manifest.l0Groups() >= d.opts.L0MaxSSTs {
		if _, err := d.Compact(ctx); err != nil {
			return err
		}
	}
	if len(d.immutables) == 0 && d.nextWALID-1 > d.manifest.ReplayAfterWALID+uint64(d.opts.WALObjectsUnflushedMax) {
		// Bound what the next open replays (WALObjectsUnflushedMax).
		d.freeze()
	}
	if len(d.immutables) > 0 {
		if err := d.FlushMemtable(ctx); err != nil {
			return err
		}
	}
	if d.opts.AutoCompact && (!d.compactionDeferred || d.deferredCompactionDue()) {
		if _, err := d.Compact(ctx); err != nil {
			return err
		}
	}
	if d.opts.GCInterval > 0 && !now.Before(d.lastGC.Add(d.opts.GCInterval)) {
		d.lastGC = now
		if _, err := d.GC(ctx, now); err != nil {
			return err
		}
	}
	return nil
}

// DeferCompaction defers (on) or resumes (off) Tick's compactions: while
// deferred, Tick compacts only once L0 holds half of L0MaxSSTs flushes or
// there are more than 2*SizeTierMinRuns sorted runs, so writes never meet
// L0's backpressure on its account, and reads fan out over a bounded number
// of files however long the deferral lasts. For bulk work whose latency matters more than the
// store's shape meanwhile (a view's backfill, whose ingested and flushed
// state each compaction would otherwise rewrite while the backfill is still
// writing more): the deferred compactions run on the first Tick after it,
// over fewer, larger inputs.
func (d *DB) DeferCompaction(on bool) { d.compactionDeferred = on }

// deferredCompactionDue reports whether Tick compacts while compaction is
// deferred: L0 holds half of L0MaxSSTs flushes (at least
// L0CompactionTrigger), or there are more than 2*SizeTierMinRuns sorted
// runs (the L0 compactions made them, and the size tiers would have merged
// them).
func (d *DB) deferredCompactionDue() bool {
	return d.manifest.l0Groups() >= max(d.opts.L0CompactionTrigger, d.opts.L0MaxSSTs/2) ||
		len(d.manifest.SortedRuns) > 2*d.opts.SizeTierMinRuns
}

// Close flushes the WAL and releases the handle. Unflushed memtables need no
// flush: reopening replays the WAL.
func (d *DB) Close(ctx context.Context) error {
	if d.failed != nil {
		return d.failed
	}
	err := d.FlushWAL(ctx)
	d.failed = closedErr(nil)
	if p := d.opts.Pool; p != nil {
		p.publish(d.opts.PoolSlot, 0, 0)
	}
	return err
}
