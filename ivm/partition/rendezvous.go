package partition

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// ShardID names a physical shard: the unit of placement and of
// single-writer storage (one shard DB each).
type ShardID uint32

// Rendezvous returns the shard of shards with the highest weight for b
// (highest-random-weight hashing): the weight of (b, s) is Hash of the
// bucket and shard ids, so it depends on that pair only. Removing a shard
// moves only the buckets it owned, and adding one takes from each old
// shard only the buckets where the new shard outweighs it (about
// 1/(N+1) of them). Equal weights go to the lower shard id. shards must
// not be empty.
func Rendezvous(b Bucket, shards []ShardID) ShardID {
	if len(shards) == 0 {
		panic("partition: rendezvous over no shards")
	}
	best, bestWeight := shards[0], weight(b, shards[0])
	for _, s := range shards[1:] {
		w := weight(b, s)
		if w > bestWeight || (w == bestWeight && s < best) {
			best, bestWeight = s, w
		}
	}
	return best
}

// weight is the rendezvous weight of bucket b on shard s.
func weight(b Bucket, s ShardID) uint64 {
	var buf [BucketBytes + 4]byte
	PutBucket(buf[:], b)
	binary.BigEndian.PutUint32(buf[BucketBytes:], uint32(s))
	return Hash(buf[:])
}

// Map is a versioned bucket map: the owner shard of every bucket (spec
// §7.1 bucket_map_version, §10.1). It is immutable: a change is a new Map
// with a higher version.
type Map struct {
	// Version increases with every change of ownership; it is stamped on
	// what was routed by the map, so traffic routed by an old map can be
	// told apart.
	Version uint64
	// shards are the live shards, ascending.
	shards []ShardID
	// owners has Buckets entries: owners[b] owns bucket b.
	owners []ShardID
}

// NewMap is the map placing every bucket by Rendezvous over shards.
func NewMap(version uint64, shards []ShardID) Map {
	live := slices.Clone(shards)
	slices.Sort(live)
	live = slices.Compact(live)
	if len(live) == 0 {
		panic("partition: a bucket map needs at least one shard")
	}
	owners := make([]ShardID, Buckets)
	for b := range owners {
		owners[b] = Rendezvous(Bucket(b), live)
	}
	return Map{Version: version, shards: live, owners: owners}
}

// NewMapOver is the map of shards placing every bucket by Rendezvous
// over owning only (a subset of shards): the other shards own no bucket
// (a partitioned layout's view shards).
func NewMapOver(version uint64, shards, owning []ShardID) Map {
	m := NewMap(version, owning)
	live := slices.Clone(shards)
	live = append(live, owning...)
	slices.Sort(live)
	m.shards = slices.Compact(live)
	return m
}

// Owning lists the shards that own at least one bucket, ascending.
func (m Map) Owning() []ShardID {
	var out []ShardID
	for _, s := range m.shards {
		if slices.Contains(m.owners, s) {
			out = append(out, s)
		}
	}
	return out
}

// WithShards is the next version of m placing every bucket over shards by
// Rendezvous (a scale event; moving the state of the buckets whose owner
// changes is the migration of spec §10.2, not this function's).
func (m Map) WithShards(shards []ShardID) Map {
	return NewMap(m.Version+1, shards)
}

// Valid reports whether m is a map (the zero Map is not).
func (m Map) Valid() bool { return len(m.owners) == Buckets && len(m.shards) > 0 }

// Owner is the shard that owns bucket b.
func (m Map) Owner(b Bucket) ShardID {
	return m.owners[b]
}

// OwnerOfKey is the shard that owns the bucket of a partition key.
func (m Map) OwnerOfKey(key []byte) ShardID {
	if len(m.shards) == 1 {
		// NB: one shard owns every bucket, so the key need not be hashed.
		return m.shards[0]
	}
	return m.owners[BucketOf(key)]
}

// Shards lists the live shards, ascending. The caller must not modify it.
func (m Map) Shards() []ShardID { return m.shards }

// Owned lists the buckets shard s owns, ascending.
func (m Map) Owned(s ShardID) []Bucket {
	var out []Bucket
	for b, o := range m.owners {
		if o == s {
			out = append(out, Bucket(b))
		}
	}
	return out
}

// mapFormat is the first byte of an encoded Map.
const mapFormat byte = 1

// Encode is the durable form of m (the control DB's bucket map record):
// format byte, uvarint version, uvarint shard count, the shards as
// uvarints, then each bucket's owner as a uvarint index into the shards.
// The owners are stored, not recomputed: the stored map is the truth even
// if a later build placed buckets differently.
func (m Map) Encode() []byte {
	if !m.Valid() {
		panic("partition: encoding an invalid bucket map")
	}
	dst := []byte{mapFormat}
	dst = binary.AppendUvarint(dst, m.Version)
	dst = binary.AppendUvarint(dst, uint64(len(m.shards)))
	index := map[ShardID]uint64{}
	for i, s := range m.shards {
		dst = binary.AppendUvarint(dst, uint64(s))
		index[s] = uint64(i)
	}
	for _, o := range m.owners {
		dst = binary.AppendUvarint(dst, index[o])
	}
	return dst
}

// DecodeMap reads a map written by Encode, checking that every bucket has
// exactly one live owner.
func DecodeMap(src []byte) (Map, error) {
	if len(src) == 0 || src[0] != mapFormat {
		return Map{}, fmt.Errorf("partition: bucket map record has format %x, this build reads %d", src[:min(len(src), 1)], mapFormat)
	}
	r := src[1:]
	next := func() (uint64, error) {
		v, n := binary.Uvarint(r)
		if n <= 0 {
			return 0, fmt.Errorf("partition: bucket map record is truncated")
		}
		r = r[n:]
		return v, nil
	}
	var m Map
	var err error
	if m.Version, err = next(); err != nil {
		return Map{}, err
	}
	count, err := next()
	if err != nil {
		return Map{}, err
	}
	if count == 0 || count > Buckets {
		return Map{}, fmt.Errorf("partition: bucket map record lists %d shards", count)
	}
	for range count {
		s, err := next()
		if err != nil {
			return Map{}, err
		}
		if s > uint64(^uint32(0)) || (len(m.shards) > 0 && ShardID(s) <= m.shards[len(m.shards)-1]) {
			return Map{}, fmt.Errorf("partition: bucket map record lists shard %d out of order", s)
		}
		m.shards = append(m.shards, ShardID(s))
	}
	m.owners = make([]ShardID, Buckets)
	for b := range m.owners {
		i, err := next()
		if err != nil {
			return Map{}, err
		}
		if i >= count {
			return Map{}, fmt.Errorf("partition: bucket %d is owned by shard index %d of %d", b, i, count)
		}
		m.owners[b] = m.shards[i]
	}
	if len(r) != 0 {
		return Map{}, fmt.Errorf("partition: bucket map record has %d trailing bytes", len(r))
	}
	return m, nil
}
