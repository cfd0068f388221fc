package sql

import (
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/adhoc"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// Snapshot is what ad-hoc execution reads: the current rows of a base
// relation (table, source or materialized view output) as of one read
// frontier (adhoc.Snapshot).
type Snapshot = adhoc.Snapshot

// Result is the output of an ad-hoc query.
type Result = adhoc.Result

// RunQuery runs a compiled query once over a snapshot (package adhoc):
// its plan, then ORDER BY / OFFSET / LIMIT, without hidden sort columns.
func RunQuery(q *Query, snap Snapshot, env *expr.Env) (*Result, error) {
	return adhoc.RunQuery(q.Query, snap, env)
}

// RunPlan runs any PlanIR tree once over a snapshot and returns its rows
// (multiplicities expanded, unordered). DML plans run through it too.
func RunPlan(n plan.Node, snap Snapshot, env *expr.Env) ([]types.Row, error) {
	return adhoc.RunPlan(n, snap, env)
}
