package kv

import (
	"bytes"
	"cmp"
	"encoding/binary"

	"github.com/RaduBerinde/btreemap"
)

// btreeDegree is the B-tree fan-out of the in-memory structures: wide nodes
// keep lookups cache-friendly for millions of keys.
const btreeDegree = 32

// treeKey is a key with its first 32 bytes (zero-padded, big-endian) held
// inline, so most comparisons inside a B-tree node touch no other memory:
// IVM keys share an 18-byte prefix (namespace, kind, op id) and differ
// within the next few bytes. Comparing the padded heads agrees with
// bytes.Compare on the full keys whenever the heads differ; equal heads fall
// back to the full keys.
type treeKey struct {
	h0, h1, h2, h3 uint64
	full           []byte
}

func makeTreeKey(k []byte) treeKey {
	var head [32]byte
	copy(head[:], k)
	return treeKey{
		h0:   binary.BigEndian.Uint64(head[0:]),
		h1:   binary.BigEndian.Uint64(head[8:]),
		h2:   binary.BigEndian.Uint64(head[16:]),
		h3:   binary.BigEndian.Uint64(head[24:]),
		full: k,
	}
}

func compareTreeKeys(a, b treeKey) int {
	if a.h0 != b.h0 {
		return cmp.Compare(a.h0, b.h0)
	}
	if a.h1 != b.h1 {
		return cmp.Compare(a.h1, b.h1)
	}
	if a.h2 != b.h2 {
		return cmp.Compare(a.h2, b.h2)
	}
	if a.h3 != b.h3 {
		return cmp.Compare(a.h3, b.h3)
	}
	return bytes.Compare(a.full, b.full)
}

func newTree[V any]() *btreemap.BTreeMap[treeKey, V] {
	return btreemap.New[treeKey, V](btreeDegree, compareTreeKeys)
}

// scanTree calls fn for the keys in [start, end) (end nil: unbounded) in
// order; fn returning ErrStop ends the scan without error.
func scanTree[V any](tree *btreemap.BTreeMap[treeKey, V], start, end []byte, fn func(k []byte, v V) error) error {
	upper := btreemap.Max[treeKey]()
	if end != nil {
		upper = btreemap.LT(makeTreeKey(end))
	}
	var err error
	tree.AscendFunc(btreemap.GE(makeTreeKey(start)), upper, func(k treeKey, v V) bool {
		err = fn(k.full, v)
		return err == nil
	})
	if err == ErrStop {
		return nil
	}
	return err
}
