package bind

import (
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// Window functions: f(...) OVER (PARTITION BY … ORDER BY … [frame]) in a
// SELECT list or ORDER BY. A call binds to a winRef placeholder (like an
// aggregate's aggRef) whose children are its arguments, partition and
// order expressions, so grouping lifts them; buildWindows then turns the
// placeholders into plan.Window nodes (one per distinct OVER clause) over
// the (grouped) FROM row and the placeholders into column references.

// winRef is a bound window-function call.
type winRef struct {
	fn        plan.WindowFunc
	partition []plan.Scalar
	order     []plan.Scalar
	keys      []plan.SortKey // Col unused: order[i] is the key
}

func (w *winRef) Type() types.Type { return w.fn.Typ }
func (w *winRef) String() string   { return w.fn.String() + " OVER (...)" }
func (w *winRef) Children() []plan.Scalar {
	out := append([]plan.Scalar(nil), w.fn.Args...)
	if w.fn.Filter != nil {
		out = append(out, w.fn.Filter)
	}
	out = append(out, w.partition...)
	return append(out, w.order...)
}
func (w *winRef) WithChildren(ch []plan.Scalar) plan.Scalar {
	x := *w
	n := len(w.fn.Args)
	x.fn.Args = append([]plan.Scalar(nil), ch[:n]...)
	if w.fn.Filter != nil {
		x.fn.Filter = ch[n]
		n++
	}
	x.partition = append([]plan.Scalar(nil), ch[n:n+len(w.partition)]...)
	n += len(w.partition)
	x.order = append([]plan.Scalar(nil), ch[n:]...)
	return &x
}

// PostgreSQL's FRAMEOPTION_* bits (nodes/parsenodes.h).
const (
	frameNonDefault        = 0x00001
	frameRange             = 0x00002
	frameRows              = 0x00004
	frameGroups            = 0x00008
	frameStartUnbPreceding = 0x00020
	frameEndUnbPreceding   = 0x00040
	frameStartUnbFollowing = 0x00080
	frameEndUnbFollowing   = 0x00100
	frameStartCurrentRow   = 0x00200
	frameEndCurrentRow     = 0x00400
	frameStartPreceding    = 0x00800
	frameEndPreceding      = 0x01000
	frameStartFollowing    = 0x02000
	frameEndFollowing      = 0x04000
	frameExclusion         = 0x08000 | 0x10000 | 0x20000
)

// windowCall binds f(...) OVER (...).
func (b *binder) windowCall(name string, f *pg_query.FuncCall, sc *scope, ctx exprCtx) (plan.Scalar, error) {
	if ctx.inAgg {
		return nil, errcode.New(errcode.SQLGroupingError, "aggregate function calls cannot contain window function calls").WithPosition(b.pos(f.Location))
	}
	if ctx.wins == nil {
		clause := ctx.clause
		if clause == "" {
			clause = "this context"
		}
		return nil, b.semantic("42P20", f.Location, "window functions are not allowed in %s", clause)
	}
	over := f.Over
	if over.Refname != "" || over.Name != "" {
		return nil, b.unsupported(f.Location, "named windows (WINDOW clauses)")
	}
	if f.AggWithinGroup && isOrderedSetAggregate(name) {
		return nil, b.semantic("0A000", f.Location, "OVER is not supported for ordered-set aggregate %s", name)
	}
	if len(f.AggOrder) > 0 || f.AggWithinGroup {
		return nil, b.unsupported(f.Location, "ORDER BY inside window function calls")
	}
	inner := ctx
	inner.wins = nil
	ref := &winRef{fn: plan.WindowFunc{Name: name}}
	agg := isAggregate(name)
	if f.AggDistinct {
		if agg {
			return nil, b.semantic("0A000", f.Location, "DISTINCT is not implemented for window functions")
		}
		return nil, b.semantic("42809", f.Location, "DISTINCT specified, but %s is not an aggregate function", name)
	}
	if f.AggFilter != nil && !agg {
		return nil, b.semantic("0A000", f.Location, "FILTER is not implemented for non-aggregate window functions")
	}
	if f.AggStar && name != "count" {
		return nil, b.semantic("42809", f.Location, "%s(*) must be used with an aggregate that takes no arguments", name)
	}
	var args []plan.Scalar
	for _, a := range f.Args {
		s, err := b.expr(a, sc, inner)
		if err != nil {
			return nil, err
		}
		args = append(args, s)
	}
	argTypes := func() []string {
		ts := make([]string, len(args))
		for i, a := range args {
			ts[i] = a.Type().SQLName()
		}
		return ts
	}
	noFunc := func() error {
		return errcode.New(errcode.SQLUndefinedFunction, "function %s(%s) does not exist", name, strings.Join(argTypes(), ", ")).WithPosition(b.pos(f.Location))
	}
	coerceArg := func(i int, t types.Type) error {
		var err error
		args[i], err = b.coerce(args[i], t, f.Location)
		return err
	}
	textIfUnknown := func(i int) error {
		if args[i].Type().Kind == types.KindUnknown {
			return coerceArg(i, types.TText)
		}
		return nil
	}
	switch {
	case agg:
		switch name {
		case "string_agg", "array_agg", "json_agg", "jsonb_agg", "json_object_agg", "jsonb_object_agg", "var_pop", "var_samp", "variance", "stddev_pop", "stddev_samp", "stddev":
			return nil, b.unsupported(f.Location, name+"() as a window function")
		case "every":
			ref.fn.Name = "bool_and"
		}
		ref.fn.Agg = true
		if f.AggStar {
			args = nil
		} else if len(args) == 0 {
			return nil, noFunc()
		}
		ts := make([]types.Type, len(args))
		for i := range args {
			if err := textIfUnknown(i); err != nil {
				return nil, err
			}
			ts[i] = args[i].Type()
		}
		res, ok := aggResult(ref.fn.Name, ts)
		if !ok {
			return nil, noFunc()
		}
		for i, a := range args {
			if a.Type().Kind.IsString() && a.Type().Kind != types.KindText && a.Type().Kind != types.KindChar && (name == "min" || name == "max") {
				args[i] = &plan.Cast{Arg: a, Typ: types.TText}
			}
		}
		ref.fn.Typ = res
		if f.AggFilter != nil {
			filt, err := b.expr(f.AggFilter, sc, exprCtx{clause: "FILTER"})
			if err != nil {
				return nil, err
			}
			if ref.fn.Filter, err = b.coerceBool(filt, "FILTER", f.Location); err != nil {
				return nil, err
			}
		}
	case name == "row_number" || name == "rank" || name == "dense_rank" || name == "percent_rank" || name == "cume_dist":
		if len(args) != 0 {
			return nil, noFunc()
		}
		ref.fn.Typ = types.TInt8
		if name == "percent_rank" || name == "cume_dist" {
			ref.fn.Typ = types.TFloat8
		}
	case name == "ntile":
		if len(args) != 1 {
			return nil, noFunc()
		}
		if err := coerceArg(0, types.TInt4); err != nil {
			return nil, err
		}
		ref.fn.Typ = types.TInt4
	case name == "lag" || name == "lead" || name == "first_value" || name == "last_value" || name == "nth_value":
		maxArgs := map[string]int{"lag": 3, "lead": 3, "first_value": 1, "last_value": 1, "nth_value": 2}[name]
		minArgs := map[string]int{"nth_value": 2}[name]
		if len(args) < max(1, minArgs) || len(args) > maxArgs {
			return nil, noFunc()
		}
		if len(args) > 1 {
			if err := coerceArg(1, types.TInt4); err != nil {
				return nil, err
			}
		}
		if len(args) == 3 {
			// lag/lead(anycompatible, integer, anycompatible).
			t, err := b.common([]types.Type{args[0].Type(), args[2].Type()}, strings.ToUpper(name), f.Location)
			if err != nil {
				return nil, err
			}
			if err := coerceArg(0, t); err != nil {
				return nil, err
			}
			if err := coerceArg(2, t); err != nil {
				return nil, err
			}
		}
		if err := textIfUnknown(0); err != nil {
			return nil, err
		}
		ref.fn.Typ = args[0].Type()
	default:
		if _, known := scalarFuncs[name]; known || isUnsupportedAggregate(name) {
			return nil, b.semantic("42809", f.Location, "OVER specified, but %s is not a window function nor an aggregate function", name)
		}
		return nil, b.unsupported(f.Location, "window function "+name+"()")
	}
	ref.fn.Args = args
	for _, p := range over.PartitionClause {
		s, err := b.expr(p, sc, inner)
		if err != nil {
			return nil, err
		}
		ref.partition = append(ref.partition, s)
	}
	for _, o := range over.OrderClause {
		sb := o.GetSortBy()
		if sb.UseOp != nil {
			return nil, b.unsupported(sb.Location, "ORDER BY ... USING")
		}
		s, err := b.expr(sb.Node, sc, inner)
		if err != nil {
			return nil, err
		}
		ref.order = append(ref.order, s)
		ref.keys = append(ref.keys, sortKey(0, sb))
	}
	frame, err := b.windowFrame(over, ref.order, f.Location)
	if err != nil {
		return nil, err
	}
	switch name {
	case "first_value", "last_value", "nth_value":
		ref.fn.Frame = frame
	default:
		if agg {
			ref.fn.Frame = frame
		}
	}
	*ctx.wins = append(*ctx.wins, ref)
	return ref, nil
}

// windowFrame binds the frame clause of over.
func (b *binder) windowFrame(over *pg_query.WindowDef, order []plan.Scalar, loc int32) (plan.WindowFrame, error) {
	opts := over.FrameOptions
	ordered := len(order) > 0
	if opts&frameNonDefault == 0 {
		return plan.WindowFrame{}, nil
	}
	if opts&frameExclusion != 0 {
		return plan.WindowFrame{}, b.unsupported(loc, "window frame EXCLUDE clauses")
	}
	var fr plan.WindowFrame
	switch {
	case opts&frameRows != 0:
		fr.Mode = "ROWS"
	case opts&frameGroups != 0:
		fr.Mode = "GROUPS"
		if !ordered {
			return fr, b.semantic("42P20", loc, "GROUPS mode requires an ORDER BY clause")
		}
	default:
		fr.Mode = "RANGE"
	}
	bound := func(unbPre, unbFol, cur, pre, fol int32, off *pg_query.Node, which string) (plan.FrameBound, error) {
		switch {
		case opts&unbPre != 0:
			return plan.FrameBound{Kind: "UNBOUNDED PRECEDING"}, nil
		case opts&unbFol != 0:
			return plan.FrameBound{Kind: "UNBOUNDED FOLLOWING"}, nil
		case opts&cur != 0:
			return plan.FrameBound{Kind: "CURRENT ROW"}, nil
		}
		kind := "PRECEDING"
		if opts&fol != 0 {
			kind = "FOLLOWING"
		}
		s, err := b.expr(off, &scope{}, exprCtx{clause: "window frame"})
		if err != nil {
			return plan.FrameBound{}, err
		}
		if fr.Mode == "RANGE" {
			return b.rangeOffset(s, order, kind, which, loc)
		}
		if s, err = b.coerce(s, types.TInt8, loc); err != nil {
			return plan.FrameBound{}, err
		}
		c, ok := s.(*plan.Const)
		if !ok {
			return plan.FrameBound{}, b.unsupported(loc, "non-constant window frame offsets")
		}
		if c.Value == nil {
			return plan.FrameBound{}, b.semantic("22004", loc, "frame %s offset must not be null", which)
		}
		n := c.Value.(int64)
		if n < 0 {
			return plan.FrameBound{}, b.semantic("22013", loc, "frame %s offset must not be negative", which)
		}
		return plan.FrameBound{Kind: kind, Offset: n}, nil
	}
	var err error
	if fr.Start, err = bound(frameStartUnbPreceding, frameStartUnbFollowing, frameStartCurrentRow, frameStartPreceding, frameStartFollowing, over.StartOffset, "starting"); err != nil {
		return fr, err
	}
	fr.End = plan.FrameBound{Kind: "CURRENT ROW"}
	if opts&(frameEndUnbPreceding|frameEndUnbFollowing|frameEndCurrentRow|frameEndPreceding|frameEndFollowing) != 0 {
		if fr.End, err = bound(frameEndUnbPreceding, frameEndUnbFollowing, frameEndCurrentRow, frameEndPreceding, frameEndFollowing, over.EndOffset, "ending"); err != nil {
			return fr, err
		}
	}
	return fr, nil
}

// rangeOffset binds a RANGE frame's offset s: one ORDER BY column whose
// type has an in_range pairing, an offset coercible to its offset type
// (PostgreSQL's transformFrameOffset), constant, not NULL, not negative.
func (b *binder) rangeOffset(s plan.Scalar, order []plan.Scalar, kind, which string, loc int32) (plan.FrameBound, error) {
	if len(order) != 1 {
		return plan.FrameBound{}, b.semantic("42P20", loc, "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column")
	}
	ct := order[0].Type()
	ot, ok := expr.RangeOffsetType(ct)
	if !ok {
		return plan.FrameBound{}, b.semantic("0A000", loc, "RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s", ct.SQLName())
	}
	st := s.Type()
	if !implicitCastOK(st, ot) || (ot.Kind == types.KindInt8 && !st.Kind.IsInteger() && st.Kind != types.KindUnknown) {
		return plan.FrameBound{}, b.semantic("0A000", loc, "RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s and offset type %s", ct.SQLName(), st.SQLName())
	}
	s, err := b.coerce(s, ot, loc)
	if err != nil {
		return plan.FrameBound{}, err
	}
	c, ok := s.(*plan.Const)
	if !ok {
		return plan.FrameBound{}, b.unsupported(loc, "non-constant window frame offsets")
	}
	if c.Value == nil {
		return plan.FrameBound{}, b.semantic("22004", loc, "frame %s offset must not be null", which)
	}
	if err := expr.CheckRangeOffset(ct, c.Value); err != nil {
		return plan.FrameBound{}, err
	}
	return plan.FrameBound{Kind: kind, Value: c.Value, ValueType: ot}, nil
}

// buildWindows plans the window calls found in *exprs (bound over node's
// row) as Window nodes over node, and rewrites each call into a reference
// to its output column. Calls with the same PARTITION BY and ORDER BY share
// one Window node.
func (b *binder) buildWindows(node plan.Node, exprs []*plan.Scalar) (plan.Node, error) {
	var refs []*winRef
	for _, e := range exprs {
		plan.Walk(*e, func(s plan.Scalar) bool {
			if w, ok := s.(*winRef); ok {
				refs = append(refs, w)
				return false
			}
			return true
		})
	}
	if len(refs) == 0 {
		return node, nil
	}
	inCols := node.Schema()
	pre := plan.ColumnRefs(inCols)
	preCols := append([]plan.Column(nil), inCols...)
	column := func(s plan.Scalar, what string) (int, error) {
		if plan.HasSubquery(s) {
			return 0, b.unsupported(-1, "subqueries in window "+what)
		}
		if c, ok := s.(*plan.ColRef); ok {
			return c.Index, nil
		}
		for i := len(inCols); i < len(pre); i++ {
			if plan.Equal(pre[i], s) {
				return i, nil
			}
		}
		pre = append(pre, s)
		preCols = append(preCols, plan.Column{Name: fmt.Sprintf("window_%s%d", what, len(pre)), Type: s.Type(), Nullable: true})
		return len(pre) - 1, nil
	}
	type group struct {
		key   string
		part  []int
		order []plan.SortKey
		refs  []*winRef
	}
	var groups []*group
	for _, w := range refs {
		for _, a := range w.fn.Args {
			if plan.HasSubquery(a) {
				return nil, b.unsupported(-1, "subqueries in window function arguments")
			}
		}
		g := &group{}
		for _, p := range w.partition {
			c, err := column(p, "partition")
			if err != nil {
				return nil, err
			}
			g.part = append(g.part, c)
		}
		for i, o := range w.order {
			c, err := column(o, "order")
			if err != nil {
				return nil, err
			}
			k := w.keys[i]
			k.Col = c
			g.order = append(g.order, k)
		}
		g.key = fmt.Sprint(g.part, g.order)
		found := false
		for _, h := range groups {
			if h.key == g.key {
				h.refs = append(h.refs, w)
				found = true
				break
			}
		}
		if !found {
			g.refs = []*winRef{w}
			groups = append(groups, g)
		}
	}
	var cur plan.Node = node
	if len(pre) > len(inCols) {
		cur = &plan.Project{Input: node, Exprs: pre, Cols: preCols}
	}
	cols := map[*winRef]*plan.ColRef{}
	for _, g := range groups {
		win := &plan.Window{Input: cur, PartitionBy: g.part, Order: g.order, Limit: -1}
		base := len(cur.Schema())
		for _, w := range g.refs {
			name := w.fn.Name
			cols[w] = &plan.ColRef{Index: base + len(win.Funcs), Typ: w.fn.Typ, Name: name}
			win.Funcs = append(win.Funcs, w.fn)
			win.Cols = append(win.Cols, plan.Column{Name: name, Type: w.fn.Typ, Nullable: true})
		}
		cur = win
	}
	for _, e := range exprs {
		*e = plan.Rewrite(*e, func(s plan.Scalar) plan.Scalar {
			if w, ok := s.(*winRef); ok {
				return cols[w]
			}
			return s
		})
	}
	return cur, nil
}
