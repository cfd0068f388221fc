package op

import (
	"fmt"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// statePartitionKey is the partition key that operator o's state for an
// input row of input uses (arrange's package comment: what an exchange in
// front of o would route by), or ok false if o keeps no such state.
func statePartitionKey(o Operator, input int, row types.Row) (key []byte, ok bool) {
	switch o := o.(type) {
	case *Aggregate:
		return appendKey(nil, o.keyTypes, row, o.spec.GroupBy), true
	case *Join:
		if input == 0 {
			return appendKey(nil, o.leftTypes, row, o.spec.LeftKeys), true
		}
		return appendKey(nil, o.rightTypes, row, o.spec.RightKeys), true
	case *Distinct:
		return appendKey(nil, o.types, row, o.cols), true
	case *SetOp:
		return appendKey(nil, o.types, row, o.cols), true
	case *TopK:
		return appendKey(nil, o.partTypes, row, o.spec.PartitionBy), true
	case *Window:
		return appendKey(nil, o.partTypes, row, o.spec.PartitionBy), true
	case topKWindow:
		return statePartitionKey(o.topK, input, row)
	case *Session:
		return appendKey(nil, o.keyTypes, row, o.spec.Keys), true
	case *Integrate, *Delay, *Differentiate:
		return zset.EncodeRow(nil, row), true
	}
	return nil, false
}

// checkStateBuckets asserts that every key operator's arrangements hold in
// store carries, right after the arrangement prefix, the bucket of a
// partition key that some input row had (partKeys) and that the key
// continues with that partition key: so all state of one partition key
// is one range of its bucket. The NOT IN join's right-side totals are
// global state: their partition key is empty.
func checkStateBuckets(t *rapid.T, store kv.Reader, operator Operator, partKeys map[string]bool) {
	st, ok := operator.(Stateful)
	if !ok {
		return
	}
	if a, ok := operator.(*Aggregate); ok && len(a.spec.GroupBy) == 0 {
		// A global aggregate keeps its one group even with no input.
		partKeys[""] = true
	}
	for _, a := range st.Arrangements() {
		prefix := a.Prefix()
		global := prefix[1] == arrange.KindJoinMeta || prefix[1] == arrange.KindTemporal
		err := kv.ScanPrefix(store, prefix, func(k, _ []byte) error {
			b, ok := partition.ReadBucket(k[len(prefix):])
			if !ok {
				return fmt.Errorf("state key %x carries no bucket", k)
			}
			rest := string(k[len(prefix)+partition.BucketBytes:])
			if global {
				if b != partition.BucketOf(nil) {
					return fmt.Errorf("global state key %x is not in the empty key's bucket", k)
				}
				return nil
			}
			for p := range partKeys { //lint:maprange any match will do
				if len(rest) >= len(p) && rest[:len(p)] == p && partition.BucketOf([]byte(p)) == b {
					return nil
				}
			}
			return fmt.Errorf("state key %x (kind %x) starts with no input row's partition key in bucket %d", k, prefix[1], b)
		})
		if err != nil {
			t.Fatalf("%T: %v", operator, err)
		}
	}
}
