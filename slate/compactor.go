package slate

import (
	"context"
	"fmt"
	"time"

	"github.com/rockstream/rockstream/slate/objstore"
)

// Compactor merges L0 SSTs and sorted runs into new sorted runs (size-tiered).
// It owns Manifest.SortedRuns, Manifest.Compactions and the removal of
// compacted L0 SSTs; it claims Manifest.CompactorEpoch when opened, which
// fences any older compactor (its next commit fails with ErrFenced).
//
// One compaction:
//  1. plan from the newest manifest;
//  2. commit a job record (GC keeps every SST created after its start);
//  3. merge the sources, resolve merges and drop shadowed versions at or
//     below RecentSnapshotMinSeq, drop tombstones only into the oldest run;
//  4. upload the output SSTs;
//  5. commit: swap sources for the output run, remove the job, and add a
//     short-lived checkpoint pinning the pre-compaction manifest so readers
//     still on it keep working.
type Compactor struct {
	store      objstore.Store
	opts       Options
	instance   string
	epoch      uint64
	tables     *tableReader
	compressor *compressor
	now        time.Time
	sstCounter uint64
	putCounter uint64
	failed     error
}

// OpenCompactor claims the compactor epoch of the database under path.
func OpenCompactor(ctx context.Context, store objstore.Store, path string, opts Options) (*Compactor, error) {
	return openCompactor(ctx, objstore.Prefixed(store, path), opts.withDefaults(), nil)
}

func openCompactor(ctx context.Context, store objstore.Store, opts Options, tables *tableReader) (*Compactor, error) {
	c := &Compactor{store: store, opts: opts, instance: opts.InstanceID, compressor: newCompressor(opts.Compression)}
	if c.instance == "" {
		id, err := allocateInstanceID(ctx, store)
		if err != nil {
			return nil, err
		}
		c.instance = id
	}
	if tables == nil {
		tables = newTableReader(store, opts.BlockCacheBytes, opts.MetaCacheBytes)
	}
	c.tables = tables
	m, err := initManifest(ctx, store, "init/"+c.instance, c.nowMillis())
	if err != nil {
		return nil, err
	}
	_, err = commitManifest(ctx, store, m, manifestUpdate{
		putID:     fmt.Sprintf("c/%s/epoch", c.instance),
		nowMillis: c.nowMillis(),
		mutate: func(m *Manifest) error {
			m.CompactorEpoch++
			c.epoch = m.CompactorEpoch
			m.Compactions = nil // jobs of older compactors are dead
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Compactor) nowTime() time.Time {
	if c.opts.Clock != nil {
		return c.opts.Clock()
	}
	return c.now
}

func (c *Compactor) nowMillis() int64 { return c.nowTime().UnixMilli() }

func (c *Compactor) putID(what string) string {
	c.putCounter++
	return fmt.Sprintf("c%d/%s/%s/%d", c.epoch, c.instance, what, c.putCounter)
}

// Epoch is the compactor's epoch.
func (c *Compactor) Epoch() uint64 { return c.epoch }

func (c *Compactor) checkEpoch(m *Manifest) error {
	if m.CompactorEpoch != c.epoch {
		return fencedErr("manifest compactor epoch is %d, this compactor's is %d", m.CompactorEpoch, c.epoch)
	}
	return nil
}

// compactionPlan is one chosen compaction.
type compactionPlan struct {
	l0             []SSTInfo // newest first
	runs           []SortedRun
	outputID       uint32
	dropTombstones bool
}

func (c *Compactor) plan(m *Manifest) *compactionPlan {
	// L0 first: all of it becomes a new, newest sorted run.
	if m.l0Groups() >= c.opts.L0CompactionTrigger {
		p := &compactionPlan{l0: append([]SSTInfo(nil), m.L0...)}
		var maxID uint32
		for _, r := range m.SortedRuns {
			maxID = max(maxID, r.ID)
		}
		p.outputID = maxID + 1
		p.dropTombstones = len(m.SortedRuns) == 0
		return p
	}
	// Then size tiers: the newest window of at least SizeTierMinRuns
	// consecutive runs whose sizes are within SizeTierRatio of each other.
	maxRuns := 2 * c.opts.SizeTierMinRuns
	for start := range m.SortedRuns {
		lo, hi := m.SortedRuns[start].Bytes(), m.SortedRuns[start].Bytes()
		end := start + 1
		for end < len(m.SortedRuns) && end-start < maxRuns {
			size := m.SortedRuns[end].Bytes()
			nlo, nhi := min(lo, size), max(hi, size)
			if float64(nhi) > c.opts.SizeTierRatio*float64(max(nlo, 1)) {
				break
			}
			lo, hi = nlo, nhi
			end++
		}
		if end-start >= c.opts.SizeTierMinRuns {
			p := &compactionPlan{runs: append([]SortedRun(nil), m.SortedRuns[start:end]...)}
			p.outputID = m.SortedRuns[start].ID
			p.dropTombstones = end == len(m.SortedRuns)
			return p
		}
	}
	return nil
}

// Compact runs at most one compaction if one is due. It reports whether it
// compacted.
func (c *Compactor) Compact(ctx context.Context, now time.Time) (bool, error) {
	if now.After(c.now) {
		c.now = now
	}
	return c.compact(ctx, false)
}

// CompactAll merges every L0 SST and sorted run into one run (tests, tools).
func (c *Compactor) CompactAll(ctx context.Context, now time.Time) (bool, error) {
	if now.After(c.now) {
		c.now = now
	}
	return c.compact(ctx, true)
}

func (c *Compactor) compact(ctx context.Context, all bool) (bool, error) {
	if c.failed != nil {
		return false, c.failed
	}
	m, err := openManifest(ctx, c.store)
	if err != nil {
		return false, err
	}
	if err := c.checkEpoch(m); err != nil {
		c.failed = err
		return false, err
	}
	var p *compactionPlan
	if all {
		if len(m.L0) > 0 || len(m.SortedRuns) > 1 {
			p = &compactionPlan{l0: m.L0, runs: m.SortedRuns, dropTombstones: true}
			for _, r := range m.SortedRuns {
				p.outputID = max(p.outputID, r.ID)
			}
			if len(m.L0) > 0 {
				p.outputID++
			}
		}
	} else {
		p = c.plan(m)
	}
	if p == nil {
		return false, nil
	}
	jobID := c.putID("job")
	started := c.nowMillis()
	m, err = commitManifest(ctx, c.store, m, manifestUpdate{
		putID: jobID, nowMillis: c.nowMillis(),
		mutate: func(m *Manifest) error {
			if err := c.checkEpoch(m); err != nil {
				return err
			}
			m.Compactions = append(m.Compactions, CompactionJob{ID: jobID, StartedMillis: started})
			return nil
		},
	})
	if err != nil {
		return false, c.note(err)
	}
	outputs, err := c.merge(ctx, p, m.RecentSnapshotMinSeq)
	if err != nil {
		return false, err
	}
	consumedL0 := map[string]bool{}
	for _, s := range p.l0 {
		consumedL0[s.Key] = true
	}
	consumedRuns := map[uint32]bool{}
	for _, r := range p.runs {
		consumedRuns[r.ID] = true
	}
	expire := c.nowTime().Add(c.opts.CompactionCheckpointLifetime).UnixMilli()
	_, err = commitManifest(ctx, c.store, m, manifestUpdate{
		putID: c.putID("commit"), nowMillis: c.nowMillis(),
		mutate: func(m *Manifest) error {
			if err := c.checkEpoch(m); err != nil {
				return err
			}
			l0 := m.L0[:0:0]
			for _, s := range m.L0 {
				if !consumedL0[s.Key] {
					l0 = append(l0, s)
				}
			}
			m.L0 = l0
			runs := m.SortedRuns[:0:0]
			for _, r := range m.SortedRuns {
				if !consumedRuns[r.ID] {
					runs = append(runs, r)
				}
			}
			if len(outputs) > 0 {
				runs = append(runs, SortedRun{ID: p.outputID, SSTs: outputs})
			}
			m.SortedRuns = runs
			m.sortRuns()
			jobs := m.Compactions[:0:0]
			for _, j := range m.Compactions {
				if j.ID != jobID {
					jobs = append(jobs, j)
				}
			}
			m.Compactions = jobs
			m.Checkpoints = append(m.Checkpoints, Checkpoint{
				ID: "compaction/" + jobID, ManifestID: m.ID, CreatedMillis: c.nowMillis(), ExpireMillis: expire,
			})
			return nil
		},
	})
	if err != nil {
		return false, c.note(err)
	}
	return true, nil
}

func (c *Compactor) note(err error) error {
	if errorsIsFenced(err) {
		c.failed = err
	}
	return err
}

// merge writes the plan's merged output as SSTs of about SSTBytesTarget.
func (c *Compactor) merge(ctx context.Context, p *compactionPlan, retention uint64) ([]SSTInfo, error) {
	var sources []rowIterator
	for _, s := range p.l0 {
		sources = append(sources, c.tables.iter(ctx, s, []byte{}, nil, false))
	}
	for _, r := range p.runs {
		sources = append(sources, &runIter{ctx: ctx, t: c.tables, ssts: r.SSTs, start: []byte{}})
	}
	groups := groupIter{src: newMergingIter(sources)}
	var inputBytes int64
	for _, s := range p.l0 {
		inputBytes += s.Size
	}
	for _, r := range p.runs {
		inputBytes += r.Bytes()
	}
	var outputs []SSTInfo
	var b *sstBuilder
	finish := func() error {
		if b == nil || b.info.Rows == 0 {
			b = nil
			return nil
		}
		data, info := b.finish()
		info.Key = fmt.Sprintf("compacted/%013d-c%d-%s-%d.sst", max(c.nowMillis(), 0), c.epoch, c.instance, c.nextSST())
		if _, err := c.store.Put(ctx, info.Key, data); err != nil {
			return storeErr(err, "write compacted SST %s", info.Key)
		}
		outputs = append(outputs, info)
		b = nil
		return nil
	}
	for {
		key, versions, ok, err := groups.nextGroup()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		out, err := collapseVersions(c.opts.MergeOperator, key, versions, retention, p.dropTombstones)
		if err != nil {
			return nil, err
		}
		if len(out) == 0 {
			continue
		}
		if b != nil && int64(b.estimatedBytes()) >= c.opts.SSTBytesTarget {
			if err := finish(); err != nil {
				return nil, err
			}
		}
		if b == nil {
			b = newSSTBuilder(c.compressor, c.opts.BlockBytes, c.opts.BloomBitsPerKey, min(c.opts.SSTBytesTarget, inputBytes))
		}
		for _, r := range out {
			b.add(r)
		}
	}
	if err := finish(); err != nil {
		return nil, err
	}
	return outputs, nil
}

func (c *Compactor) nextSST() uint64 {
	c.sstCounter++
	return c.sstCounter
}

// Compact runs the embedded compactor (claiming the compactor epoch on first
// use) and refreshes the writer's manifest view. It reports whether it
// compacted.
func (d *DB) Compact(ctx context.Context) (bool, error) {
	return d.compact(ctx, false)
}

// CompactAll merges all of L0 and every sorted run into one run.
func (d *DB) CompactAll(ctx context.Context) (bool, error) {
	return d.compact(ctx, true)
}

func (d *DB) compact(ctx context.Context, all bool) (bool, error) {
	if err := d.check(); err != nil {
		return false, err
	}
	// NB: the writer's manifest view is current for the fields a plan reads
	// (L0 and the sorted runs): only this writer and its embedded compactor
	// change them, and both leave d.manifest up to date. So when that view
	// needs no compaction, none is due: skip reading the newest manifest
	// (a LIST and two GETs on every Tick, i.e. every 100 ms per database,
	// for nothing). Only an external compactor (OpenCompactor elsewhere)
	// changes them behind the writer's back, and that compactor does its
	// own work; a plan from a stale view is re-checked against the newest
	// manifest below.
	if !all && (&Compactor{opts: d.opts}).plan(d.manifest) == nil {
		return false, nil
	}
	if d.compactor == nil {
		opts := d.opts
		opts.InstanceID = d.instance + "c"
		c, err := openCompactor(ctx, d.store, opts, d.tables)
		if err != nil {
			return false, err
		}
		d.compactor = c
	}
	d.compactor.now = d.nowTime()
	did, err := d.compactor.compact(ctx, all)
	if err != nil {
		return false, err
	}
	if did {
		if err := d.RefreshManifest(ctx); err != nil {
			return true, err
		}
	}
	return did, nil
}
