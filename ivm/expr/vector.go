package expr

import (
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
// NB: the vectors are plain Go slices ([]int64, []bool with a parallel NULL
// slice, []types.Datum), not Arrow arrays: batches in flight are
// row-oriented ([]types.Row of Datums, see ivm/zset), so a kernel's input is
// extracted from the rows and its output boxed back into Datums. Building
// Arrow arrays for that round trip costs a builder and validity bitmaps per
// batch and buys nothing the kernels use; slices owned by the Program are
// reused across batches with no allocation in the steady state.
//
//	p := expr.CompileVector(pred)
//	res, err := p.Eval(env, rows) // res.Bool(i), res.Null(i), res.Err(i)

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
	env  *Env
	rows []types.Row
	errs []error
}

func (c *vectorContext) fail(i int, err error) {
	if c.errs == nil {
		c.errs = make([]error, len(c.rows))
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
	n := len(rows)
	if cap(p.sel) < n {
		p.sel = make([]int32, n)
	}
	p.sel = p.sel[:n]
	for i := range p.sel {
		p.sel[i] = int32(i)
	}
	c := &vectorContext{env: env, rows: rows}
	p.out.resize(n)
	p.root.eval(c, p.sel, &p.out)
	return Result{vec: &p.out, errs: c.errs}
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
	}
	return &fallbackKernel{e: e, k: vectorKindOf(e.Type())}
}

// fallbackKernel evaluates its node row by row with Eval.
type fallbackKernel struct {
	e Expr
	k vectorKind
}

func (f *fallbackKernel) kind() vectorKind { return f.k }

func (f *fallbackKernel) eval(c *vectorContext, sel []int32, out *Vector) {
	for _, i := range sel {
		v, err := f.e.Eval(c.env, c.rows[i])
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
	switch k.k {
	case vectorInt:
		for _, i := range sel {
			d := c.rows[i][col]
			if out.nulls[i] = d == nil; !out.nulls[i] {
				out.ints[i] = d.(int64)
			}
		}
	case vectorBool:
		for _, i := range sel {
			d := c.rows[i][col]
			if out.nulls[i] = d == nil; !out.nulls[i] {
				out.bools[i] = d.(bool)
			}
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
	k.buf.resize(len(c.rows))
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
	k.buf.resize(len(c.rows))
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
	n := len(c.rows)
	k.buf.kind = vectorBool
	k.buf.resize(n)
	k.sawNull = growBools(k.sawNull, n)
	// decided is the value that ends the evaluation: false for AND.
	decided := k.or
	for _, i := range sel {
		k.sawNull[i] = false
		// A row that no argument decides is true for AND, false for OR.
		out.bools[i], out.nulls[i] = !decided, false
	}
	k.active = append(k.active[:0], sel...)
	for _, arg := range k.args {
		if len(k.active) == 0 {
			break
		}
		arg.eval(c, k.active, &k.buf)
		next := k.active[:0]
		for _, i := range k.active {
			switch {
			case c.failed(int(i)):
			case k.buf.nulls[i]:
				k.sawNull[i] = true
				next = append(next, i)
			case k.buf.bools[i] == decided:
				out.bools[i] = decided
			default:
				next = append(next, i)
			}
		}
		k.active = next
	}
	for _, i := range k.active {
		if k.sawNull[i] {
			out.nulls[i] = true
		}
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
	sel        []int32
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
	return k
}

func (k *intBinaryKernel) kind() vectorKind {
	if k.comparison {
		return vectorBool
	}
	return vectorInt
}

func (k *intBinaryKernel) eval(c *vectorContext, sel []int32, out *Vector) {
	n := len(c.rows)
	k.lbuf.kind, k.rbuf.kind = vectorInt, vectorInt
	k.lbuf.resize(n)
	k.rbuf.resize(n)
	k.l.eval(c, sel, &k.lbuf)
	// The right side runs only where the left side is non-NULL (Eval
	// returns NULL before evaluating it).
	k.sel = k.sel[:0]
	for _, i := range sel {
		if c.failed(int(i)) {
			continue
		}
		if k.lbuf.nulls[i] {
			out.nulls[i] = true
			continue
		}
		k.sel = append(k.sel, i)
	}
	k.r.eval(c, k.sel, &k.rbuf)
	live := k.sel[:0]
	for _, i := range k.sel {
		if c.failed(int(i)) {
			continue
		}
		if k.rbuf.nulls[i] {
			out.nulls[i] = true
			continue
		}
		live = append(live, i)
	}
	ls, rs := k.lbuf.ints, k.rbuf.ints
	if k.comparison {
		k.compare(live, ls, rs, out)
		return
	}
	for _, i := range live {
		a, b := ls[i], rs[i]
		var v int64
		exceptional := false
		switch k.op {
		case "+":
			v = a + b
			exceptional = (a >= 0) == (b >= 0) && (v >= 0) != (a >= 0)
		case "-":
			v = a - b
			exceptional = (a >= 0) != (b >= 0) && (v >= 0) != (a >= 0)
		case "*":
			// Operands within 32 bits cannot overflow int64; anything
			// else takes the checked row path.
			if a == int64(int32(a)) && b == int64(int32(b)) {
				v = a * b
			} else {
				exceptional = true
			}
		case "/":
			if b == 0 || b == -1 {
				exceptional = true
			} else {
				v = a / b
			}
		case "%":
			if b == 0 || b == -1 {
				exceptional = true
			} else {
				v = a % b
			}
		}
		if !exceptional && !intFits(v, k.bits) {
			exceptional = true
		}
		if exceptional {
			d, err := k.fn(c.env, a, b)
			if err != nil {
				c.fail(int(i), err)
				continue
			}
			out.set(int(i), d)
			continue
		}
		out.ints[i], out.nulls[i] = v, false
	}
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
