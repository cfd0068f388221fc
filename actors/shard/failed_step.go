package shard

import "github.com/rockstream/rockstream/errcode"

// viewFault reports whether err, returned by a view's step, is the view's
// own and deterministic: the same deltas would fail the same way again,
// so the view fails (failMaintained, failed.go; a backfill fails at once)
// instead of the epoch step of every view. Two errors are:
//
//   - RS-5502, a step over its memory bound;
//
//   - RS-3503, a WITH RECURSIVE fixpoint that does not converge within its
//     iteration bound (UNION ALL over a cycle, which PostgreSQL runs
//     forever).
//
//     maintained ──step fails (viewFault)──► failed ──sync: backfill succeeds──► maintained
func viewFault(err error) bool {
	return errcode.Has(err, errcode.StepMemoryExceeded) || errcode.Has(err, errcode.RecursionNotConverging)
}
