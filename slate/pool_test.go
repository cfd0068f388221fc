package slate

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/rockstream/rockstream/slate/objstore"
)

// TestMemoryPoolShares: two databases sharing a pool. The busy one grows
// its memtable past an even split while the other is idle (an even split
// froze it at half), freezes once the pool's memtables reach the pool's
// budget, and a Write past the pool's unflushed budget is refused once
// the writer holds more than its share; the idle one still writes.
func TestMemoryPoolShares(t *testing.T) {
	ctx := context.Background()
	clock := newTestClock()
	const memtable, unflushed = 8 << 10, 16 << 10
	pool := NewMemoryPool(memtable, unflushed, 2)
	open := func(slot int) *DB {
		opts := testOptions(clock)
		// NB: each alone may hold far more: only the pool bounds them.
		opts.MemtableBytesMax, opts.UnflushedBytesMax = 1<<20, 4<<20
		opts.WALBufferBytesMax = 1 << 20
		opts.Pool, opts.PoolSlot = pool, slot
		d, err := Open(ctx, objstore.NewMemory(), "db", opts)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	busy, idle := open(0), open(1)
	value := make([]byte, 200)
	put := func(d *DB, i int) error {
		_, err := d.Put(ctx, []byte(fmt.Sprintf("k%05d", i)), value, WriteOptions{})
		return err
	}
	if err := put(idle, 0); err != nil {
		t.Fatal(err)
	}
	i := 0
	for ; len(busy.immutables) == 0 && i < 1000; i++ {
		if err := put(busy, i); err != nil {
			t.Fatal(err)
		}
	}
	frozen := busy.immutables[0].mt.bytes
	if frozen <= memtable/2 {
		t.Fatalf("the busy database froze its memtable at %d bytes, an even split of the pool's %d", frozen, memtable)
	}
	if total := frozen + idle.memtable.bytes; total < memtable || frozen > memtable {
		t.Fatalf("froze at %d bytes with the pool's memtables at %d of %d", frozen, total, memtable)
	}
	var err error
	for ; err == nil && i < 2000; i++ {
		err = put(busy, i)
	}
	if !errors.Is(err, ErrBackpressure) {
		t.Fatalf("no backpressure past the pool's unflushed budget: %v", err)
	}
	if got := busy.unflushedBytes() + idle.unflushedBytes(); got > unflushed+int64(len(value))+64 {
		t.Fatalf("the pool's unflushed bytes %d exceed its budget %d", got, unflushed)
	}
	if err := put(idle, 1); err != nil {
		t.Fatalf("the idle database, under its share, was refused: %v", err)
	}
	if err := busy.FlushMemtable(ctx); err != nil {
		t.Fatal(err)
	}
	if err := put(busy, i); err != nil {
		t.Fatalf("write after the flush: %v", err)
	}
}
