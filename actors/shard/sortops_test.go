package shard

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/kv"
)

// TestSortOpsMatchesBytesCompare: the chunked sort of a commit's ops
// orders keys exactly as bytes.Compare does, over keys with long shared
// prefixes, keys that are prefixes of others, zero bytes where a shorter
// key ends, and duplicates; some keys agree on a long stretch past where
// they first differ, so that ties go on to the next chunk.
func TestSortOpsMatchesBytesCompare(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		prefix := rapid.SliceOfN(rapid.ByteRange(0, 2), 0, 20).Draw(t, "prefix")
		middle := rapid.SliceOfN(rapid.ByteRange(0, 1), 10, 40).Draw(t, "middle")
		// Up to a few times radixMin, so that both sorts run.
		n := rapid.IntRange(0, 3*radixMin).Draw(t, "n")
		ops := make([]kv.Op, n)
		for i := range ops {
			tail := rapid.SliceOfN(rapid.ByteRange(0, 3), 0, 19).Draw(t, "tail")
			if rapid.Bool().Draw(t, "long tie") {
				head := rapid.SliceOfN(rapid.ByteRange(0, 1), 0, 2).Draw(t, "head")
				tail = append(append(head, middle[:rapid.IntRange(0, len(middle)).Draw(t, "middle length")]...), tail[:min(len(tail), 2)]...)
			}
			ops[i] = kv.Op{Key: append(slices.Clone(prefix), tail...), Value: binary.BigEndian.AppendUint32(nil, uint32(i))}
		}
		keys := make([][]byte, n)
		for i, op := range ops {
			keys[i] = slices.Clone(op.Key)
		}
		want := slices.Clone(ops)
		slices.SortStableFunc(want, func(x, y kv.Op) int { return bytes.Compare(x.Key, y.Key) })
		if rapid.Bool().Draw(t, "repack") {
			ops = sortRepackOps(ops)
		} else {
			sortOps(ops)
		}
		for i := range ops {
			if !bytes.Equal(ops[i].Key, want[i].Key) {
				t.Fatalf("position %d: key %x, want %x", i, ops[i].Key, want[i].Key)
			}
		}
		seen := map[uint32]bool{}
		for _, op := range ops {
			i := binary.BigEndian.Uint32(op.Value)
			if !bytes.Equal(op.Key, keys[i]) {
				t.Fatalf("op %d moved with key %x, not its own %x", i, op.Key, keys[i])
			}
			seen[i] = true
		}
		if len(seen) != n {
			t.Fatalf("sorted ops hold %d of the %d ops", len(seen), n)
		}
	})
}

// TestBucketOrderMatchesBytesCompare: a commit's rows of one table written
// in primary-key order (the keys' bytes after the bucket ascending), with
// a few other keys before, after and among them, are sorted by the one
// counting pass over their buckets (bucketOrder) exactly as bytes.Compare
// sorts them; rows out of order, repeated, or too many other keys take
// the general sort, with the same result.
func TestBucketOrderMatchesBytesCompare(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		head := rapid.IntRange(1, 6).Draw(t, "head")
		ref := rapid.SliceOfN(rapid.ByteRange(1, 3), head, head).Draw(t, "ref")
		n := rapid.IntRange(0, 300).Draw(t, "rows")
		inOrder := rapid.Bool().Draw(t, "in order")
		var ops []kv.Op
		key := uint32(rapid.IntRange(0, 5).Draw(t, "first key"))
		for i := 0; i < n; i++ {
			k := append(slices.Clone(ref), rapid.SliceOfN(rapid.ByteRange(0, 2), 2, 2).Draw(t, "bucket")...)
			if inOrder {
				key += uint32(rapid.IntRange(1, 3).Draw(t, "step"))
			} else {
				key = uint32(rapid.IntRange(0, 40).Draw(t, "key"))
			}
			k = binary.BigEndian.AppendUint32(k, key)
			if rapid.Bool().Draw(t, "longer") {
				k = append(k, 0)
			}
			ops = append(ops, kv.Op{Key: k})
		}
		for range rapid.IntRange(0, bucketOrderOthersMax+2).Draw(t, "others") {
			k := rapid.SliceOfN(rapid.ByteRange(0, 4), 0, head+3).Draw(t, "other")
			at := rapid.IntRange(0, len(ops)).Draw(t, "at")
			ops = slices.Insert(ops, at, kv.Op{Key: k})
		}
		for i := range ops {
			ops[i].Value = binary.BigEndian.AppendUint32(nil, uint32(i))
		}
		want := slices.Clone(ops)
		slices.SortStableFunc(want, func(x, y kv.Op) int { return bytes.Compare(x.Key, y.Key) })
		order, ok := bucketOrder(ops, head)
		if !ok {
			order = nil
			for i := range want {
				order = append(order, int32(binary.BigEndian.Uint32(want[i].Value)))
			}
		}
		if len(order) != len(ops) {
			t.Fatalf("%d ops in order, want %d", len(order), len(ops))
		}
		seen := map[int32]bool{}
		for j, i := range order {
			if seen[i] {
				t.Fatalf("op %d placed twice", i)
			}
			seen[i] = true
			if !bytes.Equal(ops[i].Key, want[j].Key) {
				t.Fatalf("position %d: key %x, want %x (fast path %v)", j, ops[i].Key, want[j].Key, ok)
			}
		}
		sorted := sortRepackOps(ops)
		for j := range sorted {
			if !bytes.Equal(sorted[j].Key, want[j].Key) {
				t.Fatalf("sortRepackOps position %d: key %x, want %x", j, sorted[j].Key, want[j].Key)
			}
		}
	})
}

// TestBucketOrderTaken: a bulk load's rows in key order, with the
// delta-log and last-epoch keys, take the counting pass.
func TestBucketOrderTaken(t *testing.T) {
	var ops []kv.Op
	for i := range 10_000 {
		k := append(bytes.Repeat([]byte{7}, 18), byte(i*7919>>8), byte(i*7919))
		ops = append(ops, kv.Op{Key: binary.BigEndian.AppendUint32(k, uint32(i))})
	}
	ops = append(ops, kv.Op{Key: []byte{1, 2, 3}}, kv.Op{Key: []byte{9}})
	if _, ok := bucketOrder(ops, 18); !ok {
		t.Fatal("rows in key order took the general sort")
	}
	ops[5], ops[6] = ops[6], ops[5]
	if _, ok := bucketOrder(ops, 18); ok {
		t.Fatal("rows out of key order took the counting pass")
	}
}

// BenchmarkSortOps sorts a 100,000-row commit's row keys (one table,
// scattered buckets) as commitBatch.batch does.
func BenchmarkSortOps(b *testing.B) {
	const n = 100_000
	keys := make([][]byte, n)
	// The keys back to back in write order, as a commit's arena holds
	// them (a 9-byte key of an int8 primary key), and a few keys of
	// other kinds (the log entry's, the last epoch's).
	var arena []byte
	for i := range keys {
		from := len(arena)
		arena = append(arena, bytes.Repeat([]byte{7}, 18)...)
		arena = append(arena, byte(i*7919>>8), byte(i*7919), 1, 0, 0, 0, 0, byte(i>>16), byte(i>>8), byte(i))
		keys[i] = arena[from:len(arena):len(arena)]
	}
	keys[n/3], keys[n/2], keys[n-1] = []byte{1, 2, 3}, []byte{1, 2, 4}, []byte{9}
	ops := make([]kv.Op, n)
	b.Run("chunks", func(b *testing.B) {
		for b.Loop() {
			for i := range ops {
				ops[i] = kv.Op{Key: keys[i]}
			}
			sortOps(ops)
		}
	})
	b.Run("repack", func(b *testing.B) {
		for b.Loop() {
			for i := range ops {
				ops[i] = kv.Op{Key: keys[i]}
			}
			sortRepackOps(ops)
		}
	})
	b.Run("bytes.Compare", func(b *testing.B) {
		for b.Loop() {
			for i := range ops {
				ops[i] = kv.Op{Key: keys[i]}
			}
			slices.SortFunc(ops, func(x, y kv.Op) int { return bytes.Compare(x.Key, y.Key) })
		}
	})
}

// TestGetManyMatchesGet: getMany answers every key (in any order, with
// repeats) as Get does, with and without a prefix shared by the keys, over
// stores where the prefix holds rows and where it holds none.
func TestGetManyMatchesGet(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		prefix := []byte{7, 7}
		store := kv.NewMemory()
		for i := range rapid.IntRange(0, 40).Draw(t, "stored") {
			p := prefix
			if rapid.Bool().Draw(t, "other prefix") {
				p = []byte{7, 8}
			}
			k := append(slices.Clone(p), rapid.SliceOfN(rapid.ByteRange(0, 3), 0, 3).Draw(t, "stored key")...)
			if err := store.Put(k, binary.BigEndian.AppendUint32(nil, uint32(i))); err != nil {
				t.Fatal(err)
			}
		}
		keys := make([][]byte, rapid.IntRange(0, 30).Draw(t, "n"))
		for i := range keys {
			keys[i] = append(slices.Clone(prefix), rapid.SliceOfN(rapid.ByteRange(0, 3), 0, 3).Draw(t, "key")...)
		}
		var withPrefix []byte
		if rapid.Bool().Draw(t, "with prefix") {
			withPrefix = prefix
		}
		answered := make([]bool, len(keys))
		err := getMany(store, withPrefix, keys, func(i int, v []byte, ok bool) error {
			want, wantOK, err := store.Get(keys[i])
			if err != nil {
				return err
			}
			if ok != wantOK || !bytes.Equal(v, want) {
				t.Fatalf("key %x: %x %v, Get says %x %v", keys[i], v, ok, want, wantOK)
			}
			if answered[i] {
				t.Fatalf("key %d answered twice", i)
			}
			answered[i] = true
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range answered {
			if !a {
				t.Fatalf("key %d not answered", i)
			}
		}
	})
}
