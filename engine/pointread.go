package engine

import (
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// Point reads: a statement whose every scan of a table is filtered on
// `pk = value` for each primary-key column (pgbench's `UPDATE
// pgbench_accounts ... WHERE aid = 42`, ORMs' find-by-id) reads just those
// rows with one shard Lookup instead of the whole table. The plan still
// runs unchanged over what was read, so the result is the same: the
// Filter sees a subset of the table that holds every row it can keep.
// Only for plans that read tables alone: a read that mixes tables and
// views goes through shard.Read, which makes them describe one epoch.

// pointKeys returns, per table that qualifies, the primary keys the plan
// can only ever keep; tables absent from the map are read whole.
func pointKeys(n plan.Node, env *expr.Env) map[catalog.ID][]types.Row {
	scans, ok := filteredScans(n)
	if !ok {
		return nil
	}
	out := map[catalog.ID][]types.Row{}
	whole := map[catalog.ID]bool{}
	for _, fs := range scans {
		rel := fs.rel
		var key types.Row
		if fs.pred != nil && len(rel.PrimaryKey) > 0 {
			key = keyFromPredicate(rel, fs.pred, fs.cols, env)
		}
		if key == nil {
			whole[rel.ID] = true
			continue
		}
		out[rel.ID] = append(out[rel.ID], key)
	}
	for id := range whole { //lint:maprange deleting from a map
		delete(out, id)
	}
	return out
}

// filteredScan is a scan of a table with the predicate of the nearest
// Filter above it (nil: none) and where each of the predicate's columns
// is in the table.
type filteredScan struct {
	rel  *catalog.Relation
	pred plan.Scalar
	cols []int
}

// filteredScans lists the scans of n, in plan order; ok is false if n
// reads anything but tables or holds a subquery (which may scan
// relations again).
func filteredScans(n plan.Node) ([]filteredScan, bool) {
	var out []filteredScan
	ok := true
	// walk carries the predicate of the nearest Filter above n (nil: none)
	// and where each of its columns is in n's output (projections of
	// plain columns between a Filter and its Scan renumber them).
	var walk func(n plan.Node, pred plan.Scalar, cols []int)
	walk = func(n plan.Node, pred plan.Scalar, cols []int) {
		switch x := n.(type) {
		case *plan.Scan:
			if x.Relation.Kind != catalog.KindTable {
				ok = false
				return
			}
			out = append(out, filteredScan{rel: x.Relation, pred: pred, cols: cols})
			return
		case *plan.Filter:
			width := len(x.Input.Schema())
			identity := make([]int, width)
			for i := range identity {
				identity[i] = i
			}
			checkScalars(n, &ok)
			walk(x.Input, x.Pred, identity)
			return
		case *plan.Project:
			checkScalars(n, &ok)
			if pred != nil {
				mapped := make([]int, len(cols))
				for i, c := range cols {
					ref, plain := x.Exprs[c].(*plan.ColRef)
					if !plain {
						pred = nil
						break
					}
					mapped[i] = ref.Index
				}
				if pred != nil {
					walk(x.Input, pred, mapped)
					return
				}
			}
			walk(x.Input, nil, nil)
			return
		}
		checkScalars(n, &ok)
		for _, in := range n.Inputs() {
			walk(in, nil, nil)
		}
	}
	walk(n, nil, nil)
	return out, ok
}

// checkScalars clears ok if n's expressions hold a subquery (it may scan
// relations again; such plans read whole tables).
func checkScalars(n plan.Node, ok *bool) {
	for _, sc := range plan.Scalars(n) {
		plan.Walk(sc, func(x plan.Scalar) bool {
			if _, sub := x.(*plan.Subquery); sub {
				*ok = false
			}
			return true
		})
	}
}

// keyFromPredicate returns the primary key pred pins (every key column
// equal to a value computable without the row), or nil. cols maps the
// predicate's column indexes to the table's.
func keyFromPredicate(rel *catalog.Relation, pred plan.Scalar, cols []int, env *expr.Env) types.Row {
	key := make(types.Row, len(rel.PrimaryKey))
	found := make([]bool, len(rel.PrimaryKey))
	for _, c := range plan.Conjuncts(pred) {
		f, isFunc := c.(*plan.Func)
		if !isFunc || !f.Op || f.Name != "=" || len(f.Args) != 2 {
			continue
		}
		for side := 0; side < 2; side++ {
			col, isCol := f.Args[side].(*plan.ColRef)
			other := f.Args[1-side]
			if !isCol || col.Index >= len(cols) || !rowFree(other) {
				continue
			}
			for j, k := range rel.PrimaryKey {
				if k != cols[col.Index] || found[j] || !other.Type().Equal(rel.Columns[k].Type) || !col.Typ.Equal(rel.Columns[k].Type) {
					continue
				}
				e, err := lowerScalar(other)
				if err != nil {
					return nil
				}
				v, err := e.Eval(env, nil)
				if err != nil || v == nil {
					return nil // NULL keeps no row; errors surface in the real run
				}
				key[j], found[j] = v, true
			}
		}
	}
	for _, f := range found {
		if !f {
			return nil
		}
	}
	return key
}

// rowFree reports whether s is computable without a row: constants,
// parameters and immutable functions and casts of them.
func rowFree(s plan.Scalar) bool {
	free := true
	plan.Walk(s, func(x plan.Scalar) bool {
		switch y := x.(type) {
		case *plan.Const, *plan.Param, *plan.Cast:
		case *plan.Func:
			if y.Volatile {
				free = false
			}
		default:
			free = false
		}
		return free
	})
	return free
}
