// Package adhoc is the ad-hoc executor: it runs a compiled plan once over
// a snapshot of the relations it reads, with the operators a view is
// maintained by (the circuit runs one delta from empty), after evaluating
// what views refuse: uncorrelated subqueries left in place, correlated ones
// row by row (correlated.go), recursive CTEs by PostgreSQL's iteration
// (recursive.go) and functions in FROM (srf.go). The compiler's front door
// (ivm/sql.RunQuery, RunPlan) calls it; ORDER BY, OFFSET and LIMIT are
// applied to the rows here.
package adhoc

import (
	"sort"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/incr"
	"github.com/rockstream/rockstream/ivm/sql/lower"
	"github.com/rockstream/rockstream/ivm/sql/opt"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Snapshot is what ad-hoc execution reads: the current rows of a base
// relation (table, source or materialized view output) as of one read
// frontier. Tables return each row with weight 1.
type Snapshot interface {
	ScanRelation(rel *catalog.Relation) (zset.Batch, error)
}

// Result is the output of an ad-hoc query.
type Result struct {
	Columns []plan.Column
	Rows    []types.Row
}

// adhocViewID is the sink id of an ad-hoc circuit (one view per circuit).
const adhocViewID circuit.ViewID = 1

// Query is what RunQuery runs of a compiled query (ivm/sql.Query).
type Query struct {
	// Plan produces the result rows (hidden ORDER BY columns may trail
	// the visible ones).
	Plan plan.Node
	// Columns is the visible result schema.
	Columns []plan.Column
	// Order, Limit, Offset are applied after running Plan (Limit < 0: none).
	Order  []plan.SortKey
	Limit  int64
	Offset int64
	// LimitParam / OffsetParam are N when LIMIT / OFFSET is $N (0: none).
	LimitParam, OffsetParam int
}

// RunQuery runs a compiled query on the engine: its plan is built into a
// circuit that runs once over the snapshot as a single delta from empty
// (the same operators a view uses), then ORDER BY / OFFSET / LIMIT are
// applied and hidden sort columns dropped.
func RunQuery(q Query, snap Snapshot, env *expr.Env) (*Result, error) {
	rows, err := RunPlan(q.Plan, snap, env)
	if err != nil {
		return nil, err
	}
	if len(q.Order) > 0 {
		cols := q.Plan.Schema()
		sort.SliceStable(rows, func(i, j int) bool {
			return compareRows(cols, q.Order, rows[i], rows[j]) < 0
		})
	}
	limit, offset := q.Limit, q.Offset
	paramValue := func(n int, what string) (int64, bool, error) {
		if n == 0 {
			return 0, false, nil
		}
		if env == nil || n > len(env.Params) {
			return 0, false, errcode.New(errcode.SQLSemanticError, "there is no parameter $%d", n).WithSQLState("08P01")
		}
		v := env.Params[n-1]
		if v == nil {
			return -1, true, nil
		}
		i, ok := v.(int64)
		if !ok || i < 0 {
			return 0, false, errcode.New(errcode.SQLSemanticError, "%s must not be negative", what).WithSQLState(map[string]string{"LIMIT": "2201W", "OFFSET": "2201X"}[what])
		}
		return i, true, nil
	}
	if v, ok, err := paramValue(q.LimitParam, "LIMIT"); err != nil {
		return nil, err
	} else if ok {
		limit = v
	}
	if v, ok, err := paramValue(q.OffsetParam, "OFFSET"); err != nil {
		return nil, err
	} else if ok {
		offset = max(v, 0)
	}
	if offset > 0 {
		if offset >= int64(len(rows)) {
			rows = nil
		} else {
			rows = rows[offset:]
		}
	}
	if limit >= 0 && limit < int64(len(rows)) {
		rows = rows[:limit]
	}
	width := len(q.Columns)
	for i, r := range rows {
		if len(r) > width {
			rows[i] = r[:width]
		}
	}
	return &Result{Columns: q.Columns, Rows: rows}, nil
}

// compareRows orders two rows by ORDER BY keys.
func compareRows(cols []plan.Column, keys []plan.SortKey, a, b types.Row) int {
	for _, k := range keys {
		t := cols[k.Col].Type
		var c int
		if k.NullsFirst {
			c = types.CompareNullsFirst(t, a[k.Col], b[k.Col])
		} else {
			c = types.CompareNullsLast(t, a[k.Col], b[k.Col])
		}
		if k.Desc {
			// NULL placement is explicit in NullsFirst, so only the
			// non-NULL order flips.
			if a[k.Col] != nil && b[k.Col] != nil {
				c = -c
			}
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// RunPlan runs any PlanIR tree once over a snapshot and returns its rows
// (multiplicities expanded, unordered). DML plans run through it too.
func RunPlan(n plan.Node, snap Snapshot, env *expr.Env) ([]types.Row, error) {
	n, err := expandRecursive(n, snap, env)
	if err != nil {
		return nil, err
	}
	n, err = inlineSubqueries(n, snap, env)
	if err != nil {
		return nil, err
	}
	if n, err = evalCorrelated(n, snap, env); err != nil {
		return nil, err
	}
	if n, err = expandFuncScans(n, env); err != nil {
		return nil, err
	}
	if err := opt.CheckMaintainable(stripVolatile(n)); err != nil {
		e, _ := errcode.As(err)
		return nil, errcode.New(errcode.SQLFeatureNotSupported, "%s", e.Message).WithDetail("%s", e.Detail)
	}
	b := circuit.NewBuilder()
	var next circuit.SourceID
	srcs := incr.NewSources(func(*catalog.Relation) circuit.SourceID { next++; return next })
	var rels []*catalog.Relation
	collectScans(n, &rels)
	out, err := incr.Build(b, n, srcs, lower.Lowerer{})
	if err != nil {
		return nil, adhocError(err)
	}
	b.Sink(adhocViewID, out)
	c, err := b.Build(circuit.Config{Env: env})
	if err != nil {
		return nil, errcode.Wrap(errcode.InternalError, err, "building ad-hoc circuit")
	}
	inputs := map[circuit.SourceID]zset.Batch{}
	for _, rel := range rels {
		id, ok := srcs.SourceID(rel.ID)
		if !ok {
			continue
		}
		if _, done := inputs[id]; done {
			continue
		}
		batch, err := snap.ScanRelation(rel)
		if err != nil {
			return nil, err
		}
		inputs[id] = batch
	}
	for _, k := range srcs.Constants {
		batch, err := k.Batch(env)
		if err != nil {
			return nil, err
		}
		inputs[k.ID] = batch
	}
	outs, err := c.RunOnce(inputs)
	if err != nil {
		if e, ok := errcode.As(err); ok && e.Code == errcode.ViewEvaluationError {
			// An ad-hoc query reports the expression's own error.
			return nil, errcode.New(errcode.EvaluationError, "%s", e.Message).WithSQLState(e.State())
		}
		return nil, err
	}
	res := zset.Consolidate(outs[adhocViewID])
	var rows []types.Row
	for i, r := range res.Rows {
		w := res.Weights[i]
		if w < 0 {
			return nil, errcode.New(errcode.InternalError, "ad-hoc result has a row with negative weight %d", w)
		}
		for k := int64(0); k < w; k++ {
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// adhocError rewords a view-only RS-2001 into RS-2109 for ad-hoc queries.
func adhocError(err error) error {
	if e, ok := errcode.As(err); ok && e.Code == errcode.UnsupportedSQLConstruct {
		return errcode.New(errcode.SQLFeatureNotSupported, "%s", e.Message).WithDetail("%s", e.Detail)
	}
	return err
}

// stripVolatile hides volatile functions from the maintainability check
// (ad-hoc queries may call now() and random()).
func stripVolatile(n plan.Node) plan.Node {
	return plan.Transform(n, func(x plan.Node) plan.Node {
		return plan.MapScalars(x, func(s plan.Scalar) plan.Scalar {
			return plan.Rewrite(s, func(e plan.Scalar) plan.Scalar {
				if f, ok := e.(*plan.Func); ok && f.Volatile {
					g := *f
					g.Volatile = false
					return &g
				}
				return e
			})
		})
	})
}

func collectScans(n plan.Node, out *[]*catalog.Relation) {
	if s, ok := n.(*plan.Scan); ok {
		*out = append(*out, s.Relation)
	}
	for _, in := range n.Inputs() {
		collectScans(in, out)
	}
}

// inlineSubqueries evaluates uncorrelated subqueries that decorrelation
// left in place (ad-hoc only): a scalar subquery becomes its value (21000
// when it returns more than one row), EXISTS a boolean, IN an OR of
// equalities.
func inlineSubqueries(n plan.Node, snap Snapshot, env *expr.Env) (plan.Node, error) {
	var firstErr error
	out := plan.Transform(n, func(x plan.Node) plan.Node {
		return plan.MapScalars(x, func(s plan.Scalar) plan.Scalar {
			return plan.Rewrite(s, func(e plan.Scalar) plan.Scalar {
				sq, ok := e.(*plan.Subquery)
				if !ok || firstErr != nil || plan.HasCorrelation(sq.Plan) {
					return e
				}
				rows, err := RunPlan(sq.Plan, snap, env)
				if err != nil {
					firstErr = err
					return e
				}
				switch sq.Kind {
				case plan.SubScalar:
					if len(rows) > 1 {
						// The error is raised only if a row needs the value
						// (a CASE branch may never take it), as PostgreSQL's
						// InitPlans are evaluated on first use.
						return &lazySubquery{sq: sq, snap: snap}
					}
					if len(rows) == 0 {
						return &plan.Const{Typ: sq.Typ}
					}
					return &plan.Const{Value: rows[0][0], Typ: sq.Typ}
				case plan.SubExists:
					return &plan.Const{Value: (len(rows) > 0) != sq.Negate, Typ: types.TBool}
				case plan.SubArray:
					return &plan.Const{Value: arrayOfRows(sq, rows), Typ: sq.Typ}
				case plan.SubIn:
					col := sq.Plan.Schema()[0]
					var terms []plan.Scalar
					for _, r := range rows {
						terms = append(terms, &plan.Func{Name: "=", Op: true, Typ: types.TBool,
							Args: []plan.Scalar{sq.Test, &plan.Const{Value: r[0], Typ: col.Type}}})
					}
					var in plan.Scalar = &plan.Const{Value: false, Typ: types.TBool}
					if len(terms) == 1 {
						in = terms[0]
					} else if len(terms) > 1 {
						in = &plan.BoolOp{Op: plan.Or, Args: terms}
					}
					if sq.Negate {
						return &plan.BoolOp{Op: plan.Not, Args: []plan.Scalar{in}}
					}
					return in
				}
				return e
			})
		})
	})
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}
