package access

import (
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/lower"
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
				e, err := lower.Scalar(other)
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
