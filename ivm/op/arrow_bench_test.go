package op

// Arrow in flight, measured: should the stateless segment of a circuit
// carry Arrow record batches (+ a weight column) between operators instead
// of zset.Batch rows? BenchmarkFilterMapArrow runs BenchmarkFilterMap's
// query (WHERE k >= 0 AND v > 0, SELECT k + v * 2) six ways in one run:
//
//	path=rows              op.Fused over zset.Batch rows (row deltas)
//	path=arrow             Arrow kernels, Arrow record in and out: the best
//	                       case, a segment that never meets rows
//	path=arrow-to-rows     Arrow in, rows out: rows materialized lazily at
//	                       the first row-oriented (stateful) operator or sink
//	path=rows-arrow-rows   rows in, Arrow kernels, rows out: what a circuit
//	                       would pay with row sources and row consumers
//	path=fused-columns     op.Fused.StepColumns: the generic columnar path
//	                       circuits run on columnar deltas (zset.Columns in
//	                       and out; TestFusedColumnsMatchesRows checks it)
//	path=fused-columns-to-rows  the same, rows built from the output
//
//	go test ./ivm/op -run '^$' -bench 'FilterMapArrow|FilterMap$' -benchtime 2000x
//
// The Arrow kernels are written by hand for this one query over the
// arrays' value slices and validity bitmaps (no arrow/compute: its checked
// kernels fail a whole batch on overflow, not the offending row, and it
// pulls in Parquet's dependencies), so they are an upper bound for generic
// Arrow kernels. TestArrowFilterMapMatchesRows checks they compute what the
// row path computes, errors included.

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// arrowFilterMap is the prototype: WHERE k >= 0 AND v > 0 SELECT k + v * 2
// over an Arrow record (k int8, v int8, weight) into an Arrow record (x,
// weight). Rows where the arithmetic may overflow are evaluated by
// mapExpr's row function, which raises the error (22003) recorded in ctx
// like any operator's.
type arrowFilterMap struct {
	mapExpr expr.Expr
	schema  *arrow.Schema
	sel     []int32
	slow    []int32
}

func newArrowFilterMap(t testing.TB) *arrowFilterMap {
	schema, err := zset.ArrowSchema(intSchema(1))
	if err != nil {
		t.Fatal(err)
	}
	return &arrowFilterMap{
		mapExpr: mustBinary(t, "+", int8Col(0), mustBinary(t, "*", int8Col(1), int8Const(2))),
		schema:  schema,
	}
}

func (a *arrowFilterMap) step(ctx *Context, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	kArr, vArr := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Int64)
	weights := rec.Column(2).(*array.Int64).Int64Values()
	ks, vs := kArr.Int64Values(), vArr.Int64Values()
	n := int(rec.NumRows())
	// σ: three-valued AND of two comparisons that cannot fail: a row is
	// kept iff both sides are non-NULL and true.
	sel := a.sel[:0]
	if kArr.NullN() == 0 && vArr.NullN() == 0 {
		for i := 0; i < n; i++ {
			if ks[i] >= 0 && vs[i] > 0 {
				sel = append(sel, int32(i))
			}
		}
	} else {
		for i := 0; i < n; i++ {
			if kArr.IsValid(i) && vArr.IsValid(i) && ks[i] >= 0 && vs[i] > 0 {
				sel = append(sel, int32(i))
			}
		}
	}
	a.sel = sel
	// π: k + v * 2, checked; the kept rows have no NULLs.
	out := make([]int64, 0, len(sel))
	outWeights := make([]int64, 0, len(sel))
	slow := a.slow[:0]
	for _, i := range sel {
		k, v := ks[i], vs[i]
		x := k + v*2
		if v != int64(int32(v)) || (x^k)&(x^(v*2)) < 0 {
			slow = append(slow, i)
			continue
		}
		out = append(out, x)
		outWeights = append(outWeights, weights[i])
	}
	a.slow = slow
	for _, i := range slow {
		row := types.Row{ks[i], vs[i]}
		d, err := a.mapExpr.Eval(ctx.Env, row)
		if err != nil {
			if err := ctx.Fail(err, row, weights[i]); err != nil {
				return nil, err
			}
			continue
		}
		// NB: order within a Z-set batch does not matter.
		out = append(out, d.(int64))
		outWeights = append(outWeights, weights[i])
	}
	return array.NewRecordBatch(a.schema, []arrow.Array{int64Array(out), int64Array(outWeights)}, int64(len(out))), nil
}

// int64Array wraps values (no NULLs) as an Arrow array without copying.
func int64Array(values []int64) *array.Int64 {
	buf := memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(values))
	return array.NewInt64Data(array.NewData(arrow.PrimitiveTypes.Int64, len(values), []*memory.Buffer{nil, buf}, nil, 0, 0))
}

// arrowRows materializes an all-int8 Arrow Z-set record as rows: one
// backing array for the batch and one slab per column for the boxed
// values (expr.BoxInt64s), the fastest way to build Datums.
func arrowRows(rec arrow.RecordBatch) zset.Batch {
	width := int(rec.NumCols()) - 1
	n := int(rec.NumRows())
	values := make([]types.Datum, n*width)
	for c := 0; c < width; c++ {
		col := rec.Column(c).(*array.Int64)
		if n > 0 {
			expr.BoxInt64s(values[c:], width, col.Int64Values())
		}
		if col.NullN() > 0 {
			for i := 0; i < n; i++ {
				if col.IsNull(i) {
					values[i*width+c] = nil
				}
			}
		}
	}
	out := zset.Batch{Rows: make([]types.Row, n), Weights: rec.Column(width).(*array.Int64).Int64Values()}
	for i := range out.Rows {
		out.Rows[i] = values[i*width : (i+1)*width : (i+1)*width]
	}
	return out
}

// rowsArrow builds an all-int8 Arrow Z-set record from rows, column by
// column into plain slices and validity bitmaps (faster than zset.ToArrow's
// generic builders).
func rowsArrow(schema *arrow.Schema, b zset.Batch) arrow.RecordBatch {
	width := schema.NumFields() - 1
	n := len(b.Rows)
	cols := make([]arrow.Array, 0, width+1)
	for c := 0; c < width; c++ {
		values := make([]int64, n)
		var validity []byte
		nulls := 0
		for i, row := range b.Rows {
			if d := row[c]; d != nil {
				values[i] = d.(int64)
				continue
			}
			if validity == nil {
				validity = make([]byte, bitutil.BytesForBits(int64(n)))
				bitutil.SetBitsTo(validity, 0, int64(n), true)
			}
			bitutil.ClearBit(validity, i)
			nulls++
		}
		var validBuf *memory.Buffer
		if validity != nil {
			validBuf = memory.NewBufferBytes(validity)
		}
		buf := memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(values))
		cols = append(cols, array.NewInt64Data(array.NewData(arrow.PrimitiveTypes.Int64, n, []*memory.Buffer{validBuf, buf}, nil, nulls, 0)))
	}
	cols = append(cols, int64Array(b.Weights))
	return array.NewRecordBatch(schema, cols, int64(n))
}

func filterMapRowChain(t testing.TB) *Fused {
	pred := &expr.And{Args: []expr.Expr{mustBinary(t, ">=", int8Col(0), int8Const(0)), mustBinary(t, ">", int8Col(1), int8Const(0))}}
	fused, ok := Fuse(NewFilter(intSchema(2), pred), NewMap([]expr.Expr{mustBinary(t, "+", int8Col(0), mustBinary(t, "*", int8Col(1), int8Const(2)))}, []string{"x"}))
	if !ok {
		t.Fatal("chain does not fuse")
	}
	return fused
}

// TestArrowFilterMapMatchesRows: the Arrow prototype and the row path give
// the same output and error Z-sets (values near the int8 limits overflow).
func TestArrowFilterMapMatchesRows(t *testing.T) {
	inSchema, err := zset.ArrowSchema(intSchema(2))
	if err != nil {
		t.Fatal(err)
	}
	rows := filterMapRowChain(t)
	arrowOp := newArrowFilterMap(t)
	domain := []types.Datum{nil, int64(-1), int64(0), int64(1), int64(1 << 40), int64(1<<62 - 1), int64(-1 << 63)}
	rapid.Check(t, func(t *rapid.T) {
		var in zset.Batch
		for i := range rapid.IntRange(0, 10).Draw(t, "rows") {
			_ = i
			in.Add(types.Row{rapid.SampledFrom(domain).Draw(t, "k"), rapid.SampledFrom(domain).Draw(t, "v")}, int64(rapid.SampledFrom([]int{-1, 1, 2}).Draw(t, "w")))
		}
		rowCtx, arrowCtx := &Context{Env: &expr.Env{}}, &Context{Env: &expr.Env{}}
		want, err := rows.Step(rowCtx, []zset.Batch{in})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := arrowOp.step(arrowCtx, rowsArrow(inSchema, in))
		if err != nil {
			t.Fatal(err)
		}
		if got := arrowRows(rec); !zset.Equal(got, want) {
			t.Fatalf("input %v: arrow %v, rows %v", in, got, want)
		}
		if !zset.Equal(arrowCtx.Errors, rowCtx.Errors) {
			t.Fatalf("input %v: arrow errors %v, rows %v", in, arrowCtx.Errors, rowCtx.Errors)
		}
	})
}

func BenchmarkFilterMapArrow(b *testing.B) {
	inSchema, err := zset.ArrowSchema(intSchema(2))
	if err != nil {
		b.Fatal(err)
	}
	batch := benchBatch(rand.New(rand.NewPCG(1, 2)), 1000)
	rec := rowsArrow(inSchema, batch)
	ctx := &Context{Env: &expr.Env{}}
	reference := filterMapReference()
	paths := []struct {
		name string
		step func(*testing.B) func()
	}{
		{"rows", func(b *testing.B) func() {
			fused := filterMapRowChain(b)
			return func() {
				if _, err := fused.Step(ctx, []zset.Batch{batch}); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{"arrow", func(b *testing.B) func() {
			a := newArrowFilterMap(b)
			return func() {
				if _, err := a.step(ctx, rec); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{"arrow-to-rows", func(b *testing.B) func() {
			a := newArrowFilterMap(b)
			return func() {
				out, err := a.step(ctx, rec)
				if err != nil {
					b.Fatal(err)
				}
				arrowRows(out)
			}
		}},
		{"fused-columns", func(b *testing.B) func() {
			fused := filterMapRowChain(b)
			cols, err := zset.ColumnsFromRows(intSchema(2), batch)
			if err != nil {
				b.Fatal(err)
			}
			return func() {
				if _, err := fused.StepColumns(ctx, cols); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{"fused-columns-to-rows", func(b *testing.B) func() {
			fused := filterMapRowChain(b)
			cols, err := zset.ColumnsFromRows(intSchema(2), batch)
			if err != nil {
				b.Fatal(err)
			}
			return func() {
				out, err := fused.StepColumns(ctx, cols)
				if err != nil {
					b.Fatal(err)
				}
				out.Batch()
			}
		}},
		{"rows-arrow-rows", func(b *testing.B) func() {
			a := newArrowFilterMap(b)
			return func() {
				out, err := a.step(ctx, rowsArrow(inSchema, batch))
				if err != nil {
					b.Fatal(err)
				}
				arrowRows(out)
			}
		}},
	}
	for _, p := range paths {
		b.Run("path="+p.name, func(b *testing.B) {
			step := p.step(b)
			meter := startRate(b)
			for i := 0; i < b.N; i++ {
				step()
			}
			meter.report(b.N*benchBatchRows, reference)
		})
	}
}
