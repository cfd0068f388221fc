package slate

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Kind is what a row records for its key at its sequence number.
type Kind uint8

const (
	// KindValue is a put: the key's value from this seq on.
	KindValue Kind = 1
	// KindTombstone is a delete: it hides every older version.
	KindTombstone Kind = 2
	// KindMerge is a merge operand, resolved against older versions on read,
	// flush and compaction by the DB's MergeOperator.
	KindMerge Kind = 3
)

func (k Kind) String() string {
	switch k {
	case KindValue:
		return "value"
	case KindTombstone:
		return "tombstone"
	case KindMerge:
		return "merge"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// row is one version of one key. Rows sort by key ascending, then seq
// descending (newest first), the order of every iterator in this package.
type row struct {
	key   []byte
	seq   uint64
	kind  Kind
	value []byte
}

func (r row) encodedSize() int { return len(r.key) + len(r.value) + 24 }

// compareRows orders by (key asc, seq desc).
func compareRows(aKey []byte, aSeq uint64, bKey []byte, bSeq uint64) int {
	if c := bytes.Compare(aKey, bKey); c != 0 {
		return c
	}
	switch {
	case aSeq > bSeq:
		return -1
	case aSeq < bSeq:
		return 1
	}
	return 0
}

// appendRow encodes r: uvarint keyLen | key | uvarint seq | kind | uvarint valueLen | value.
func appendRow(dst []byte, r row) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(r.key)))
	dst = append(dst, r.key...)
	dst = binary.AppendUvarint(dst, r.seq)
	dst = append(dst, byte(r.kind))
	dst = binary.AppendUvarint(dst, uint64(len(r.value)))
	dst = append(dst, r.value...)
	return dst
}

// decodeRow decodes one row from src, returning the rest. The returned slices
// alias src.
func decodeRow(src []byte) (row, []byte, error) {
	var r row
	n, w := binary.Uvarint(src)
	if w <= 0 || uint64(len(src)-w) < n {
		return r, nil, fmt.Errorf("bad row key length")
	}
	src = src[w:]
	r.key = src[:n:n]
	src = src[n:]
	seq, w := binary.Uvarint(src)
	if w <= 0 || len(src) < w+1 {
		return r, nil, fmt.Errorf("bad row seq")
	}
	r.seq = seq
	src = src[w:]
	r.kind = Kind(src[0])
	if r.kind < KindValue || r.kind > KindMerge {
		return r, nil, fmt.Errorf("bad row kind %d", src[0])
	}
	src = src[1:]
	n, w = binary.Uvarint(src)
	if w <= 0 || uint64(len(src)-w) < n {
		return r, nil, fmt.Errorf("bad row value length")
	}
	src = src[w:]
	r.value = src[:n:n]
	return r, src[n:], nil
}
