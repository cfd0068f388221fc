package partition

import (
	"encoding/binary"
	"math/bits"
)

// Hash is the partition hash: XXH64 with seed 0, as specified by the
// xxHash project (https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md).
// It is a published algorithm with published test values, defined on
// bytes with explicit little-endian reads, so it is the same on every
// platform and in every version of this program; it reads 32 bytes per
// round, so hashing a key costs a few nanoseconds.
//
// NB: this is deliberately not kv.Hash, the hash of in-memory tables,
// which may be replaced whenever a better one is found (it already
// was once). A partition hash can never change once a bucket is stored;
// TestHashGolden freezes it.
func Hash(key []byte) uint64 {
	n := len(key)
	var h uint64
	p := key
	if n >= 32 {
		p1, p2 := prime1, prime2 // variables: the sums wrap, as the spec says
		v1 := p1 + p2
		v2 := p2
		v3 := uint64(0)
		v4 := -p1
		for len(p) >= 32 {
			v1 = round(v1, binary.LittleEndian.Uint64(p[0:8]))
			v2 = round(v2, binary.LittleEndian.Uint64(p[8:16]))
			v3 = round(v3, binary.LittleEndian.Uint64(p[16:24]))
			v4 = round(v4, binary.LittleEndian.Uint64(p[24:32]))
			p = p[32:]
		}
		h = bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) + bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
		h = mergeRound(h, v1)
		h = mergeRound(h, v2)
		h = mergeRound(h, v3)
		h = mergeRound(h, v4)
	} else {
		h = prime5
	}
	h += uint64(n)
	for ; len(p) >= 8; p = p[8:] {
		h ^= round(0, binary.LittleEndian.Uint64(p[:8]))
		h = bits.RotateLeft64(h, 27)*prime1 + prime4
	}
	if len(p) >= 4 {
		h ^= uint64(binary.LittleEndian.Uint32(p[:4])) * prime1
		h = bits.RotateLeft64(h, 23)*prime2 + prime3
		p = p[4:]
	}
	for _, b := range p {
		h ^= uint64(b) * prime5
		h = bits.RotateLeft64(h, 11) * prime1
	}
	h ^= h >> 33
	h *= prime2
	h ^= h >> 29
	h *= prime3
	h ^= h >> 32
	return h
}

// The XXH64 primes.
const (
	prime1 uint64 = 11400714785074694791
	prime2 uint64 = 14029467366897019727
	prime3 uint64 = 1609587929392839161
	prime4 uint64 = 9650029242287828579
	prime5 uint64 = 2870177450012600261
)

func round(acc, input uint64) uint64 {
	acc += input * prime2
	acc = bits.RotateLeft64(acc, 31)
	return acc * prime1
}

func mergeRound(acc, val uint64) uint64 {
	val = round(0, val)
	acc ^= val
	return acc*prime1 + prime4
}
