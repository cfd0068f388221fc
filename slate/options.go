package slate

import "time"

// Options configures a DB. Zero fields take the defaults below. Each limit
// names its unit last and says what happens when it is reached.
type Options struct {
	// MergeOperator resolves merge operands; nil means merges are errors.
	MergeOperator MergeOperator
	// InstanceID must be unique per Open across all processes opening this
	// database (the runtime's incarnation id, or a draw from a seeded random
	// stream). Empty: slate allocates one from the store (one extra LIST and
	// PUT at open).
	InstanceID string
	// Clock returns the current time. nil: time is what the owner last passed
	// to Tick or GC (slate never reads the wall clock itself).
	Clock func() time.Time

	// MemtableBytesMax: the active memtable is frozen (becomes immutable,
	// awaiting FlushMemtable) when it reaches this size. Default 64 MiB.
	// Simulation range: 4 KiB – 64 MiB.
	MemtableBytesMax int64
	// UnflushedBytesMax: memtables plus unflushed WAL bytes. A Write that
	// would exceed it fails with ErrBackpressure (nothing applied); the owner
	// runs FlushMemtable and retries. Default 256 MiB. Simulation range:
	// 2×MemtableBytesMax – 1 GiB.
	UnflushedBytesMax int64
	// WALBufferBytesMax: a Write that leaves this many bytes in the WAL
	// buffer flushes it to the store synchronously. Default 4 MiB.
	WALBufferBytesMax int64
	// WALObjectsUnflushedMax: Tick freezes the memtable (and flushes it)
	// once this many WAL objects were written since the last flush, so an
	// open replays at most about this many: a store taking small commits
	// (a WAL object each) for hours, or opened over and over, otherwise
	// fills its memtable slowly and replays thousands of objects at every
	// open. Default 256. Simulation range: 8 – 1024.
	WALObjectsUnflushedMax int
	// Pool, when set, is the memtable and unflushed-bytes budget this
	// database shares with the others of its process (MemoryPool), in
	// slot PoolSlot.
	Pool     *MemoryPool
	PoolSlot int
	// BlockCacheBytes bounds the decoded block and SST-index cache.
	// Default 64 MiB. Simulation range: 0 – 64 MiB.
	BlockCacheBytes int64
	// MetaCacheBytes bounds the cache of SST indexes and bloom filters
	// (kept apart so scans cannot evict them). Default 16 MiB.
	MetaCacheBytes int64
	// BlockBytes is the SST data block target. Default 4 KiB.
	BlockBytes int
	// BloomBitsPerKey sizes SST bloom filters (0 uses the default 10).
	BloomBitsPerKey int
	// Compression is the codec of SST data blocks and WAL objects written
	// from now on; what is stored keeps the codec it was written with
	// (each block and object records its own), so it can be changed
	// between opens. Default (and any value not listed) CompressionS2.
	// Simulation range: every value.
	Compression Compression
	// SSTBytesTarget splits compaction output (each output SST is built in
	// memory before its PUT). Default 16 MiB.
	SSTBytesTarget int64

	// L0CompactionTrigger: compaction starts once L0 holds this many memtable
	// flushes (a flush may be several non-overlapping SSTs).
	// Default 4.
	L0CompactionTrigger int
	// L0MaxSSTs: FlushMemtable refuses (ErrBackpressure) to add an L0 flush
	// beyond this many flushes, so reads never fan out over an unbounded L0; writes
	// then back up into UnflushedBytesMax until compaction catches up.
	// Default 16; never below L0CompactionTrigger (no deadlock).
	L0MaxSSTs int
	// SizeTierRatio: sorted runs are "similar" (merged together) while the
	// largest is at most ratio × the smallest. Default 4.
	SizeTierRatio float64
	// SizeTierMinRuns: the fewest similar sorted runs merged together.
	// Default 4 (at most 2× that many per compaction).
	SizeTierMinRuns int
	// CompactionCheckpointLifetime: the compactor pins the pre-compaction
	// manifest for this long so readers of it keep working. Default 15 min.
	CompactionCheckpointLifetime time.Duration

	// AutoCompact makes Tick run the embedded compactor.
	AutoCompact bool
	// GCInterval makes Tick run GC at most this often (0: Tick never runs GC).
	GCInterval time.Duration
	// GCMinAge: GC only deletes unreferenced objects older than this.
	GCMinAge time.Duration

	// memtableChunksMax bounds a memtable's arena chunks (0: what a
	// nodeRef addresses); tests set it low to exercise rotation.
	memtableChunksMax int
}

func (o Options) withDefaults() Options {
	if o.MemtableBytesMax <= 0 {
		o.MemtableBytesMax = 64 << 20
	}
	if o.UnflushedBytesMax <= 0 {
		o.UnflushedBytesMax = 256 << 20
	}
	if o.UnflushedBytesMax < 2*o.MemtableBytesMax {
		o.UnflushedBytesMax = 2 * o.MemtableBytesMax
	}
	if o.WALObjectsUnflushedMax <= 0 {
		o.WALObjectsUnflushedMax = 256
	}
	if o.WALBufferBytesMax <= 0 {
		o.WALBufferBytesMax = 4 << 20
	}
	if o.BlockCacheBytes < 0 {
		o.BlockCacheBytes = 0
	} else if o.BlockCacheBytes == 0 {
		o.BlockCacheBytes = 64 << 20
	}
	if o.MetaCacheBytes <= 0 {
		o.MetaCacheBytes = 16 << 20
	}
	if o.BlockBytes <= 0 {
		o.BlockBytes = 4 << 10
	}
	if o.BloomBitsPerKey <= 0 {
		o.BloomBitsPerKey = 10
	}
	if o.SSTBytesTarget <= 0 {
		o.SSTBytesTarget = 16 << 20
	}
	if o.L0CompactionTrigger <= 0 {
		o.L0CompactionTrigger = 4
	}
	if o.L0MaxSSTs <= 0 {
		o.L0MaxSSTs = 16
	}
	o.L0MaxSSTs = max(o.L0MaxSSTs, o.L0CompactionTrigger)
	if o.SizeTierRatio <= 0 {
		o.SizeTierRatio = 4
	}
	if o.SizeTierMinRuns <= 1 {
		o.SizeTierMinRuns = 4
	}
	if o.CompactionCheckpointLifetime <= 0 {
		o.CompactionCheckpointLifetime = 15 * time.Minute
	}
	return o
}

// WriteOptions configures one Write.
type WriteOptions struct {
	// AwaitDurable: Write returns only after the WAL object holding the batch
	// is in the store (it flushes the WAL synchronously). Without it the batch
	// is visible to reads at once and becomes durable at the next FlushWAL,
	// Tick, or buffer-full flush.
	AwaitDurable bool
}

// ReadOptions configures one read.
type ReadOptions struct {
	// Snapshot reads as of the snapshot's sequence number.
	Snapshot *Snapshot
	// DurableOnly hides writes whose WAL object is not yet in the store.
	DurableOnly bool
	// NoCacheFill: a scan does not fill the block cache (large scans).
	NoCacheFill bool
}
