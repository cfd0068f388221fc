// Package slate is RockStream's LSM key-value store on object storage. It
// implements SlateDB's bucket protocol and invariants (research/slatedb.md,
// "Minimal faithful subset"; ARCHITECTURE.md §4) with our own byte formats.
//
// # Determinism
//
// slate starts no goroutines, never reads the wall clock and draws no random
// numbers. Every object-store call happens synchronously inside a call the
// owner makes, and time arrives as a parameter (Tick, GC, Compact) or through
// Options.Clock. So the shard actor drives background work from timer
// messages and the simulator runs it all in one goroutine.
//
// Supply Options.Clock (the runtime's ctx.Now) or call Tick regularly: SST
// names carry their creation time, and GC's safety rules compare those times
// with the manifest's L0 watermark, so a database that never learns the time
// never has its SSTs garbage collected (safe, but it leaks).
//
// # Object-store faults
//
// Conditional creates embed a unique put id, so an ambiguous create is
// resolved by reading the object back (objstore.PutIfAbsentVerified).
// A failed WAL object is retried with the same id and bytes; a failed L0 or
// compaction upload is redone under a new name (the orphan is collected by
// GC). Stale LISTs are tolerated: the newest manifest is found by probing ids
// past the listing (and above the GC boundary), and every create is a
// put-if-absent that fails on an occupied id.
//
// # Walkthrough
//
//	db, err := slate.Open(ctx, store, "shards/7", slate.Options{MergeOperator: sum})
//	var b slate.Batch
//	b.Put(k1, v1); b.Delete(k2); b.Merge(k3, delta)
//	seq, err := db.Write(ctx, &b, slate.WriteOptions{AwaitDurable: true}) // durable when it returns
//	v, ok, err := db.Get(ctx, k1, slate.ReadOptions{})
//	it := db.Scan(ctx, prefix, slate.PrefixEnd(prefix), slate.ReadOptions{})
//	for it.Next() { ... it.Key(), it.Value() ... }
//	// from the owner's timer, e.g. every 100 ms:
//	err = db.Tick(ctx, now) // flush WAL, flush frozen memtables, compact, GC
//
// # Bucket layout (under the database's path)
//
//	manifest/<20-digit id>.manifest  full snapshots; the highest id is current
//	wal/<20-digit id>.sst             WAL objects, dense ids; header-only = fence
//	compacted/<millis>-<role><epoch>-<instance>-<n>.sst   L0 and sorted-run SSTs
//	gc/manifest.boundary              highest manifest id GC may have deleted
//	instances/<n>                     allocated instance ids (when not supplied)
//
// # Write path
//
// Write resolves the batch to one row per key, gives it one sequence number,
// appends it to the WAL buffer (a batch never spans WAL objects) and inserts
// it into the memtable; it is visible at once. The memtable is a skiplist
// laid out in an arena (memtable.go): nodes, keys and values live in a few
// large pointer-free []byte chunks linked by uint32 offsets, so the GC has
// almost nothing to trace however many rows it holds. A batch the arena
// cannot address freezes the memtable first (a batch never spans
// memtables either). FlushWAL (called by Write with
// AwaitDurable, by Tick, and when the buffer is full) seals the buffer into
// the next WAL id and creates it with put-if-absent, strictly in id order, one
// at a time; a failed object is retried with the same id and bytes, never
// skipped. A full memtable is frozen; FlushMemtable writes frozen memtables to
// L0 (each as one or more non-overlapping SSTs of at most SSTBytesTarget, one
// "flush group") and commits a manifest advancing ReplayAfterWALID and
// LastL0Seq.
//
// Ingest (ingest.go) is the bulk path: a batch goes straight to L0 SSTs
// of its own, committed in one manifest, without WAL or memtable. It is
// placed above the memtables' unflushed rows when none of them is a
// version of one of its keys (LastL0Seq then stays, and an open continues
// the sequence from the newest SST), and after a memtable flush otherwise.
//
// WAL objects and SST data blocks are compressed with Options.Compression
// (S2 by default; compress.go). Each compressed body ends with its codec,
// so objects of several codecs, and uncompressed ones written before
// compression existed, are read side by side; checksums cover the stored
// bytes and are verified before anything is decompressed.
//
// Compaction is size-tiered: once L0 holds L0CompactionTrigger flush groups
// they are merged into a new, newest sorted run; runs whose sizes are within
// SizeTierRatio of each other merge once SizeTierMinRuns of them line up.
// Tombstones are dropped only when the output is the oldest run.
//
// Group commit: write several batches without AwaitDurable, then call
// FlushWAL once; all of them share one WAL object and one PUT. A Write with
// AwaitDurable that returns an error together with a seq has applied the
// batch in memory but NOT made it durable: do not acknowledge it; the next
// FlushWAL retries the same WAL object.
//
// Memory budgets: Options.MemtableBytesMax (freeze), UnflushedBytesMax (Write
// returns ErrBackpressure, nothing applied: the owner flushes and retries) and
// BlockCacheBytes (LRU).
//
// # Roles and manifest field ownership
//
// Every manifest change is a mutation re-applied to the newest manifest after
// a lost put-if-absent race, and each role touches only its own fields:
//
//	writer     WriterEpoch, L0 (prepends), ReplayAfterWALID, WALIDLastSeen,
//	           LastL0Seq, L0WatermarkMillis, RecentSnapshotMinSeq
//	compactor  CompactorEpoch, SortedRuns, Compactions, L0 (removes compacted)
//	anyone     Checkpoints (add/remove by id)
//
// # Fencing
//
// Open claims WriterEpoch+1 by manifest CAS, writes a fence object at the
// first free WAL id (moving up if the old writer took it), replays the WAL
// from ReplayAfterWALID+1 up to the fence, and re-reads the manifest. An old
// writer learns it is fenced when its next WAL create finds the slot taken or
// its next manifest commit sees a newer epoch: ErrFenced, terminal.
// OpenCompactor does the same with CompactorEpoch.
//
// # Reads
//
// Reads merge the memtable, frozen memtables, L0 (newest first) and sorted
// runs (newest first) at a sequence number: the last committed one, a
// Snapshot's, or the durable one (ReadOptions.DurableOnly). Tombstones hide
// older versions; merge operands are resolved on read, flush and compaction
// (missing operator = ErrMergeOperatorMissing).
//
// # Background work the owner drives
//
//	FlushWAL(ctx)              make buffered batches durable
//	FlushMemtable(ctx)         frozen + active memtable → L0, manifest commit
//	Compact(ctx)/CompactAll    one size-tiered compaction (embedded compactor)
//	GC(ctx, now)               delete unreachable objects (see GC)
//	RefreshManifest(ctx)       see other roles' commits; detects fencing
//	Tick(ctx, now)             all of the above that is due; an idle
//	                           writer's Tick makes no object-store request
//	                           (compaction is planned from its own
//	                           manifest view; see DB.compact)
//	Reader.Poll(ctx, now)      follow the writer from another process
package slate
