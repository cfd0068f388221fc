package kv

import "encoding/binary"

// Hash is the 64-bit hash every in-memory IVM structure indexes keys by
// (the overlay, Memory, the group and aggregate caches): fixed and
// seedless, so structures indexed by it behave deterministically. It
// reads eight bytes at a time and mixes every input bit into both halves
// of the result, so tables may take their home position from the low bits
// or the high bits alike.
//
// NB: it replaced FNV-1a, whose high 32 bits cluster badly on keys that
// differ only in their last bytes (sequential integer group keys): the
// aggregate cache, which takes its home position from the high bits,
// probed ~30 entries per lookup with 1M such keys. TestHashSpreadsKeys
// checks the spread.
func Hash(key []byte) uint64 {
	const m = 0x9E3779B97F4A7C15
	h := uint64(len(key)) * m
	for len(key) >= 8 {
		h = (h ^ binary.LittleEndian.Uint64(key)) * m
		h ^= h >> 29
		key = key[8:]
	}
	var tail uint64
	for i, b := range key {
		tail |= uint64(b) << (8 * i)
	}
	h = (h ^ tail) * m
	// The finalizer of MurmurHash3 (fmix64): every input bit reaches
	// every output bit.
	h ^= h >> 33
	h *= 0xFF51AFD7ED558CCD
	h ^= h >> 33
	h *= 0xC4CEB9FE1A85EC53
	h ^= h >> 33
	return h
}
