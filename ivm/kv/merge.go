package kv

import (
	"encoding/binary"
	"fmt"
)

// Merge writes (spec §6.2). A merge operand is applied to a key's current
// value by the one IVM merge law, MergeValues, instead of replacing it, so a
// writer that knows the change but need not read the value can write it
// blindly: the overlay Txn resolves base + pending operands on Get and Scan,
// Memory resolves them on Apply, and the slate-backed store registers
// MergeValues as slate's merge operator (resolution on read and at
// compaction).
//
// The law is chosen by the value's first byte (its tag) and is associative
// by construction: today the only mergeable format is a vector of int64
// words added element-wise (two's-complement addition, which is
// associative and commutative). Floating-point sums are NOT associative and
// so have no mergeable format: writers keep read-modify-write for them.
//
//	base  = AddWords([]int64{3, 10})
//	delta = AddWords([]int64{1, -4})
//	MergeValues(k, base, true, [][]byte{delta}) == AddWords([]int64{4, 6})

// Merger is implemented by writers that accept merge operands (the overlay
// Txn). Writers that do not must be given whole values instead.
type Merger interface {
	// Merge applies operand to key's value through MergeValues.
	Merge(key, operand []byte) error
}

// Value tags of the merge law.
const (
	// TagAddWords is a mergeable vector of int64 words, added element-wise.
	TagAddWords byte = 0xA7
	// TagWords is the same layout marked NOT mergeable (e.g. it holds float
	// bits); MergeValues rejects it.
	TagWords byte = 0xA8
)

// AppendWords appends the encoding of words with the given tag (TagAddWords
// or TagWords): tag, count, then each word zigzag-varint encoded.
func AppendWords(dst []byte, tag byte, words []int64) []byte {
	dst = append(dst, tag)
	dst = binary.AppendUvarint(dst, uint64(len(words)))
	for _, w := range words {
		dst = binary.AppendVarint(dst, w)
	}
	return dst
}

// DecodeWords decodes an AppendWords value into dst (reused when it has
// room) and returns the words and the tag.
func DecodeWords(dst []int64, v []byte) ([]int64, byte, error) {
	if len(v) < 2 || (v[0] != TagAddWords && v[0] != TagWords) {
		return nil, 0, fmt.Errorf("kv: not a words value: %x", v)
	}
	tag := v[0]
	n, k := binary.Uvarint(v[1:])
	if k <= 0 || n > uint64(len(v)) {
		return nil, 0, fmt.Errorf("kv: corrupt words value: %x", v)
	}
	pos := 1 + k
	dst = dst[:0]
	for range n {
		w, k := binary.Varint(v[pos:])
		if k <= 0 {
			return nil, 0, fmt.Errorf("kv: corrupt words value: %x", v)
		}
		dst = append(dst, w)
		pos += k
	}
	if pos != len(v) {
		return nil, 0, fmt.Errorf("kv: trailing bytes in words value: %x", v)
	}
	return dst, tag, nil
}

// MergeValues is the IVM merge law: operands (oldest first) applied on top
// of base (hasBase false: the key had no value). It has slate's
// MergeOperator signature.
func MergeValues(key, base []byte, hasBase bool, operands [][]byte) ([]byte, error) {
	var scratch [16]int64
	sum := scratch[:0]
	first := true
	add := func(v []byte) error {
		if len(v) == 0 || v[0] != TagAddWords {
			return fmt.Errorf("kv: merge of a non-mergeable value under key %x", key)
		}
		if first {
			var err error
			sum, _, err = DecodeWords(sum, v)
			first = false
			return err
		}
		return addWords(key, sum, v)
	}
	if hasBase {
		if err := add(base); err != nil {
			return nil, err
		}
	}
	for _, o := range operands {
		if err := add(o); err != nil {
			return nil, err
		}
	}
	if first {
		return nil, fmt.Errorf("kv: merge without operands under key %x", key)
	}
	return AppendWords(make([]byte, 0, 2+len(sum)*3), TagAddWords, sum), nil
}

// addWords adds the words of the mergeable value v to sum in place.
func addWords(key []byte, sum []int64, v []byte) error {
	n, k := binary.Uvarint(v[1:])
	if k <= 0 || n != uint64(len(sum)) {
		return fmt.Errorf("kv: merge of a %x onto %d words under key %x", v, len(sum), key)
	}
	pos := 1 + k
	for i := range sum {
		w, k := binary.Varint(v[pos:])
		if k <= 0 {
			return fmt.Errorf("kv: corrupt words value: %x", v)
		}
		sum[i] += w
		pos += k
	}
	if pos != len(v) {
		return fmt.Errorf("kv: trailing bytes in words value: %x", v)
	}
	return nil
}

// mergeOne applies one operand to an optional base.
func mergeOne(key, base []byte, hasBase bool, operand []byte) ([]byte, error) {
	return MergeValues(key, base, hasBase, [][]byte{operand})
}

// appendMerged appends the merge of operand onto an optional base (as
// MergeValues) to dst, allocating nothing when dst has room.
func appendMerged(dst, key, base []byte, hasBase bool, operand []byte) ([]byte, error) {
	if len(operand) == 0 || operand[0] != TagAddWords || (hasBase && (len(base) == 0 || base[0] != TagAddWords)) {
		return nil, fmt.Errorf("kv: merge of a non-mergeable value under key %x", key)
	}
	var scratch [16]int64
	sum, _, err := DecodeWords(scratch[:0], operand)
	if err != nil {
		return nil, err
	}
	if hasBase {
		if err := addWords(key, sum, base); err != nil {
			return nil, err
		}
	}
	return AppendWords(dst, TagAddWords, sum), nil
}
