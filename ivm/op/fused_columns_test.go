package op

import (
	"testing"

	"github.com/cockroachdb/apd/v3"
	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/ivm/zset/zsettest"
)

// columnarTestSchema has one column of every columnar type (int8 twice).
func columnarTestSchema() types.Schema {
	var s types.Schema
	for _, t := range zsettest.ColumnarTypes() {
		s = append(s, types.Column{Name: "c" + string(rune('a'+len(s))), Type: t, Nullable: true})
	}
	return append(s, types.Column{Name: "c" + string(rune('a'+len(s))), Type: types.TInt8, Nullable: true})
}

// exprGen draws random expressions over a schema: integer arithmetic that
// overflows and divides by zero (vectorized kernels), comparisons of every
// type (fallback kernels), casts, NULL tests and three-valued logic.
type exprGen struct {
	t      *rapid.T
	schema types.Schema
}

func (g exprGen) must(e expr.Expr, err error) expr.Expr {
	if err != nil {
		g.t.Fatal(err)
	}
	return e
}

func (g exprGen) col(kinds ...types.Kind) expr.Expr {
	var cols []int
	for j, c := range g.schema {
		for _, k := range kinds {
			if c.Type.Kind == k {
				cols = append(cols, j)
			}
		}
	}
	j := rapid.SampledFrom(cols).Draw(g.t, "col")
	return &expr.ColumnRef{Index: j, Typ: g.schema[j].Type}
}

// integer draws an expression of integer type.
func (g exprGen) integer(depth int) expr.Expr {
	choice := rapid.IntRange(0, 4).Draw(g.t, "int")
	if depth <= 0 {
		choice %= 2
	}
	switch choice {
	case 0:
		return g.col(types.KindInt2, types.KindInt4, types.KindInt8)
	case 1:
		d := rapid.SampledFrom(zsettest.Domain(types.TInt8)).Draw(g.t, "const")
		return expr.NewConst(types.TInt8, d)
	case 2:
		// Same-typed operands keep int2/int4 arithmetic (and its narrower
		// overflow) in the vectorized kernel.
		x := g.col(types.KindInt2, types.KindInt4, types.KindInt8)
		op := rapid.SampledFrom([]string{"+", "-", "*", "/", "%"}).Draw(g.t, "op")
		return g.must(expr.NewBinary(op, x, x))
	case 3:
		return g.must(expr.NewCast(g.integer(depth-1), types.TInt8))
	}
	op := rapid.SampledFrom([]string{"+", "-", "*", "/", "%"}).Draw(g.t, "op")
	return g.must(expr.NewBinary(op, g.integer(depth-1), g.integer(depth-1)))
}

// boolean draws a predicate.
func (g exprGen) boolean(depth int) expr.Expr {
	choice := rapid.IntRange(0, 6).Draw(g.t, "bool")
	if depth <= 0 {
		choice %= 4
	}
	cmp := rapid.SampledFrom([]string{"=", "<>", "<", "<=", ">", ">="}).Draw(g.t, "cmp")
	switch choice {
	case 0:
		return g.must(expr.NewBinary(cmp, g.integer(depth-1), g.integer(depth-1)))
	case 1:
		// Any other type: compared with a value of its domain.
		j := rapid.IntRange(0, len(g.schema)-1).Draw(g.t, "col")
		c := g.schema[j]
		v := rapid.SampledFrom(zsettest.Domain(c.Type)).Draw(g.t, "value")
		return g.must(expr.NewBinary(cmp, &expr.ColumnRef{Index: j, Typ: c.Type}, expr.NewConst(c.Type, v)))
	case 2:
		j := rapid.IntRange(0, len(g.schema)-1).Draw(g.t, "col")
		return expr.NewIsNull(&expr.ColumnRef{Index: j, Typ: g.schema[j].Type}, rapid.Bool().Draw(g.t, "negated"))
	case 3:
		return g.col(types.KindBool)
	case 4:
		return g.must(expr.NewNot(g.boolean(depth - 1)))
	case 5:
		return g.must(expr.NewAnd(g.boolean(depth-1), g.boolean(depth-1)))
	}
	return g.must(expr.NewOr(g.boolean(depth-1), g.boolean(depth-1)))
}

// output draws a SELECT-list expression of any type.
func (g exprGen) output() expr.Expr {
	switch rapid.IntRange(0, 5).Draw(g.t, "output") {
	case 0:
		return g.integer(2)
	case 1:
		return g.boolean(2)
	case 2:
		// A float result from a fallback kernel (22003 on overflow).
		f := g.col(types.KindFloat8)
		return g.must(expr.NewBinary("*", f, f))
	case 3:
		// A text result (fallback kernel, Datum vector).
		return g.must(expr.NewCall("upper", g.col(types.KindText, types.KindVarchar)))
	case 4:
		// A NUMERIC result (no columnar form: the output is rows), as
		// nexmark q1's 0.908 * price.
		d, _, err := apd.NewFromString("0.908")
		if err != nil {
			g.t.Fatal(err)
		}
		return g.must(expr.NewBinary("*", expr.NewConst(types.TNumeric, d), g.integer(1)))
	}
	j := rapid.IntRange(0, len(g.schema)-1).Draw(g.t, "col")
	return &expr.ColumnRef{Index: j, Typ: g.schema[j].Type}
}

// chain draws a Fused chain: up to two filters and an optional Map or
// Project (at least one stage); build makes a fresh instance of it.
func drawChain(t *rapid.T, schema types.Schema) func() *Fused {
	g := exprGen{t: t, schema: schema}
	var preds []expr.Expr
	for range rapid.IntRange(0, 2).Draw(t, "filters") {
		preds = append(preds, g.boolean(2))
	}
	last := rapid.IntRange(0, 2).Draw(t, "last")
	if len(preds) == 0 && last == 0 {
		last = 1
	}
	var exprs []expr.Expr
	var names []string
	var cols []int
	switch last {
	case 1:
		for k := range rapid.IntRange(1, 3).Draw(t, "width") {
			exprs = append(exprs, g.output())
			names = append(names, "x"+string(rune('0'+k)))
		}
	case 2:
		cols = rapid.SliceOfN(rapid.IntRange(0, len(schema)-1), 1, 4).Draw(t, "project")
	}
	return func() *Fused {
		var ops []Operator
		for _, p := range preds {
			ops = append(ops, NewFilter(schema, p))
		}
		switch last {
		case 1:
			ops = append(ops, NewMap(exprs, names))
		case 2:
			ops = append(ops, NewProject(schema, cols))
		}
		f, ok := Single(ops[0])
		if !ok {
			t.Fatal("first stage does not fuse")
		}
		var op Operator = f
		if len(ops) > 1 {
			// NB: Fuse takes a Filter (or a filter-only chain) first.
			op = ops[0]
			for _, next := range ops[1:] {
				fused, ok := Fuse(op, next)
				if !ok {
					t.Fatalf("%T does not fuse with %T", op, next)
				}
				op = fused
			}
			f = op.(*Fused)
		}
		return f
	}
}

// TestFusedColumnsMatchesRows: a fused chain stepped over columnar deltas
// gives the Z-set and the evaluation errors (division by zero, overflow)
// that it gives over the same deltas as rows, over several steps of one
// instance (the kernels' buffers are reused), and its columnar output
// encodes as the row output does.
func TestFusedColumnsMatchesRows(t *testing.T) {
	schema := columnarTestSchema()
	rapid.Check(t, func(t *rapid.T) {
		build := drawChain(t, schema)
		rows, cols := build(), build()
		for step := range rapid.IntRange(1, 3).Draw(t, "steps") {
			in := zsettest.Batch(t, schema)
			rowCtx, colCtx := &Context{Env: &expr.Env{}}, &Context{Env: &expr.Env{}}
			want, err := rows.Step(rowCtx, []zset.Batch{in})
			if err != nil {
				t.Fatal(err)
			}
			got, err := cols.StepColumns(colCtx, zsettest.Columns(t, schema, in))
			if err != nil {
				t.Fatal(err)
			}
			if zset.ColumnarSchema(rows.Schema()) && got.Columns() == nil {
				t.Fatalf("step %d: output schema %v is columnar but the output is rows", step, rows.Schema())
			}
			if !zset.Equal(got.Batch(), want) {
				t.Fatalf("step %d input %v: columnar %v, rows %v", step, in, got.Batch(), want)
			}
			if !zset.Equal(colCtx.Errors, rowCtx.Errors) {
				t.Fatalf("step %d input %v: columnar errors %v, rows %v", step, in, colCtx.Errors, rowCtx.Errors)
			}
			if a, b := rows.StageRowsOut(), cols.StageRowsOut(); len(a) != len(b) {
				t.Fatalf("stage counts %v vs %v", a, b)
			} else {
				for k := range a {
					if a[k] != b[k] {
						t.Fatalf("step %d: stage rows out %v (rows) vs %v (columns)", step, a, b)
					}
				}
			}
		}
	})
}
