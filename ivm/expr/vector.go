package expr

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/rockstream/rockstream/ivm/types"
)

// Vectorized evaluation of one expression over a whole batch of rows.
//
// A Program is an expression compiled into column kernels: column
// references, constants, integer arithmetic and comparisons, AND/OR/NOT and
// IS [NOT] NULL run as tight loops over typed column vectors; any other
// node is a fallback kernel that calls the node's row-at-a-time Eval for the
// rows it must compute, so every expression compiles and semantics never
// depend on which kernels exist.
//
// Semantics are exactly those of Eval, row by row, including which rows
// evaluate which subexpressions: each kernel runs on a selection vector of
// the rows still undecided (AND skips rows already false, OR rows already
// true, a strict operator skips its right side where its left side is
// NULL, and nothing runs on a row that already failed), so a row raises an
// error exactly when, and with the same error as, Eval raises it. Integer
// kernels detect the exceptional rows (overflow, division by zero,
// MIN / -1) with a cheap test and hand only those rows to the operator's
// row function, so the error value (22003, 22012) is the one Eval gives.
//
// The input is either rows ([]types.Row, EvalSel) or a columnar batch of
// Arrow arrays (EvalColumnsSel, columns.go): column kernels read typed
// values straight from the arrays, and only fallback kernels build the rows
// they evaluate (once per row). The intermediate vectors are plain Go
// slices ([]int64, []bool with a parallel NULL slice, []types.Datum) owned
// by the Program and reused across batches with no allocation in the
// steady state; callers turn a Result into an Arrow array (op.Fused) or
// box it into rows (Box).
//
// EvalSel evaluates only a selection of the rows (a fused Filter→Map step
// evaluates the SELECT list on the rows the WHERE clause kept); Box writes
// a result column into a batch's row-major backing array, boxing integer
// results into one slab per batch instead of one allocation per value
// (box.go).
//
//	p := expr.CompileVector(pred)
//	res := p.Eval(env, rows) // res.Bool(i), res.Null(i), res.Err(i)
//	kept := res.SelectTrue(nil, expr.AllRows(nil, len(rows)))

// vectorKind is the physical form of a vector's values.
type vectorKind uint8

const (
	vectorDatum vectorKind = iota // values in datums
	vectorInt                     // int2/int4/int8 in ints
	vectorBool                    // bool in bools
)

func vectorKindOf(t types.Type) vectorKind {
	switch t.Kind {
	case types.KindInt2, types.KindInt4, types.KindInt8:
		return vectorInt
	case types.KindBool:
		return vectorBool
	}
	return vectorDatum
}

// Vector is one column of results, indexed by row number within the batch.
// Only positions in the selection it was computed for are meaningful.
type Vector struct {
	kind   vectorKind
	ints   []int64
	bools  []bool
	datums []types.Datum
	nulls  []bool
}

func (v *Vector) resize(n int) {
	v.nulls = growBools(v.nulls, n)
	switch v.kind {
	case vectorInt:
		if cap(v.ints) < n {
			v.ints = make([]int64, n)
		}
		v.ints = v.ints[:n]
	case vectorBool:
		v.bools = growBools(v.bools, n)
	default:
		if cap(v.datums) < n {
			v.datums = make([]types.Datum, n)
		}
		v.datums = v.datums[:n]
	}
}

func growBools(b []bool, n int) []bool {
	if cap(b) < n {
		return make([]bool, n)
	}
	return b[:n]
}

// set stores a Datum at row i (unboxing it for typed vectors).
func (v *Vector) set(i int, d types.Datum) {
	if d == nil {
		v.nulls[i] = true
		return
	}
	v.nulls[i] = false
	switch v.kind {
	case vectorInt:
		v.ints[i] = d.(int64)
	case vectorBool:
		v.bools[i] = d.(bool)
	default:
		v.datums[i] = d
	}
}

// Datum returns row i's value as a Datum (nil for NULL).
func (v *Vector) Datum(i int) types.Datum {
	if v.nulls[i] {
		return nil
	}
	switch v.kind {
	case vectorInt:
		return v.ints[i]
	case vectorBool:
		return v.bools[i]
	}
	return v.datums[i]
}

// vectorContext is one batch evaluation: the rows and the per-row errors
// (nil until the first error).
type vectorContext struct {
	env *Env
	// rows is the batch in row form, or nil when it is cols (columnar
	// input, see columns.go); n is its length.
	rows []types.Row
	cols Columns
	n    int
	// built caches the rows built from cols for fallback kernels.
	built  []types.Row
	builtN int64
	errs   []error
}

// row is row i, built from the columns (once) when the input is columnar.
func (c *vectorContext) row(i int32) types.Row {
	if c.cols == nil {
		return c.rows[i]
	}
	if c.built == nil {
		c.built = make([]types.Row, c.n)
	}
	if c.built[i] == nil {
		c.built[i] = c.cols.Row(int(i))
		c.builtN++
	}
	return c.built[i]
}

func (c *vectorContext) fail(i int, err error) {
	if c.errs == nil {
		c.errs = make([]error, c.n)
	}
	c.errs[i] = err
}

func (c *vectorContext) failed(i int) bool { return c.errs != nil && c.errs[i] != nil }

// kernel computes its node for the rows in sel (ascending, none failed)
// into out, recording failures in c.
type kernel interface {
	eval(c *vectorContext, sel []int32, out *Vector)
	kind() vectorKind
}

// Program is a compiled expression. It reuses its buffers across calls, so
// it must not be used by two goroutines at once.
type Program struct {
	root kernel
	out  Vector
	sel  []int32
	// Vectorized is false when the whole expression is one fallback kernel
	// (nothing gained over Eval).
	Vectorized bool
	// RowsBuilt counts the whole rows fallback kernels built from
	// columnar input (EvalColumnsSel) over the Program's lifetime: for
	// expressions whose nodes are not all known to read the row only
	// through column references (the others box just the columns they
	// read into one reused row).
	RowsBuilt int64
}

// Result is a Program's output for one batch: valid until the next Eval.
type Result struct {
	vec  *Vector
	errs []error
}

// Null reports whether row i's value is NULL.
func (r Result) Null(i int) bool { return r.vec.nulls[i] }

// Bool is row i's value of a boolean expression (false for NULL).
func (r Result) Bool(i int) bool {
	if r.vec.nulls[i] {
		return false
	}
	if r.vec.kind == vectorBool {
		return r.vec.bools[i]
	}
	b, _ := r.vec.datums[i].(bool)
	return b
}

// Datum is row i's value.
func (r Result) Datum(i int) types.Datum { return r.vec.Datum(i) }

// Err is row i's evaluation error, if any.
func (r Result) Err(i int) error {
	if r.errs == nil {
		return nil
	}
	return r.errs[i]
}

// Failed reports whether any row failed.
func (r Result) Failed() bool { return r.errs != nil }

// SelectTrue appends to dst the rows of sel whose value is true (not false,
// not NULL, not failed), in sel's order.
func (r Result) SelectTrue(dst, sel []int32) []int32 {
	v := r.vec
	if v.kind != vectorBool {
		for _, i := range sel {
			if r.Bool(int(i)) && r.Err(int(i)) == nil {
				dst = append(dst, i)
			}
		}
		return dst
	}
	bools, nulls := v.bools, v.nulls
	if r.errs == nil {
		for _, i := range sel {
			if bools[i] && !nulls[i] {
				dst = append(dst, i)
			}
		}
		return dst
	}
	for _, i := range sel {
		if bools[i] && !nulls[i] && r.errs[i] == nil {
			dst = append(dst, i)
		}
	}
	return dst
}

// Box writes the value of row sel[k] as a Datum to dst[k*stride] for every
// k: the column of a batch of output rows laid out in one backing array.
// Integer results share one allocation for the whole batch (see box.go)
// instead of one per value. The rows in sel must not have failed.
func (r Result) Box(dst []types.Datum, stride int, sel []int32) {
	v := r.vec
	switch v.kind {
	case vectorInt:
		slab := make([]int64, len(sel))
		typ := int64TypeWord()
		for k, i := range sel {
			if v.nulls[i] {
				dst[k*stride] = nil
				continue
			}
			slab[k] = v.ints[i]
			dst[k*stride] = boxInt64(typ, &slab[k])
		}
	case vectorBool:
		// NB: a bool converts to an interface without allocating.
		for k, i := range sel {
			if v.nulls[i] {
				dst[k*stride] = nil
				continue
			}
			dst[k*stride] = v.bools[i]
		}
	default:
		for k, i := range sel {
			if v.nulls[i] {
				dst[k*stride] = nil
				continue
			}
			dst[k*stride] = v.datums[i]
		}
	}
}

// CompileVector compiles e for vectorized evaluation.
func CompileVector(e Expr) *Program {
	root := compileKernel(e)
	f, fallback := root.(*fallbackKernel)
	if fallback {
		// NB: no typed parent reads the root, so keep Eval's Datums as
		// they are instead of unboxing and boxing them again.
		f.k = vectorDatum
	}
	return &Program{root: root, out: Vector{kind: root.kind()}, Vectorized: !fallback}
}

// Eval evaluates the program on every row.
func (p *Program) Eval(env *Env, rows []types.Row) Result {
	p.sel = AllRows(p.sel, len(rows))
	return p.EvalSel(env, rows, p.sel)
}

// EvalSel evaluates the program on the rows numbered in sel (ascending,
// each < len(rows)) and on no other row, so a row outside sel never raises
// an error: a fused Filter→Map step evaluates the SELECT list only on the
// rows the WHERE clause kept, as the unfused operators would. The Result is
// indexed by row number; only positions in sel are meaningful.
func (p *Program) EvalSel(env *Env, rows []types.Row, sel []int32) Result {
	c := &vectorContext{env: env, rows: rows, n: len(rows)}
	p.out.resize(len(rows))
	p.root.eval(c, sel, &p.out)
	return Result{vec: &p.out, errs: c.errs}
}

// AllRows returns the selection 0, 1, …, n-1, reusing buf.
func AllRows(buf []int32, n int) []int32 {
	if cap(buf) < n {
		buf = make([]int32, n)
	}
	buf = buf[:n]
	for i := range buf {
		buf[i] = int32(i)
	}
	return buf
}

func compileKernel(e Expr) kernel {
	switch x := e.(type) {
	case *ColumnRef:
		return &columnKernel{index: x.Index, k: vectorKindOf(x.Typ)}
	case *Const:
		return &constKernel{value: x.Value, k: vectorKindOf(x.Typ)}
	case *Cast:
		if from, to := x.X.Type().Kind, x.Typ.Kind; from.IsInteger() && to.IsInteger() && intBits(from) <= intBits(to) {
			// A widening integer cast never fails and keeps the value.
			return compileKernel(x.X)
		}
	case *Not:
		if vectorKindOf(x.X.Type()) == vectorBool {
			return &notKernel{x: compileKernel(x.X)}
		}
	case *And:
		if k := newLogicKernel(x.Args, false); k != nil {
			return k
		}
	case *Or:
		if k := newLogicKernel(x.Args, true); k != nil {
			return k
		}
	case *IsNull:
		return &isNullKernel{x: compileKernel(x.X), negated: x.Negated}
	case *Binary:
		if k := newIntBinaryKernel(x); k != nil {
			return k
		}
		if k := timeKernelOf(x); k != nil {
			return k
		}
	case *Call:
		if k := timeKernelOf(x); k != nil {
			return k
		}
	}
	return newFallbackKernel(e, vectorKindOf(e.Type()))
}

// fallbackKernel evaluates its node row by row with Eval.
type fallbackKernel struct {
	e Expr
	k vectorKind
	// reads lists the columns e reads, when every node of e reads the
	// row only through ColumnRefs (readColumns); over columnar input the
	// kernel then fills only those positions of one reused row instead
	// of building every row whole.
	reads []int
	// sparse is set when reads is known; row is the reused row.
	sparse bool
	row    types.Row
	// arrays are the read columns of the batch being evaluated; boxer
	// boxes their values (evalSparse).
	arrays []arrow.Array
	boxer  Boxer
}

func newFallbackKernel(e Expr, k vectorKind) *fallbackKernel {
	reads, ok := readColumns(e)
	return &fallbackKernel{e: kernelRewrite(e), k: k, reads: reads, sparse: ok}
}

func (f *fallbackKernel) kind() vectorKind { return f.k }

func (f *fallbackKernel) eval(c *vectorContext, sel []int32, out *Vector) {
	if c.cols != nil && f.sparse {
		f.evalSparse(c, sel, out)
		return
	}
	for _, i := range sel {
		v, err := f.e.Eval(c.env, c.row(i))
		if err != nil {
			c.fail(int(i), err)
			continue
		}
		out.set(int(i), v)
	}
}

// columnKernel reads one input column.
type columnKernel struct {
	index int
	k     vectorKind
}

func (k *columnKernel) kind() vectorKind { return k.k }

func (k *columnKernel) eval(c *vectorContext, sel []int32, out *Vector) {
	col := k.index
	if c.cols != nil {
		k.evalColumns(c, sel, out)
		return
	}
	switch k.k {
	case vectorInt:
		rows, ints, nulls := c.rows, out.ints, out.nulls
		for _, i := range sel {
			d := rows[i][col]
			v, ok := d.(int64)
			if !ok && d != nil {
				panic(fmt.Sprintf("expr: column %d holds %T, not int64", col, d))
			}
			ints[i], nulls[i] = v, !ok
		}
	case vectorBool:
		rows, bools, nulls := c.rows, out.bools, out.nulls
		for _, i := range sel {
			d := rows[i][col]
			v, ok := d.(bool)
			if !ok && d != nil {
				panic(fmt.Sprintf("expr: column %d holds %T, not bool", col, d))
			}
			bools[i], nulls[i] = v, !ok
		}
	default:
		for _, i := range sel {
			d := c.rows[i][col]
			out.datums[i], out.nulls[i] = d, d == nil
		}
	}
}

// constKernel broadcasts a constant.
type constKernel struct {
	value types.Datum
	k     vectorKind
}

func (k *constKernel) kind() vectorKind { return k.k }

func (k *constKernel) eval(_ *vectorContext, sel []int32, out *Vector) {
	if v, ok := k.value.(int64); ok && k.k == vectorInt {
		ints, nulls := out.ints, out.nulls
		for _, i := range sel {
			ints[i], nulls[i] = v, false
		}
		return
	}
	for _, i := range sel {
		out.set(int(i), k.value)
	}
}

// notKernel is NOT x.
type notKernel struct {
	x   kernel
	buf Vector
}

func (k *notKernel) kind() vectorKind { return vectorBool }

func (k *notKernel) eval(c *vectorContext, sel []int32, out *Vector) {
	k.buf.kind = vectorBool
	k.buf.resize(c.n)
	k.x.eval(c, sel, &k.buf)
	for _, i := range sel {
		out.bools[i], out.nulls[i] = !k.buf.bools[i], k.buf.nulls[i]
	}
}

// isNullKernel is x IS [NOT] NULL.
type isNullKernel struct {
	x       kernel
	negated bool
	buf     Vector
}

func (k *isNullKernel) kind() vectorKind { return vectorBool }

func (k *isNullKernel) eval(c *vectorContext, sel []int32, out *Vector) {
	k.buf.kind = k.x.kind()
	k.buf.resize(c.n)
	k.x.eval(c, sel, &k.buf)
	for _, i := range sel {
		out.bools[i], out.nulls[i] = k.buf.nulls[i] != k.negated, false
	}
}

// logicKernel is AND (or OR when or is set) with three-valued logic.
// Arguments run left to right, each only on the rows still undecided, as
// Eval stops at the first false (AND) or true (OR).
type logicKernel struct {
	args    []kernel
	or      bool
	buf     Vector
	sawNull []bool
	active  []int32
}

func newLogicKernel(args []Expr, or bool) *logicKernel {
	k := &logicKernel{or: or}
	for _, a := range args {
		if vectorKindOf(a.Type()) != vectorBool {
			return nil
		}
		k.args = append(k.args, compileKernel(a))
	}
	return k
}

func (k *logicKernel) kind() vectorKind { return vectorBool }

func (k *logicKernel) eval(c *vectorContext, sel []int32, out *Vector) {
	n := c.n
	k.buf.kind = vectorBool
	k.buf.resize(n)
	k.sawNull = growBools(k.sawNull, n)
	// decided is the value that ends the evaluation: false for AND.
	decided := k.or
	for _, i := range sel {
		k.sawNull[i] = false
	}
	k.active = append(k.active[:0], sel...)
	for _, arg := range k.args {
		if len(k.active) == 0 {
			break
		}
		arg.eval(c, k.active, &k.buf)
		next := k.active[:0]
		bools, nulls, sawNull, outBools, outNulls := k.buf.bools, k.buf.nulls, k.sawNull, out.bools, out.nulls
		for _, i := range k.active {
			switch {
			case c.errs != nil && c.errs[i] != nil:
			case nulls[i]:
				sawNull[i] = true
				next = append(next, i)
			case bools[i] == decided:
				outBools[i], outNulls[i] = decided, false
			default:
				next = append(next, i)
			}
		}
		k.active = next
	}
	// A row that no argument decided is true for AND, false for OR, or
	// NULL if an argument was NULL. (A failed row's value is unspecified.)
	for _, i := range k.active {
		out.bools[i], out.nulls[i] = !decided, k.sawNull[i]
	}
}

// intBinaryKernel is an integer arithmetic or comparison operator. Rows
// where the fast path could be wrong (overflow, zero divisor, -1 divisor)
// are computed by the operator's row function.
type intBinaryKernel struct {
	l, r       kernel
	op         string
	bits       int
	fn         BinaryFn
	comparison bool
	lbuf, rbuf Vector
	// rconst is the right operand when it is a non-NULL constant; rfilled
	// is set once rbuf holds it in every position.
	rconst  *int64
	rfilled bool
	// sel, live and slow are reused selection buffers: rows with a
	// non-NULL left side, rows with both sides non-NULL, and rows for the
	// row function.
	sel, live, slow []int32
}

func newIntBinaryKernel(b *Binary) kernel {
	lk, rk := b.Info.Left.Kind, b.Info.Right.Kind
	if !lk.IsInteger() || lk != rk || b.L.Type().Kind != lk || b.R.Type().Kind != rk {
		return nil
	}
	k := &intBinaryKernel{op: b.Info.Op, bits: intBits(lk), fn: b.Info.Fn}
	switch b.Info.Op {
	case "=", "<>", "<", "<=", ">", ">=":
		k.comparison = true
	case "+", "-", "*", "/", "%":
	default:
		return nil
	}
	k.l, k.r = compileKernel(b.L), compileKernel(b.R)
	if c, ok := k.r.(*constKernel); ok {
		if v, ok := c.value.(int64); ok {
			k.rconst = &v
		}
	}
	return k
}

func (k *intBinaryKernel) kind() vectorKind {
	if k.comparison {
		return vectorBool
	}
	return vectorInt
}

func (k *intBinaryKernel) eval(c *vectorContext, sel []int32, out *Vector) {
	n := c.n
	k.lbuf.kind, k.rbuf.kind = vectorInt, vectorInt
	k.lbuf.resize(n)
	// The right side runs only where the left side is non-NULL (Eval
	// returns NULL before evaluating it).
	k.sel = k.evalNonNull(c, k.l, sel, &k.lbuf, out, k.sel[:0])
	var live []int32
	if k.rconst != nil {
		// NB: only this kernel writes rbuf, so the constant is written
		// once per buffer, not once per batch; nothing can fail or be
		// NULL on this side.
		if cap(k.rbuf.ints) < n || !k.rfilled {
			k.rbuf.resize(n)
			all := k.rbuf.ints[:cap(k.rbuf.ints)]
			for i := range all {
				all[i] = *k.rconst
			}
			k.rfilled = true
		}
		k.rbuf.ints = k.rbuf.ints[:cap(k.rbuf.ints)]
		live = k.sel
	} else {
		k.rbuf.resize(n)
		live = k.evalNonNull(c, k.r, k.sel, &k.rbuf, out, k.live[:0])
		k.live = live
	}
	ls, rs := k.lbuf.ints, k.rbuf.ints
	if k.comparison {
		k.compare(live, ls, rs, out)
		return
	}
	// Rows the fast loops cannot compute exactly (possible overflow, a
	// zero or -1 divisor) are collected in slow and computed by the
	// operator's row function, which raises Eval's error.
	slow := k.slow[:0]
	ints, nulls, bits := out.ints, out.nulls, k.bits
	switch k.op {
	case "+":
		for _, i := range live {
			a, b := ls[i], rs[i]
			v := a + b
			// NB: a sum overflows int64 iff its sign differs from both
			// operands' signs.
			if (v^a)&(v^b) < 0 || !intFits(v, bits) {
				slow = append(slow, i)
				continue
			}
			ints[i], nulls[i] = v, false
		}
	case "-":
		for _, i := range live {
			a, b := ls[i], rs[i]
			v := a - b
			// NB: a difference overflows int64 iff the operands' signs
			// differ and the result's sign differs from a's.
			if (a^b)&(a^v) < 0 || !intFits(v, bits) {
				slow = append(slow, i)
				continue
			}
			ints[i], nulls[i] = v, false
		}
	case "*":
		for _, i := range live {
			a, b := ls[i], rs[i]
			// Operands within 32 bits cannot overflow int64; anything
			// else takes the checked row path.
			if a != int64(int32(a)) || b != int64(int32(b)) || !intFits(a*b, bits) {
				slow = append(slow, i)
				continue
			}
			ints[i], nulls[i] = a*b, false
		}
	case "/", "%":
		rem := k.op == "%"
		for _, i := range live {
			a, b := ls[i], rs[i]
			if b == 0 || b == -1 {
				slow = append(slow, i)
				continue
			}
			v := a / b
			if rem {
				v = a % b
			}
			ints[i], nulls[i] = v, false
		}
	}
	k.slow = slow
	for _, i := range slow {
		d, err := k.fn(c.env, ls[i], rs[i])
		if err != nil {
			c.fail(int(i), err)
			continue
		}
		out.set(int(i), d)
	}
}

// evalNonNull evaluates operand x on sel into v and appends to dst the
// rows where it is not NULL and did not fail; out is NULL on the NULL rows
// (a strict operator). A column operand is read straight from the rows in
// the same pass.
func (k *intBinaryKernel) evalNonNull(c *vectorContext, x kernel, sel []int32, v *Vector, out *Vector, dst []int32) []int32 {
	col, ok := x.(*columnKernel)
	if ok && c.cols != nil {
		return evalNonNullColumn(c, col.index, sel, v, out, dst)
	}
	if !ok {
		x.eval(c, sel, v)
		return k.nonNull(c, sel, v, out, dst)
	}
	// NB: no row in sel has failed (the kernel contract) and reading a
	// column cannot fail.
	rows, ints, outNulls, index := c.rows, v.ints, out.nulls, col.index
	for _, i := range sel {
		d := rows[i][index]
		a, ok := d.(int64)
		if !ok {
			if d != nil {
				panic(fmt.Sprintf("expr: column %d holds %T, not int64", index, d))
			}
			outNulls[i] = true
			continue
		}
		ints[i] = a
		dst = append(dst, i)
	}
	return dst
}

// nonNull appends to dst the rows of sel where v is not NULL and the row
// has not failed; out is NULL on the NULL rows (a strict operator).
func (k *intBinaryKernel) nonNull(c *vectorContext, sel []int32, v *Vector, out *Vector, dst []int32) []int32 {
	nulls, outNulls := v.nulls, out.nulls
	if c.errs == nil {
		for _, i := range sel {
			if nulls[i] {
				outNulls[i] = true
				continue
			}
			dst = append(dst, i)
		}
		return dst
	}
	for _, i := range sel {
		switch {
		case c.errs[i] != nil:
		case nulls[i]:
			outNulls[i] = true
		default:
			dst = append(dst, i)
		}
	}
	return dst
}

func (k *intBinaryKernel) compare(live []int32, ls, rs []int64, out *Vector) {
	bs, nulls := out.bools, out.nulls
	switch k.op {
	case "=":
		for _, i := range live {
			bs[i], nulls[i] = ls[i] == rs[i], false
		}
	case "<>":
		for _, i := range live {
			bs[i], nulls[i] = ls[i] != rs[i], false
		}
	case "<":
		for _, i := range live {
			bs[i], nulls[i] = ls[i] < rs[i], false
		}
	case "<=":
		for _, i := range live {
			bs[i], nulls[i] = ls[i] <= rs[i], false
		}
	case ">":
		for _, i := range live {
			bs[i], nulls[i] = ls[i] > rs[i], false
		}
	case ">=":
		for _, i := range live {
			bs[i], nulls[i] = ls[i] >= rs[i], false
		}
	}
}
