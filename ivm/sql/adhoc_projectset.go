package sql

import (
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/lower"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// expandProjectSets replaces every ProjectSet (set-returning functions in
// the SELECT list) by the constant rows it produces: its input is run
// first, then the functions are evaluated for each input row.
func expandProjectSets(n plan.Node, snap Snapshot, env *expr.Env) (plan.Node, error) {
	return expandUncorrelated(n, func(ps *plan.ProjectSet) (*plan.Values, error) { return runProjectSet(ps, snap, env) })
}

func runProjectSet(ps *plan.ProjectSet, snap Snapshot, env *expr.Env) (*plan.Values, error) {
	input, err := RunPlan(ps.Input, snap, env)
	if err != nil {
		return nil, err
	}
	args := make([][]expr.Expr, len(ps.Funcs))
	for i, f := range ps.Funcs {
		for _, a := range f.Args {
			e, err := lower.Scalar(a)
			if err != nil {
				return nil, err
			}
			args[i] = append(args[i], e)
		}
	}
	v := &plan.Values{Cols: ps.Cols}
	results := make([][]types.Row, len(ps.Funcs))
	for _, row := range input {
		longest := 0
		for i, f := range ps.Funcs {
			vals := make([]types.Datum, len(args[i]))
			for j, e := range args[i] {
				if vals[j], err = e.Eval(env, row); err != nil {
					return nil, err
				}
			}
			if results[i], err = srfRows(f, vals, env); err != nil {
				return nil, err
			}
			longest = max(longest, len(results[i]))
		}
		if len(v.Rows)+longest > srfRowsMax {
			return nil, errcode.New(errcode.SQLFeatureNotSupported, "set-returning functions in the SELECT list return more than %d rows", srfRowsMax).
				WithDetail("construct: set-returning functions in the SELECT list")
		}
		for r := 0; r < longest; r++ {
			out := make([]plan.Scalar, 0, len(ps.Cols))
			for j, d := range row {
				out = append(out, &plan.Const{Value: d, Typ: ps.Cols[j].Type})
			}
			for i, f := range ps.Funcs {
				for c := range f.Cols {
					var d types.Datum
					if r < len(results[i]) {
						d = results[i][r][c]
					}
					out = append(out, &plan.Const{Value: d, Typ: f.Cols[c].Type})
				}
			}
			v.Rows = append(v.Rows, out)
		}
	}
	return v, nil
}
