package bind

import (
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// RegColumn is a visible result column that was regclass or regtype: its
// values are names (text), and hidden column OID (past the visible ones)
// holds the oid, so a server can describe the column with its real type
// and send either form.
type RegColumn struct {
	Col, OID int
	Type     types.Type
}

// regOutput makes an ad-hoc query's regclass and regtype output columns
// print names, as PostgreSQL's regclassout/regtypeout do ('orders',
// 'integer'), by returning them as text. ORDER BY on such a column keeps
// ordering by oid through a hidden copy of the original column, and a
// hidden copy of every such column keeps its oid (q.RegColumns).
func (b *binder) regOutput(q *BoundQuery) {
	cols := q.Plan.Schema()
	var regs []int
	for i := range q.Columns {
		if expr.IsRegType(q.Columns[i].Type.Kind) {
			regs = append(regs, i)
		}
	}
	if len(regs) == 0 {
		return
	}
	exprs := plan.ColumnRefs(cols)
	outCols := append([]plan.Column(nil), cols...)
	for _, i := range regs {
		q.RegColumns = append(q.RegColumns, RegColumn{Col: i, OID: len(exprs), Type: cols[i].Type})
		exprs = append(exprs, &plan.ColRef{Index: i, Typ: cols[i].Type, Name: cols[i].Name})
		outCols = append(outCols, cols[i])
		exprs[i] = &plan.Cast{Arg: exprs[i], Typ: types.TText, Explicit: true}
		outCols[i].Type = types.TText
		q.Columns[i].Type = types.TText
		for k := range q.Order {
			if q.Order[k].Col == i {
				q.Order[k].Col = len(exprs)
				exprs = append(exprs, &plan.ColRef{Index: i, Typ: cols[i].Type, Name: cols[i].Name})
				outCols = append(outCols, cols[i])
			}
		}
	}
	q.Plan = &plan.Project{Input: q.Plan, Exprs: exprs, Cols: outCols}
}
