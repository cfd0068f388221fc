package engine

import (
	"sync/atomic"

	"github.com/rockstream/rockstream/errcode"
)

// queryMemory is the memory the ad-hoc queries running at the same time
// share (expr.MemoryReserver): each query's step is bounded by
// Config.StepBytesMax on its own, and all of them together by the same
// amount, so that many sessions running large joins at once stay within
// --memory-budget too. Views are bounded per step by the shard instead:
// whether a view's step succeeds must not depend on the queries that
// happen to run beside it.
type queryMemory struct {
	limitBytes int64
	usedBytes  atomic.Int64
}

// Reserve implements expr.MemoryReserver.
func (q *queryMemory) Reserve(bytes int64) error {
	if used := q.usedBytes.Add(bytes); used > q.limitBytes {
		q.usedBytes.Add(-bytes)
		return errcode.New(errcode.StepMemoryExceeded, "out of memory: the queries running now would together hold more than %d MiB of intermediate rows (their share of --memory-budget)", q.limitBytes>>20).
			WithDetail("queries running now hold about %d MiB", (used-bytes)>>20)
	}
	return nil
}

// Release implements expr.MemoryReserver.
func (q *queryMemory) Release(bytes int64) { q.usedBytes.Add(-bytes) }
