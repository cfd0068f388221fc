package kv

import (
	"bytes"
	"fmt"
)

// SortedGetter is implemented by Readers that answer many point reads in
// one ordered pass (a slate store seeks forward instead of searching from
// the top for every key).
type SortedGetter interface {
	// GetSorted calls fn(i, value, ok) for keys[i] in order, with the
	// answers Get would give. keys must be strictly ascending. value is
	// valid only during the call; an error from fn ends the pass and is
	// returned.
	GetSorted(keys [][]byte, fn func(i int, value []byte, ok bool) error) error
}

// GetSorted reads strictly ascending keys through r in one ordered pass
// when r is a SortedGetter, else one Get at a time.
func GetSorted(r Reader, keys [][]byte, fn func(i int, value []byte, ok bool) error) error {
	if g, ok := r.(SortedGetter); ok {
		return g.GetSorted(keys, fn)
	}
	for i, k := range keys {
		if i > 0 && bytes.Compare(keys[i-1], k) >= 0 {
			return fmt.Errorf("kv: GetSorted: keys not strictly ascending at %d", i)
		}
		v, ok, err := r.Get(k)
		if err != nil {
			return err
		}
		if err := fn(i, v, ok); err != nil {
			return err
		}
	}
	return nil
}

// GetSorted implements SortedGetter: keys with a pending put or delete
// are answered from the overlay; the others (and pending merge operands'
// bases) are read from the base in one ordered pass, and operands are
// merged onto what it returns.
func (t *overlayTxn) GetSorted(keys [][]byte, fn func(i int, value []byte, ok bool) error) error {
	if len(t.pending) == 0 {
		return GetSorted(t.base, keys, fn)
	}
	// pend[i] is keys[i]'s pending write + 1 (0: none).
	pend := make([]int32, len(keys))
	var baseKeys [][]byte
	var baseOf []int
	for i, k := range keys {
		if i > 0 && bytes.Compare(keys[i-1], k) >= 0 {
			return fmt.Errorf("kv: GetSorted: keys not strictly ascending at %d", i)
		}
		if p, _, ok := t.lookup(k, Hash(k)); ok {
			pend[i] = p + 1
			if t.pending[p].kind != pendingMerge {
				continue
			}
		}
		baseKeys = append(baseKeys, k)
		baseOf = append(baseOf, i)
	}
	next := 0
	// answer answers keys up to (excluding) upTo that need no base read.
	answer := func(upTo int) error {
		for ; next < upTo; next++ {
			p := &t.pending[pend[next]-1]
			if err := fn(next, p.value, p.kind == pendingPut); err != nil {
				return err
			}
		}
		return nil
	}
	err := GetSorted(t.base, baseKeys, func(j int, v []byte, ok bool) error {
		i := baseOf[j]
		if err := answer(i); err != nil {
			return err
		}
		next = i + 1
		if p := pend[i]; p != 0 {
			m, err := mergeOne(keys[i], v, ok, t.pending[p-1].value)
			if err != nil {
				return err
			}
			return fn(i, m, true)
		}
		return fn(i, v, ok)
	})
	if err != nil {
		return err
	}
	return answer(len(keys))
}
