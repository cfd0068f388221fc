package op

import (
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// FlatMapFunc is one set-returning function of a FlatMap: its arguments
// are evaluated over the input row.
type FlatMapFunc struct {
	Func *expr.SetReturning
	Args []expr.Expr
	// Names are the function's output column names (ordinality included).
	Names []string
}

// FlatMapSpec configures a FlatMap.
type FlatMapSpec struct {
	Funcs []FlatMapFunc
	// Cond, when set, keeps only the output rows for which it is true (a
	// LEFT JOIN LATERAL's ON condition over the whole output row).
	Cond expr.Expr
	// Outer keeps an input row that produced no output row as one row
	// with NULL function columns (LEFT JOIN LATERAL ... ON ...).
	Outer bool
}

// FlatMap emits, for each input row, the input row followed by the
// functions' columns, one row per position up to the longest function
// result (shorter results padded with NULLs, PostgreSQL 10+'s rule for
// several set-returning functions), each with the input row's weight:
// functions in FROM that reference the row to their left (`FROM t,
// unnest(t.tags)`) and set-returning functions in the SELECT list. It is
// linear, since each input row's output depends on that row alone, so a
// deleted row retracts exactly the rows it produced:
//
//	FlatMap(Δ) = ⊎_{(r,w) ∈ Δ} {(r ++ s, w) : s ∈ f(r)}
//
//	time | input            | output                  (f: unnest(tags))
//	-----|------------------|-------------------------
//	0    | {(1,{a,b}):+1}   | {(1,{a,b},a):+1, (1,{a,b},b):+1}
//	1    | {(1,{a,b}):-1}   | {(1,{a,b},a):-1, (1,{a,b},b):-1}
//
// An error a function raises for a row is recorded in ctx with the row's
// weight and the row produces nothing (retracting it retracts the error).
type FlatMap struct {
	schema types.Schema
	spec   FlatMapSpec
	width  int
}

// NewFlatMap returns a FlatMap over rows of schema in.
func NewFlatMap(in types.Schema, spec FlatMapSpec) *FlatMap {
	schema := append(types.Schema(nil), in...)
	for _, f := range spec.Funcs {
		cols := f.Func.Cols
		for i, n := range f.Names {
			t := types.TInt8
			if i < len(cols) {
				t = cols[i]
			}
			schema = append(schema, types.Column{Name: n, Type: t, Nullable: true})
		}
	}
	return &FlatMap{schema: schema, spec: spec, width: len(in)}
}

// Schema implements Operator.
func (m *FlatMap) Schema() types.Schema { return m.schema }

// Step implements Operator.
func (m *FlatMap) Step(ctx *Context, inputs []zset.Batch) (zset.Batch, error) {
	var out zset.Batch
	for i, row := range inputs[0].Rows {
		rows, err := m.rowsOf(ctx.Env, row)
		if err != nil {
			if err := ctx.Fail(err, row, inputs[0].Weights[i]); err != nil {
				return zset.Batch{}, err
			}
			continue
		}
		for _, r := range rows {
			out.Add(r, inputs[0].Weights[i])
		}
	}
	return out, nil
}

// rowsOf is the output rows of one input row.
func (m *FlatMap) rowsOf(env *expr.Env, row types.Row) ([]types.Row, error) {
	results := make([][]types.Row, len(m.spec.Funcs))
	longest := 0
	for i, f := range m.spec.Funcs {
		args := make([]types.Datum, len(f.Args))
		for j, a := range f.Args {
			v, err := a.Eval(env, row)
			if err != nil {
				return nil, err
			}
			args[j] = v
		}
		rs, err := f.Func.Rows(env, args)
		if err != nil {
			return nil, err
		}
		results[i] = rs
		longest = max(longest, len(rs))
	}
	var out []types.Row
	for r := 0; r < longest; r++ {
		o := make(types.Row, 0, len(m.schema))
		o = append(o, row...)
		for i, f := range m.spec.Funcs {
			if r < len(results[i]) {
				o = append(o, results[i][r]...)
				continue
			}
			for range f.Names {
				o = append(o, nil)
			}
		}
		if m.spec.Cond != nil {
			ok, err := evalBool(env, m.spec.Cond, o)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		out = append(out, o)
	}
	if len(out) == 0 && m.spec.Outer {
		o := make(types.Row, len(m.schema))
		copy(o, row)
		out = append(out, o)
	}
	return out, nil
}

// StreamFlatMap is the non-incremental FlatMap (the same per-row
// expansion: FlatMap is linear).
func StreamFlatMap(ctx *Context, in types.Schema, spec FlatMapSpec, batch zset.Batch) (zset.Batch, error) {
	return NewFlatMap(in, spec).Step(ctx, []zset.Batch{batch})
}
