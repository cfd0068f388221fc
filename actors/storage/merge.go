package storage

import (
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/slate"
)

// mergeOperator is the merge operator every database is opened with: the
// IVM merge law kv.MergeValues (spec §6.2). Slate applies it when a read
// meets merge operands and when flush or compaction folds operand chains,
// so writer, compactor and readers agree by construction. kv.Op{Merge:
// true} writes become slate merge rows (see apply).
func mergeOperator() slate.MergeOperator { return kv.MergeValues }
