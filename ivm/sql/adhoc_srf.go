package sql

import (
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/lower"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// srfRowsMax bounds the rows one function in FROM may return ad hoc; a
// larger series is refused instead of exhausting memory.
const srfRowsMax = 10_000_000

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
	rows, err := srfRows(fs, args, env)
	if err != nil {
		return nil, err
	}
	v := &plan.Values{Cols: fs.Cols, Rows: make([][]plan.Scalar, len(rows))}
	for i, r := range rows {
		if fs.Ordinality {
			r = append(r, int64(i+1))
		}
		row := make([]plan.Scalar, len(r))
		for j, d := range r {
			row[j] = &plan.Const{Value: d, Typ: fs.Cols[j].Type}
		}
		v.Rows[i] = row
	}
	return v, nil
}

func tooManyRows(name string) error {
	return errcode.New(errcode.SQLFeatureNotSupported, "%s returns more than %d rows, the limit of a function in FROM", name, srfRowsMax).
		WithDetail("construct: functions in FROM (set-returning functions)")
}

// srfRows is a function's rows for evaluated arguments (PostgreSQL's
// semantics: a NULL argument gives no rows).
func srfRows(fs *plan.FuncScan, args []types.Datum, env *expr.Env) ([]types.Row, error) {
	arrayArg := func(i int) []types.Datum {
		if args[i] == nil {
			return nil
		}
		return args[i].(types.Array).Values
	}
	switch fs.Name {
	case "":
		return []types.Row{{args[0]}}, nil
	case "generate_series":
		return generateSeries(fs, args, env)
	case "unnest":
		n := 0
		for i := range args {
			n = max(n, len(arrayArg(i)))
		}
		rows := make([]types.Row, n)
		for r := range rows {
			rows[r] = make(types.Row, len(args))
			for i := range args {
				if vals := arrayArg(i); r < len(vals) {
					rows[r][i] = vals[r]
				}
			}
		}
		return rows, nil
	case "generate_subscripts":
		vals := arrayArg(0)
		if args[1] == nil || args[1].(int64) != 1 || len(vals) == 0 {
			return nil, nil
		}
		rev := len(args) == 3 && args[2] != nil && args[2].(bool)
		rows := make([]types.Row, len(vals))
		for i := range vals {
			k := int64(i + 1)
			if rev {
				k = int64(len(vals) - i)
			}
			rows[i] = types.Row{k}
		}
		return rows, nil
	case "information_schema._pg_expandarray":
		vals := arrayArg(0)
		rows := make([]types.Row, len(vals))
		for i, v := range vals {
			rows[i] = types.Row{v, int64(i + 1)}
		}
		return rows, nil
	}
	return nil, errcode.New(errcode.InternalError, "unknown function in FROM %q", fs.Name)
}

// generateSeries steps from start to stop (inclusive) by step, in the
// series' own arithmetic (integer, numeric or timestamp + interval).
func generateSeries(fs *plan.FuncScan, args []types.Datum, env *expr.Env) ([]types.Row, error) {
	for _, a := range args {
		if a == nil {
			return nil, nil
		}
	}
	t := fs.Cols[0].Type
	stepType := t
	if len(fs.Args) == 3 {
		stepType = fs.Args[2].Type()
	}
	var step types.Datum
	if len(args) == 3 {
		step = args[2]
	} else {
		one, err := types.Parse(t, "1", nil)
		if err != nil {
			return nil, err
		}
		step = one
	}
	zero, err := types.Parse(stepType, "0", nil)
	if err != nil {
		return nil, err
	}
	sign := types.Compare(stepType, step, zero)
	if sign == 0 {
		return nil, errcode.New(errcode.SQLInvalidParameterValue, "step size cannot equal zero")
	}
	add, err := expr.NewBinary("+", &expr.ColumnRef{Index: 0, Typ: t}, &expr.ColumnRef{Index: 1, Typ: stepType})
	if err != nil {
		return nil, err
	}
	cur, stop := args[0], args[1]
	var rows []types.Row
	for {
		c := types.Compare(t, cur, stop)
		if (sign > 0 && c > 0) || (sign < 0 && c < 0) {
			return rows, nil
		}
		if len(rows) >= srfRowsMax {
			return nil, tooManyRows(fs.Name)
		}
		rows = append(rows, types.Row{cur})
		if cur, err = add.Eval(env, types.Row{cur, step}); err != nil {
			// Overflow past the type's range ends the series, as in
			// PostgreSQL.
			if e, ok := errcode.As(err); ok && e.State() == "22003" {
				return rows, nil
			}
			return nil, err
		}
	}
}
