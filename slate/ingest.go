package slate

import (
	"context"
	"errors"
)

// l0Writer writes one flush group's rows, in (key asc, seq desc) order, as
// one or more L0 SSTs of at most SSTBytesTarget each, uploaded as they fill,
// so a flush holds one SST-sized buffer rather than a second copy of its
// rows. A key's versions are never split between two SSTs, so the siblings
// do not overlap and their order within L0 is irrelevant.
type l0Writer struct {
	d *DB
	// group is the SSTs' FlushGroup (the newest seq they hold).
	group uint64
	// sizeHint is about how many bytes the group holds (SST buffers are
	// sized from it).
	sizeHint int64
	b        *sstBuilder
	infos    []SSTInfo // newest upload first
}

func (d *DB) newL0Writer(group uint64, sizeHint int64) *l0Writer {
	return &l0Writer{d: d, group: group, sizeHint: sizeHint}
}

// add appends one key's versions (newest first).
func (w *l0Writer) add(ctx context.Context, versions []row) error {
	d := w.d
	if w.b != nil && int64(w.b.estimatedBytes()) >= d.opts.SSTBytesTarget {
		if err := w.upload(ctx); err != nil {
			return err
		}
	}
	if w.b == nil {
		w.b = newSSTBuilder(d.compressor, d.opts.BlockBytes, d.opts.BloomBitsPerKey, min(w.sizeHint, d.opts.SSTBytesTarget))
	}
	for _, r := range versions {
		w.b.add(r)
	}
	return nil
}

func (w *l0Writer) upload(ctx context.Context) error {
	d := w.d
	data, info := w.b.finish()
	info.Key = d.sstKey("w")
	info.FlushGroup = w.group
	w.b = nil
	if _, err := d.store.Put(ctx, info.Key, data); err != nil {
		return storeErr(err, "write L0 SST %s", info.Key)
	}
	d.stats.SSTsWritten++
	d.stats.SSTBytesWritten += int64(len(data))
	w.infos = append([]SSTInfo{info}, w.infos...)
	return nil
}

// finish uploads the last SST and returns them all.
func (w *l0Writer) finish(ctx context.Context) ([]SSTInfo, error) {
	if w.b != nil {
		if err := w.upload(ctx); err != nil {
			return nil, err
		}
	}
	return w.infos, nil
}

// Ingest writes batch as L0 SSTs of its own, bypassing the WAL and the
// memtable, and commits them in one manifest: the bulk path for a large
// batch of keys spread over the key space (a backfilled view's state),
// which the memtable's skiplist takes at a cache miss or more per level
// per row, and which would be written to the WAL, then to L0 again.
//
// The batch gets one sequence number, as Write gives it, and is durable
// and visible when Ingest returns (nil error): reads, snapshots, merge
// operands and tombstones treat its rows exactly as rows written with
// Write and flushed. The WAL is flushed first, so the batches before it
// are durable before it is (a crash keeps a prefix of the batches).
//
// Order: a read stops at the first source with a value for its key
// (view.get), so for every key the sources must hold its versions newest
// first. When no memtable holds a key of the batch, the ingested SSTs go
// to L0 above the memtables' older rows without flushing them (their keys
// differ; rows written after the ingest go to the memtable, above it).
// Otherwise the memtables are flushed first. Either way
// LastL0Seq keeps meaning "every row at or below it is in L0 or the
// runs": an ingest over unflushed memtables does not move it, and an open
// continues the sequence from the newest SST (Manifest.maxSeq).
//
// Cost: a manifest commit per call (and a memtable flush when a memtable
// holds one of its keys), so callers ingest large batches, not small ones.
//
// ErrBackpressure (nothing applied): L0 holds L0MaxSSTs flush groups and
// compaction (run here first when Options.AutoCompact) did not make room.
// An error after the SSTs were uploaded leaves orphans for GC; the batch
// may or may not be in the store then (the owner reopens to find out, as
// after a Write whose WAL flush failed). A manifest commit whose earlier
// attempt landed is recognised (its SSTs are listed already).
func (d *DB) Ingest(ctx context.Context, b *Batch) (uint64, error) {
	if err := d.check(); err != nil {
		return 0, err
	}
	if b == nil || len(b.ops) == 0 {
		return d.lastSeq, nil
	}
	seq := d.lastSeq + 1
	rows, err := b.resolve(d.opts.MergeOperator, seq)
	if err != nil {
		return 0, err
	}
	flush := d.memtablesHoldAny(rows)
	// NB: the memtable flush and the ingest each add an L0 flush group.
	if groups := d.manifest.l0Groups() + 1; d.opts.AutoCompact && (groups >= d.opts.L0MaxSSTs || flush && groups+1 >= d.opts.L0MaxSSTs) {
		if _, err := d.Compact(ctx); err != nil {
			return 0, err
		}
	}
	if flush {
		if err := d.FlushMemtable(ctx); err != nil {
			return 0, err
		}
		// INVARIANT: every committed row is in the store's L0 or runs.
		if len(d.immutables) != 0 || d.memtable.rows != 0 {
			return 0, errors.New("slate: ingest found unflushed memtables after a flush")
		}
	} else if err := d.FlushWAL(ctx); err != nil {
		return 0, err
	}
	if d.manifest.l0Groups() >= d.opts.L0MaxSSTs {
		return 0, backpressureErr("L0 holds %d flushes (limit %d): compaction must catch up before an ingest", d.manifest.l0Groups(), d.opts.L0MaxSSTs)
	}
	w := d.newL0Writer(seq, b.bytes)
	for i := range rows {
		if err := w.add(ctx, rows[i:i+1]); err != nil {
			return 0, err
		}
	}
	infos, err := w.finish(ctx)
	if err != nil {
		return 0, err
	}
	watermark := d.nowMillis()
	m, err := commitManifest(ctx, d.store, d.manifest, manifestUpdate{
		putID:     d.putID("ingest"),
		nowMillis: d.nowMillis(),
		mutate: func(m *Manifest) error {
			if m.WriterEpoch != d.epoch {
				return fencedErr("manifest writer epoch is %d, this writer's is %d", m.WriterEpoch, d.epoch)
			}
			if m.LastL0Seq >= seq || listsSST(m, infos[0].Key) {
				return errFlushedBefore
			}
			// NB: ReplayAfterWALID stays: the WAL objects after it hold
			// rows below seq only, which are in L0 (at or below
			// LastL0Seq, skipped by replay) or in the memtables.
			m.L0 = append(append([]SSTInfo(nil), infos...), m.L0...)
			if flush {
				m.LastL0Seq = seq
			}
			m.L0WatermarkMillis = max(m.L0WatermarkMillis, watermark)
			m.RecentSnapshotMinSeq = max(m.RecentSnapshotMinSeq, d.minSnapshotSeq(m.LastL0Seq))
			return nil
		},
	})
	switch {
	case errors.Is(err, errFlushedBefore):
		// An earlier attempt of this commit landed although it was
		// reported failed: its SSTs hold the batch.
		if err := d.RefreshManifest(ctx); err != nil {
			return 0, err
		}
	case err != nil:
		// NB: the commit may have landed: seq is burnt, so no later
		// write reuses it for other rows.
		d.lastSeq = seq
		return 0, d.noteErr(err)
	default:
		d.stats.ManifestsWritten++
		d.setManifest(m)
	}
	d.lastSeq = seq
	// NB: the WAL was flushed, so every batch before this one is durable.
	d.durableSeq = max(d.durableSeq, seq)
	d.stats.BytesWritten += b.bytes
	d.stats.BytesIngested += b.bytes
	return seq, nil
}

// memtablesHoldAny reports whether a memtable holds a version of a key of
// rows (in key order): a range check first, then a point lookup per row in
// the memtables the range meets (a batch of view state spans other
// relations' keys, a table's rows just loaded).
func (d *DB) memtablesHoldAny(rows []row) bool {
	end := append(append([]byte(nil), rows[len(rows)-1].key...), 0)
	for _, mt := range d.memtablesNewestFirst(nil) {
		if _, ok, _ := mt.iter(rows[0].key, end).next(); !ok {
			continue
		}
		for _, r := range rows {
			if mt.findPoint(r.key, ^uint64(0)) != 0 {
				return true
			}
		}
	}
	return false
}

// listsSST reports whether m lists the SST named key (in L0 or a run).
func listsSST(m *Manifest, key string) bool {
	for _, t := range m.allSSTs() {
		if t.Key == key {
			return true
		}
	}
	return false
}
