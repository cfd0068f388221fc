package control

import (
	"bytes"
	"sort"

	"github.com/rockstream/rockstream/ivm/kv"
)

// sortOps sorts a batch's ops by key (kv.WriteBatch's invariant).
func sortOps(ops []kv.Op) {
	sort.SliceStable(ops, func(i, j int) bool { return bytes.Compare(ops[i].Key, ops[j].Key) < 0 })
}
