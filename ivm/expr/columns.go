package expr

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/rockstream/rockstream/ivm/types"
)

// Columns is a batch in columnar form as a Program reads it (zset.Columns
// implements it): Arrow arrays, one per column, with the row Datum of each
// value and the whole row for kernels that evaluate row by row.
type Columns interface {
	Len() int
	Column(j int) arrow.Array
	Datum(j, i int) types.Datum
	Row(i int) types.Row
}

// EvalColumnsSel is EvalSel over a columnar batch: the same values and
// errors for the same rows. Column references read the arrays; a fallback
// kernel builds the rows it evaluates.
func (p *Program) EvalColumnsSel(env *Env, cols Columns, sel []int32) Result {
	n := cols.Len()
	c := &vectorContext{env: env, cols: cols, n: n}
	p.out.resize(n)
	p.root.eval(c, sel, &p.out)
	p.RowsBuilt += c.builtN
	return Result{vec: &p.out, errs: c.errs}
}

// Ints returns the value and NULL slices of an integer result, indexed by
// row (ok is false for other results).
func (r Result) Ints() (values []int64, nulls []bool, ok bool) {
	if r.vec.kind != vectorInt {
		return nil, nil, false
	}
	return r.vec.ints, r.vec.nulls, true
}

// Bools returns the value and NULL slices of a boolean result computed by
// boolean kernels, indexed by row (ok is false otherwise).
func (r Result) Bools() (values, nulls []bool, ok bool) {
	if r.vec.kind != vectorBool {
		return nil, nil, false
	}
	return r.vec.bools, r.vec.nulls, true
}

// evalColumns is columnKernel.eval over a columnar batch.
func (k *columnKernel) evalColumns(c *vectorContext, sel []int32, out *Vector) {
	a := c.cols.Column(k.index)
	nulls := out.nulls
	switch k.k {
	case vectorInt:
		if !readInts(a, sel, out.ints) {
			panic(fmt.Sprintf("expr: column %d is %s, not an integer array", k.index, a.DataType()))
		}
		for _, i := range sel {
			nulls[i] = a.IsNull(int(i))
		}
		return
	case vectorBool:
		b, ok := a.(*array.Boolean)
		if !ok {
			panic(fmt.Sprintf("expr: column %d is %s, not a boolean array", k.index, a.DataType()))
		}
		bools := out.bools
		for _, i := range sel {
			bools[i], nulls[i] = b.Value(int(i)), b.IsNull(int(i))
		}
		return
	}
	for _, i := range sel {
		d := c.cols.Datum(k.index, int(i))
		out.datums[i], nulls[i] = d, d == nil
	}
}

// readInts copies the values sel of an integer array into ints (NULL
// positions get the array's placeholder value).
func readInts(a arrow.Array, sel []int32, ints []int64) bool {
	switch a := a.(type) {
	case *array.Int64:
		vals := a.Int64Values()
		for _, i := range sel {
			ints[i] = vals[i]
		}
	case *array.Int32:
		vals := a.Int32Values()
		for _, i := range sel {
			ints[i] = int64(vals[i])
		}
	case *array.Int16:
		vals := a.Int16Values()
		for _, i := range sel {
			ints[i] = int64(vals[i])
		}
	default:
		return false
	}
	return true
}

// evalNonNullColumn is intBinaryKernel.evalNonNull for a column operand
// of a columnar batch: values into v, NULL rows marked NULL in out, the
// rest appended to dst.
func evalNonNullColumn(c *vectorContext, index int, sel []int32, v *Vector, out *Vector, dst []int32) []int32 {
	a := c.cols.Column(index)
	if !readInts(a, sel, v.ints) {
		panic(fmt.Sprintf("expr: column %d is %s, not an integer array", index, a.DataType()))
	}
	if a.NullN() == 0 {
		return append(dst, sel...)
	}
	outNulls := out.nulls
	for _, i := range sel {
		if a.IsNull(int(i)) {
			outNulls[i] = true
			continue
		}
		dst = append(dst, i)
	}
	return dst
}

// readColumns returns the columns e reads, and false when some node of e
// is not known to read the row only through ColumnRefs (then a row built
// for it must be whole).
func readColumns(e Expr) ([]int, bool) {
	var cols []int
	ok := true
	Walk(e, func(x Expr) {
		switch x := x.(type) {
		case *ColumnRef:
			if !slices.Contains(cols, x.Index) {
				cols = append(cols, x.Index)
			}
		case *Const, *Not, *And, *Or, *IsNull, *BoolTest, *DistinctFrom, *Case, *Coalesce, *NullIf,
			*MinMax, *InList, *Between, *Like, *RegexMatch, *Binary, *Unary, *Cast, *Call, *AnyAll:
			// Eval reads the row only through its children.
		default:
			ok = false
		}
	})
	return cols, ok
}

// evalSparse is fallbackKernel.eval over columnar input for an expression
// whose columns are known: one reused row holds, for each row in turn,
// only the columns the expression reads (Eval keeps no reference to it).
//
// NB: unless the result can hold other Datums (an array or record), the
// string and int8 values read are boxed through the kernel's Boxer, one
// slab of several hundred values at a time instead of one allocation per
// value; a result that IS one of them (CASE … ELSE col) is boxed afresh,
// so no result keeps a slab alive (rows built from results may be cached
// long after the step).
func (f *fallbackKernel) evalSparse(c *vectorContext, sel []int32, out *Vector) {
	if k := f.e.Type().Kind; k == types.KindArray || k == types.KindRecord {
		f.evalSparseBoxed(c, sel, out)
		return
	}
	row := f.rowBuffer()
	arrays := f.arrays[:0]
	for _, j := range f.reads {
		arrays = append(arrays, c.cols.Column(j))
	}
	f.arrays = arrays
	for _, i := range sel {
		for k, j := range f.reads {
			switch a := arrays[k].(type) {
			case *array.String:
				if a.IsNull(int(i)) {
					row[j] = nil
				} else {
					row[j] = f.boxer.String(a.Value(int(i)))
				}
			case *array.Int64:
				if a.IsNull(int(i)) {
					row[j] = nil
				} else {
					row[j] = f.boxer.Int64(a.Value(int(i)))
				}
			default:
				row[j] = c.cols.Datum(j, int(i))
			}
		}
		v, err := f.e.Eval(c.env, row)
		if err != nil {
			c.fail(int(i), err)
			continue
		}
		if v != nil {
			for _, j := range f.reads {
				if sameBox(v, row[j]) {
					v = rebox(v)
					break
				}
			}
		}
		out.set(int(i), v)
	}
	clear(f.arrays)
	clear(row)
}

// rowBuffer is the kernel's row, wide enough for the columns it reads.
func (f *fallbackKernel) rowBuffer() types.Row {
	width := 0
	for _, j := range f.reads {
		width = max(width, j+1)
	}
	if len(f.row) < width {
		f.row = make(types.Row, width)
	}
	return f.row[:width]
}

// evalSparseBoxed is evalSparse boxing every value on its own.
func (f *fallbackKernel) evalSparseBoxed(c *vectorContext, sel []int32, out *Vector) {
	row := f.rowBuffer()
	for _, i := range sel {
		for _, j := range f.reads {
			row[j] = c.cols.Datum(j, int(i))
		}
		v, err := f.e.Eval(c.env, row)
		if err != nil {
			c.fail(int(i), err)
			continue
		}
		out.set(int(i), v)
	}
}
