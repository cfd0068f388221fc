package expr

import (
	"math"
	"unsafe"

	"github.com/rockstream/rockstream/ivm/types"
)

// Vectorized timestamp arithmetic: date_bin with a constant stride and
// origin, and a timestamp plus or minus a constant interval of
// microseconds, possibly scaled by an integer:
//
//	date_bin('2 seconds', date_time, '1970-01-01') - k * interval '2 seconds'
//
// (a HOP window written for PostgreSQL: each row's five window starts). Row
// by row, each row boxed its timestamps and intervals (an allocation per
// value), cast k to float8 and went through the general interval scaling;
// a timeKernel computes on the int64 microseconds and boxes each batch's
// results into one slab.
//
// Semantics are Eval's: a row off the fast path (an infinite timestamp, a
// product or sum near the ends of the range) calls the nodes' own
// functions on the operand values already computed, which raise Eval's
// errors; operands run in Eval's order on the rows Eval would evaluate
// them for (the interval side only where the timestamp is not NULL).
type timeKernel struct {
	// tz: the result is timestamptz (else timestamp).
	tz bool
	// x is the timestamp operand; xt is x when it is a timeKernel too
	// (read as microseconds, unboxed).
	x    kernel
	xt   *timeKernel
	xbuf Vector

	// date_bin (bin set): the constant stride and origin.
	bin          bool
	stride       types.Interval
	origin       int64
	originFinite bool

	// ± interval: the constant interval iv (months and days 0), times
	// the integer factor when factor is set (iv * CAST(factor AS
	// float8), or the other way round when ivLeft is false).
	neg    bool
	iv     types.Interval
	factor kernel
	fbuf   Vector
	ivLeft bool
	// mulFn and addFn are the * and ± nodes' functions, for the rows off
	// the fast path.
	mulFn, addFn BinaryFn

	// micros is this kernel's result as microseconds; live is scratch.
	micros Vector
	live   []int32
}

// timeKernelOf compiles e as a timeKernel when it is one of the shapes
// above (nil otherwise).
func timeKernelOf(e Expr) *timeKernel {
	tz := false
	switch e.Type().Kind {
	case types.KindTimestamp:
	case types.KindTimestampTZ:
		tz = true
	default:
		return nil
	}
	switch x := e.(type) {
	case *Call:
		return newDateBinKernel(x, tz)
	case *Binary:
		return newTimeIntervalKernel(x, tz)
	}
	return nil
}

func newDateBinKernel(c *Call, tz bool) *timeKernel {
	if (c.Fn != dateBinTimestamp || tz) && (c.Fn != dateBinTimestampTZ || !tz) || len(c.Args) != 3 {
		return nil
	}
	stride, ok := c.Args[0].(*Const)
	if !ok || stride.Value == nil {
		return nil
	}
	origin, ok := c.Args[2].(*Const)
	if !ok || origin.Value == nil {
		return nil
	}
	k := &timeKernel{tz: tz, bin: true, stride: stride.Value.(types.Interval)}
	if tz {
		o := origin.Value.(types.TimestampTZ)
		k.origin, k.originFinite = int64(o), o.IsFinite()
	} else {
		o := origin.Value.(types.Timestamp)
		k.origin, k.originFinite = int64(o), o.IsFinite()
	}
	k.setOperand(c.Args[1])
	return k
}

func newTimeIntervalKernel(b *Binary, tz bool) *timeKernel {
	if b.Info.Op != "+" && b.Info.Op != "-" || b.L.Type().Kind != b.Type().Kind || b.R.Type().Kind != types.KindInterval {
		return nil
	}
	k := &timeKernel{tz: tz, neg: b.Info.Op == "-", addFn: b.Info.Fn}
	switch r := b.R.(type) {
	case *Const:
		if r.Value == nil {
			return nil
		}
		k.iv = r.Value.(types.Interval)
	case *Binary:
		if r.Info.Op != "*" {
			return nil
		}
		iv, factor, ivLeft := r.L, r.R, true
		if _, ok := iv.(*Const); !ok {
			iv, factor, ivLeft = r.R, r.L, false
		}
		c, ok := iv.(*Const)
		if !ok || c.Value == nil || c.Typ.Kind != types.KindInterval {
			return nil
		}
		// The factor is an int2 or int4 cast to float8: exact, so the
		// fast path's integer product is the float scaling's.
		cast, ok := factor.(*Cast)
		if !ok || cast.Typ.Kind != types.KindFloat8 {
			return nil
		}
		if fk := cast.X.Type().Kind; fk != types.KindInt2 && fk != types.KindInt4 {
			return nil
		}
		k.iv, k.factor, k.ivLeft, k.mulFn = c.Value.(types.Interval), compileKernel(cast.X), ivLeft, r.Info.Fn
	default:
		return nil
	}
	if k.iv.Months != 0 || k.iv.Days != 0 {
		return nil // months and days depend on the calendar (and zone)
	}
	k.setOperand(b.L)
	return k
}

func (k *timeKernel) setOperand(x Expr) {
	if t := timeKernelOf(x); t != nil {
		k.xt = t
		return
	}
	k.x = compileKernel(x)
	if f, ok := k.x.(*fallbackKernel); ok {
		f.k = vectorDatum
	}
}

func (k *timeKernel) kind() vectorKind { return vectorDatum }

// eval boxes the results into out.datums, one slab per batch.
func (k *timeKernel) eval(c *vectorContext, sel []int32, out *Vector) {
	k.micros.kind = vectorInt
	k.micros.resize(c.n)
	k.evalMicros(c, sel, &k.micros)
	ints, nulls := k.micros.ints, k.micros.nulls
	n := 0
	for _, i := range sel {
		if !nulls[i] && !c.failed(int(i)) {
			n++
		}
	}
	slab := make([]int64, n)
	typ := timestampTypeWord(k.tz)
	n = 0
	for _, i := range sel {
		switch {
		case c.failed(int(i)):
		case nulls[i]:
			out.datums[i], out.nulls[i] = nil, true
		default:
			slab[n] = ints[i]
			out.datums[i], out.nulls[i] = boxInt64(typ, &slab[n]), false
			n++
		}
	}
}

// timestampTypeWord is the type word of a types.Timestamp (or, tz, a
// types.TimestampTZ) in an interface: both are int64s, boxed as boxInt64
// boxes one.
func timestampTypeWord(tz bool) unsafe.Pointer {
	d := any(types.Timestamp(0))
	if tz {
		d = any(types.TimestampTZ(0))
	}
	return (*eface)(unsafe.Pointer(&d)).typ
}

// evalMicros computes the rows of sel into out (ints and nulls), failing
// rows in c.
func (k *timeKernel) evalMicros(c *vectorContext, sel []int32, out *Vector) {
	live := k.operand(c, sel, out)
	if k.bin {
		for _, i := range live {
			ts := out.ints[i]
			v, err := dateBin(k.stride, ts, k.origin, ts != math.MinInt64 && ts != math.MaxInt64, k.originFinite)
			if err != nil {
				c.fail(int(i), err)
				continue
			}
			out.ints[i] = v
		}
		return
	}
	if k.factor == nil {
		d := k.iv.Micros
		if k.neg {
			d = -d
		}
		for _, i := range live {
			if k.iv.Micros == math.MinInt64 || !k.addFast(out.ints[i], d, &out.ints[i]) {
				k.slow(c, i, out, k.iv)
			}
		}
		return
	}
	k.fbuf.kind = vectorInt
	k.fbuf.resize(c.n)
	k.factor.eval(c, live, &k.fbuf)
	m := k.iv.Micros
	for _, i := range live {
		switch {
		case c.failed(int(i)):
			continue
		case k.fbuf.nulls[i]:
			out.nulls[i] = true
			continue
		}
		f := k.fbuf.ints[i]
		// NB: intervalScale's exact integral path: |m| ≤ 2^53/|f|.
		if f != 0 && (m > (1<<53)/max(f, -f) || m < -(1<<53)/max(f, -f)) {
			k.slowScaled(c, i, out, f)
			continue
		}
		d := m * f
		if k.neg {
			d = -d
		}
		if !k.addFast(out.ints[i], d, &out.ints[i]) {
			k.slowScaled(c, i, out, f)
		}
	}
}

// operand evaluates the timestamp operand on sel into out and returns the
// rows where it is neither NULL (out NULL there) nor failed.
func (k *timeKernel) operand(c *vectorContext, sel []int32, out *Vector) []int32 {
	live := k.live[:0]
	if k.xt != nil {
		k.xt.evalMicros(c, sel, out)
		for _, i := range sel {
			if !out.nulls[i] && !c.failed(int(i)) {
				live = append(live, i)
			}
		}
		k.live = live
		return live
	}
	k.xbuf.kind = vectorDatum
	k.xbuf.resize(c.n)
	k.x.eval(c, sel, &k.xbuf)
	for _, i := range sel {
		if c.failed(int(i)) {
			continue
		}
		if k.xbuf.nulls[i] {
			out.nulls[i] = true
			continue
		}
		if k.tz {
			out.ints[i] = int64(k.xbuf.datums[i].(types.TimestampTZ))
		} else {
			out.ints[i] = int64(k.xbuf.datums[i].(types.Timestamp))
		}
		out.nulls[i] = false
		live = append(live, i)
	}
	k.live = live
	return live
}

// addFast stores ts + d in *r when ts is finite and the sum is a finite
// timestamp in range: what the ± function returns then, for an interval of
// d microseconds.
func (k *timeKernel) addFast(ts, d int64, r *int64) bool {
	if ts == math.MinInt64 || ts == math.MaxInt64 {
		return false
	}
	sum := ts + d
	if (d > 0 && sum < ts) || (d < 0 && sum > ts) || !types.TimestampInRange(sum) {
		return false
	}
	*r = sum
	return true
}

// slowScaled is slow for the interval times factor f, scaled by the *
// node's function.
func (k *timeKernel) slowScaled(c *vectorContext, i int32, out *Vector, f int64) {
	var iv types.Datum
	var err error
	if k.ivLeft {
		iv, err = k.mulFn(c.env, k.iv, float64(f))
	} else {
		iv, err = k.mulFn(c.env, float64(f), k.iv)
	}
	if err != nil {
		c.fail(int(i), err)
		return
	}
	k.slow(c, i, out, iv)
}

// slow computes row i's ts ± iv with the ± node's function.
func (k *timeKernel) slow(c *vectorContext, i int32, out *Vector, iv types.Datum) {
	var ts types.Datum = types.Timestamp(out.ints[i])
	if k.tz {
		ts = types.TimestampTZ(out.ints[i])
	}
	v, err := k.addFn(c.env, ts, iv)
	switch {
	case err != nil:
		c.fail(int(i), err)
	case v == nil:
		out.nulls[i] = true
	case k.tz:
		out.ints[i] = int64(v.(types.TimestampTZ))
	default:
		out.ints[i] = int64(v.(types.Timestamp))
	}
}
