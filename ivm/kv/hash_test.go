package kv

import (
	"encoding/binary"
	"testing"
)

// TestHashSpreadsKeys checks that Hash spreads keys that differ only in
// their last bytes (sequential integer keys, as group and join keys of
// integer columns are) over both halves of its result: a linear-probing
// table at half load that takes its home position from the low bits, or
// from the high 32 bits (the aggregate cache), probes few entries per
// lookup. FNV-1a failed this (about 30 probes from the high bits).
func TestHashSpreadsKeys(t *testing.T) {
	const keys = 1 << 16
	for _, prefixLen := range []int{1, 18} {
		var all [][]byte
		for k := range uint64(keys) {
			key := make([]byte, prefixLen, prefixLen+8)
			key[0] = PrefixOpState
			all = append(all, binary.BigEndian.AppendUint64(key, k))
		}
		for _, high := range []bool{false, true} {
			if avg := averageProbes(all, high); avg > 2 {
				t.Errorf("prefix %d bytes, high bits %v: %.1f probes per lookup, want <= 2", prefixLen, high, avg)
			}
		}
	}
}

// averageProbes inserts keys into a linear-probing table of twice their
// number and returns the average probes of a successful lookup.
func averageProbes(keys [][]byte, high bool) float64 {
	size := 1
	for size < 2*len(keys) {
		size *= 2
	}
	mask := uint64(size - 1)
	home := func(h uint64) uint64 {
		if high {
			h >>= 32
		}
		return h & mask
	}
	table := make([]int, size)
	probes := 0
	for n, k := range keys {
		i := home(Hash(k))
		for ; table[i] != 0; i = (i + 1) & mask {
			probes++
		}
		probes++
		table[i] = n + 1
	}
	return float64(probes) / float64(len(keys))
}
