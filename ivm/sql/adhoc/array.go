package adhoc

import (
	"sort"

	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// arrayOfRows is the value of ARRAY(subquery) over the subquery's rows:
// their first column in the subquery's ORDER BY.
func arrayOfRows(sq *plan.Subquery, rows []types.Row) types.Datum {
	if len(sq.Order) > 0 {
		cols := sq.Plan.Schema()
		sort.SliceStable(rows, func(i, j int) bool { return compareRows(cols, sq.Order, rows[i], rows[j]) < 0 })
	}
	vals := make([]types.Datum, len(rows))
	for i, r := range rows {
		vals[i] = r[0]
	}
	return types.Array{Elem: *sq.Typ.Elem, Values: vals}
}
