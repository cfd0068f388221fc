package slate

import "sync/atomic"

// MemoryPool lets the databases of one process share one memtable and one
// unflushed-bytes budget (Options.Pool): a database whose load is heavy
// (the shard taking every commit) grows its memtable into what lighter
// ones (shards stepping views) leave unused, instead of each being held to
// an even split of the budget and flushing early while the others stay
// small.
//
// Each database publishes its own usage in its slot (Options.PoolSlot);
// one reopened in the same slot overwrites what the one before left. With
// a pool, a database's active memtable is frozen when the pool's
// memtables together reach MemtableBytesMax and its own holds at least an
// even share of it (so the largest freezes first), and a Write fails with
// ErrBackpressure when the pool's unflushed bytes together would exceed
// UnflushedBytesMax and its own exceed an even share: the pool's totals
// stay within the budgets however the load falls, up to one batch per
// database. Options.MemtableBytesMax and UnflushedBytesMax still bound
// each database alone.
//
// NB: the slots are atomics because the real runtime runs each database's
// owner on a goroutine of its own; the simulator runs them in one, in a
// fixed order, so a run stays deterministic.
type MemoryPool struct {
	memtableMax, unflushedMax int64
	memtable, unflushed       []atomic.Int64
}

// NewMemoryPool is a pool of slots databases sharing memtableMax bytes of
// active memtables and unflushedMax bytes of memtables and WAL not yet
// flushed.
func NewMemoryPool(memtableMax, unflushedMax int64, slots int) *MemoryPool {
	slots = max(slots, 1)
	return &MemoryPool{memtableMax: memtableMax, unflushedMax: unflushedMax, memtable: make([]atomic.Int64, slots), unflushed: make([]atomic.Int64, slots)}
}

func (p *MemoryPool) slot(i int) int { return min(max(i, 0), len(p.memtable)-1) }

// publish records slot i's active memtable and unflushed bytes.
func (p *MemoryPool) publish(i int, memtable, unflushed int64) {
	i = p.slot(i)
	p.memtable[i].Store(memtable)
	p.unflushed[i].Store(unflushed)
}

// memtableFull reports whether slot i, whose active memtable holds own
// bytes, is to freeze it: the pool's memtables reached their budget and
// its own holds an even share.
func (p *MemoryPool) memtableFull(i int, own int64) bool {
	return withOthers(p.memtable, p.slot(i), own) >= p.memtableMax && own >= p.memtableMax/int64(len(p.memtable))
}

// overBudget reports whether slot i may not grow its unflushed bytes to
// own: the pool's would exceed their budget, and its own exceed an even
// share.
func (p *MemoryPool) overBudget(i int, own int64) bool {
	return withOthers(p.unflushed, p.slot(i), own) > p.unflushedMax && own > p.unflushedMax/int64(len(p.unflushed))
}

// withOthers is own plus what every slot but i published in slots.
func withOthers(slots []atomic.Int64, i int, own int64) int64 {
	total := own
	for j := range slots {
		if j != i {
			total += slots[j].Load()
		}
	}
	return total
}
