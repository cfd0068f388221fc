package adhoc

import (
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/incr"
	"github.com/rockstream/rockstream/ivm/sql/lower"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// expandFuncScans replaces every function in FROM whose arguments no
// longer reference an outer query by the constant rows it returns.
func expandFuncScans(n plan.Node, env *expr.Env) (plan.Node, error) {
	return expandUncorrelated(n, func(fs *plan.FuncScan) (*plan.Values, error) { return runFuncScan(fs, env) })
}

// expandUncorrelated replaces every node of type T whose expressions
// reference no outer query by the constant rows run computes for it.
func expandUncorrelated[T interface {
	plan.Node
	HeldScalars() []plan.Scalar
}](n plan.Node, run func(T) (*plan.Values, error)) (plan.Node, error) {
	var firstErr error
	out := plan.Transform(n, func(x plan.Node) plan.Node {
		t, ok := x.(T)
		if !ok || firstErr != nil {
			return x
		}
		for _, a := range t.HeldScalars() {
			if hasOuterRef(a) {
				return x
			}
		}
		v, err := run(t)
		if err != nil {
			firstErr = err
			return x
		}
		return v
	})
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

func hasOuterRef(s plan.Scalar) bool {
	found := false
	plan.Walk(s, func(e plan.Scalar) bool {
		switch e.(type) {
		case *plan.OuterRef, *plan.Subquery:
			found = true
		}
		return !found
	})
	return found
}

// runFuncScan evaluates a function in FROM into a Values node.
func runFuncScan(fs *plan.FuncScan, env *expr.Env) (*plan.Values, error) {
	args := make([]types.Datum, len(fs.Args))
	for i, a := range fs.Args {
		e, err := lower.Scalar(a)
		if err != nil {
			return nil, err
		}
		if args[i], err = e.Eval(env, nil); err != nil {
			return nil, err
		}
	}
	rows, err := incr.SetReturning(fs).Rows(env, args)
	if err != nil {
		return nil, err
	}
	v := &plan.Values{Cols: fs.Cols, Rows: make([][]plan.Scalar, len(rows))}
	for i, r := range rows {
		row := make([]plan.Scalar, len(r))
		for j, d := range r {
			row[j] = &plan.Const{Value: d, Typ: fs.Cols[j].Type}
		}
		v.Rows[i] = row
	}
	return v, nil
}
