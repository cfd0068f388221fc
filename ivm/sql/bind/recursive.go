package bind

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/ivm/sql/plan"
)

// recursiveCTE binds one CTE of WITH RECURSIVE written as `non-recursive
// term UNION [ALL] recursive term`: the recursive term sees the CTE's name
// as its working table. done is false when the CTE is not of that shape
// or does not reference itself (the caller binds it as an ordinary CTE).
func (b *binder) recursiveCTE(cte *pg_query.CommonTableExpr, inner *pg_query.SelectStmt, ctes map[string]*cteDef, outer *scope) (done bool, err error) {
	if inner.Op != pg_query.SetOperation_SETOP_UNION || len(inner.SortClause) > 0 || inner.LimitCount != nil || inner.LimitOffset != nil || inner.WithClause != nil {
		return false, nil
	}
	if _, dup := ctes[cte.Ctename]; dup {
		return false, b.semantic("42712", cte.Location, "WITH query name \"%s\" specified more than once", cte.Ctename)
	}
	q0, err := b.selectStmt(inner.Larg, outer)
	if err != nil {
		return false, err
	}
	init, cols, err := b.finishSubquery(q0, aliasNames(cte.Aliascolnames), cte.Ctename, cte.Location)
	if err != nil {
		return false, err
	}
	for i := range cols {
		cols[i].Nullable = true
	}
	*b.workTables++
	work := plan.WorkTable(cte.Ctename, cols, *b.workTables)
	ctes[cte.Ctename] = &cteDef{node: &plan.Scan{Relation: work, Alias: cte.Ctename, Cols: cols}, columns: cols}
	q1, err := b.selectStmt(inner.Rarg, outer)
	delete(ctes, cte.Ctename)
	if err != nil {
		return false, err
	}
	step, stepCols, err := b.finishSubquery(q1, nil, cte.Ctename, cte.Location)
	if err != nil {
		return false, err
	}
	if !plan.ScansRelation(step, work) {
		return false, nil
	}
	if len(stepCols) != len(cols) {
		return false, b.semantic("42601", cte.Location, "each UNION query must have the same number of columns")
	}
	// The recursive term's columns take the non-recursive term's types.
	exprs := plan.ColumnRefs(stepCols)
	changed := false
	for i, c := range cols {
		if !stepCols[i].Type.Equal(c.Type) {
			if exprs[i], err = b.coerce(exprs[i], c.Type, cte.Location); err != nil {
				return false, b.semantic("42804", cte.Location, "recursive query \"%s\" column %d has type %s in non-recursive term but type %s overall",
					cte.Ctename, i+1, c.Type.SQLName(), stepCols[i].Type.SQLName())
			}
			changed = true
		}
	}
	if changed {
		step = &plan.Project{Input: step, Exprs: exprs, Cols: cols}
	}
	ctes[cte.Ctename] = &cteDef{node: &plan.RecursiveUnion{Work: work, Init: init, Step: step, All: inner.All, Cols: cols}, columns: cols}
	return true, nil
}
