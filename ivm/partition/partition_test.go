package partition

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/keyenc"
	"github.com/rockstream/rockstream/ivm/types"
)

// TestHashGolden freezes the partition hash. Buckets are stored in every
// shard key, so these values must never change: a failure here means
// stored data would be read from the wrong buckets. The first three are
// the XXH64 test values of the xxHash specification.
func TestHashGolden(t *testing.T) {
	long := make([]byte, 100)
	for i := range long {
		long[i] = byte(i*7 + 3)
	}
	for _, c := range []struct {
		in   []byte
		want uint64
	}{
		{[]byte(""), 0xef46db3751d8e999},
		{[]byte("a"), 0xd24ec4f1a98c6e5b},
		{[]byte("abc"), 0x44bc2cf5ad770999},
		{[]byte("message digest"), 0x066ed728fceeb3be},
		{[]byte("abcdefghijklmnopqrstuvwxyz"), 0xcfe1f278fa89835c},
		{[]byte("RockStream partition hash"), 0xe2fa23bd9238235e},
		{long, 0xa61f8d4c170fe531},
	} {
		if got := Hash(c.in); got != c.want {
			t.Errorf("Hash(%q) = %#016x, want %#016x", c.in, got, c.want)
		}
	}
}

// TestBucketGolden freezes the bucket of a few primary keys as the shard
// encodes them (keyenc, ascending), and the rendezvous placement of a few
// buckets: both are stored formats.
func TestBucketGolden(t *testing.T) {
	int8Key := func(v int64) []byte {
		return keyenc.EncodeColumn(nil, types.Type{Kind: types.KindInt8}, v, keyenc.Asc)
	}
	textKey := func(v string) []byte {
		return keyenc.EncodeColumn(nil, types.Type{Kind: types.KindText}, v, keyenc.Asc)
	}
	for _, c := range []struct {
		key  []byte
		want Bucket
	}{
		{int8Key(0), 402},
		{int8Key(1), 3103},
		{int8Key(42), 2190},
		{int8Key(-1), 3274},
		{textKey(""), 3223},
		{textKey("ada"), 45},
	} {
		if got := BucketOf(c.key); got != c.want {
			t.Errorf("BucketOf(%x) = %d, want %d", c.key, got, c.want)
		}
	}
	shards := []ShardID{0, 1, 2, 3}
	want := []ShardID{1, 2, 3, 1, 3, 2, 3, 2}
	for b := range want {
		if got := Rendezvous(Bucket(b), shards); got != want[b] {
			t.Errorf("Rendezvous(%d, %v) = %d, want %d", b, shards, got, want[b])
		}
	}
	if got, want := Hash(NewMap(7, []ShardID{0, 1, 2}).Encode()), uint64(0x6523ae0dc9ef2ec4); got != want {
		t.Errorf("encoded map hash %#016x, want %#016x", got, want)
	}
}

func shardSets() *rapid.Generator[[]ShardID] {
	// Tiny domain: shard ids collide and sets overlap often.
	return rapid.Custom(func(t *rapid.T) []ShardID {
		ids := rapid.SliceOfNDistinct(rapid.Uint32Range(0, 15), 1, 12, rapid.ID[uint32]).Draw(t, "shards")
		out := make([]ShardID, len(ids))
		for i, s := range ids {
			out[i] = ShardID(s)
		}
		return out
	})
}

// TestMapOwnership: every bucket has exactly one owner, a live shard, and
// the map depends only on the set of shards (not their order): two
// processes computing it agree.
func TestMapOwnership(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		shards := shardSets().Draw(t, "shards")
		m := NewMap(1, shards)
		shuffled := rapid.Permutation(shards).Draw(t, "shuffled")
		again := NewMap(1, shuffled)
		owned := 0
		for _, s := range m.Shards() {
			owned += len(m.Owned(s))
		}
		if owned != Buckets {
			t.Fatalf("shards own %d buckets in all, want %d", owned, Buckets)
		}
		for b := range Bucket(Buckets) {
			o := m.Owner(b)
			if !slices.Contains(shards, o) {
				t.Fatalf("bucket %d owned by %d, not one of %v", b, o, shards)
			}
			if again.Owner(b) != o {
				t.Fatalf("bucket %d: owner %d for %v, %d for %v", b, o, shards, again.Owner(b), shuffled)
			}
		}
	})
}

// TestMapAddShardMovesFewBuckets: adding a shard to N moves only buckets
// to the new shard, about Buckets/(N+1) of them; removing it moves them
// back and nothing else.
func TestMapAddShardMovesFewBuckets(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		shards := shardSets().Draw(t, "shards")
		added := ShardID(rapid.Uint32Range(0, 20).Filter(func(s uint32) bool { return !slices.Contains(shards, ShardID(s)) }).Draw(t, "added"))
		before := NewMap(1, shards)
		after := before.WithShards(append(slices.Clone(shards), added))
		if after.Version != before.Version+1 {
			t.Fatalf("version %d after %d", after.Version, before.Version)
		}
		moved := 0
		for b := range Bucket(Buckets) {
			if before.Owner(b) == after.Owner(b) {
				continue
			}
			moved++
			if after.Owner(b) != added {
				t.Fatalf("bucket %d moved from %d to %d, not to the new shard %d", b, before.Owner(b), after.Owner(b), added)
			}
		}
		// A binomial count: allow six standard deviations.
		p := 1 / float64(len(shards)+1)
		expected := Buckets * p
		slack := 6 * math.Sqrt(Buckets*p*(1-p))
		if math.Abs(float64(moved)-expected) > slack {
			t.Fatalf("adding shard %d to %d shards moved %d buckets, want %.0f ± %.0f", added, len(shards), moved, expected, slack)
		}
		back := after.WithShards(shards)
		for b := range Bucket(Buckets) {
			if back.Owner(b) != before.Owner(b) {
				t.Fatalf("bucket %d: owner %d after removing shard %d again, was %d", b, back.Owner(b), added, before.Owner(b))
			}
		}
	})
}

// TestMapEncodeRoundTrip: the stored form reads back as the same map, and
// damaged records are refused rather than read as some other map.
func TestMapEncodeRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := NewMap(rapid.Uint64().Draw(t, "version"), shardSets().Draw(t, "shards"))
		enc := m.Encode()
		got, err := DecodeMap(enc)
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != m.Version || !slices.Equal(got.Shards(), m.Shards()) || !slices.Equal(got.owners, m.owners) {
			t.Fatalf("decoded map differs")
		}
		if !bytes.Equal(got.Encode(), enc) {
			t.Fatalf("re-encoded map differs")
		}
		cut := rapid.IntRange(0, len(enc)-1).Draw(t, "cut")
		if _, err := DecodeMap(enc[:cut]); err == nil {
			t.Fatalf("a record cut to %d of %d bytes decoded", cut, len(enc))
		}
		if _, err := DecodeMap(append(slices.Clone(enc), 0)); err == nil {
			t.Fatalf("a record with a trailing byte decoded")
		}
	})
}

// TestBucketSpread: sequential integer keys (the common primary key)
// spread evenly over the buckets.
func TestBucketSpread(t *testing.T) {
	counts := make([]int, Buckets)
	const keys = 64 * Buckets
	for k := range int64(keys) {
		counts[BucketOf(keyenc.EncodeColumn(nil, types.Type{Kind: types.KindInt8}, k, keyenc.Asc))]++
	}
	for b, n := range counts {
		if n < 64/2 || n > 64*2 {
			t.Fatalf("bucket %d holds %d of %d sequential keys, want about 64", b, n, keys)
		}
	}
}

func BenchmarkBucketOfInt8Key(b *testing.B) {
	key := keyenc.EncodeColumn(nil, types.Type{Kind: types.KindInt8}, int64(123456789), keyenc.Asc)
	for b.Loop() {
		_ = BucketOf(key)
	}
}
