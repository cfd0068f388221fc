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

func fmtType(v any) string { return fmt.Sprintf("%T", v) }

// funcName returns the unqualified, lower-case function name.
func funcName(names []*pg_query.Node) string {
	var parts []string
	for _, n := range names {
		parts = append(parts, n.GetString_().GetSval())
	}
	if len(parts) == 2 && parts[0] == "pg_catalog" {
		return parts[1]
	}
	return strings.Join(parts, ".")
}

// funcCall binds a function or aggregate call.
func (b *binder) funcCall(f *pg_query.FuncCall, sc *scope, ctx exprCtx) (plan.Scalar, error) {
	name := funcName(f.Funcname)
	if f.Over != nil {
		return b.windowCall(name, f, sc, ctx)
	}
	if f.AggWithinGroup {
		return b.withinGroup(name, f, sc, ctx)
	}
	if isOrderedSetAggregate(name) {
		// NB: PostgreSQL knows them only with WITHIN GROUP.
		var ts []types.Type
		for _, a := range f.Args {
			s, err := b.expr(a, sc, ctx)
			if err != nil {
				return nil, err
			}
			ts = append(ts, s.Type())
		}
		return nil, b.noFunctionTypes(name, ts, f.Location)
	}
	if isSetReturning(name) {
		return b.selectListSRF(f, name, "", sc, ctx)
	}
	if isUnsupportedAggregate(name) || !isAggregate(name) && pgBuiltinKind(name) == 'a' {
		return nil, b.unsupported(f.Location, "aggregate function "+name+"()")
	}
	if isAggregate(name) {
		return b.aggregate(name, f, sc, ctx)
	}
	if f.AggStar || f.AggDistinct || f.AggFilter != nil || len(f.AggOrder) > 0 {
		return nil, b.semantic("42809", f.Location, "%s is not an aggregate function", name)
	}
	argNodes := sequenceArgs(name, f.Args)
	args := make([]plan.Scalar, len(argNodes))
	for i, a := range argNodes {
		s, err := b.expr(a, sc, ctx)
		if err != nil {
			return nil, err
		}
		args[i] = s
	}
	switch name {
	case "nullif":
		if len(args) == 2 {
			eq, err := b.binaryOp("=", args[0], args[1], f.Location)
			if err != nil {
				return nil, err
			}
			l := eq.(*plan.Func).Args[0]
			return &plan.Case{Whens: []plan.When{{Cond: eq, Result: &plan.Const{Typ: l.Type()}}}, Else: l, Typ: l.Type()}, nil
		}
	case "greatest", "least", "coalesce":
		ts := make([]types.Type, len(args))
		for i, a := range args {
			ts[i] = a.Type()
		}
		t, err := b.common(ts, strings.ToUpper(name), f.Location)
		if err != nil {
			return nil, err
		}
		for i := range args {
			if args[i], err = b.coerce(args[i], t, f.Location); err != nil {
				return nil, err
			}
		}
		if name == "coalesce" {
			return &plan.Coalesce{Args: args, Typ: t}, nil
		}
		return &plan.Func{Name: name, Args: args, Typ: t}, nil
	}
	if isInternalFunc(name) {
		return nil, b.noFunction(name, args, f.Location)
	}
	if out, ok, err := b.arrayFunc(name, args, f.Location); ok || err != nil {
		return out, err
	}
	if out, ok, err := b.registryCall(name, args, f.Location); ok || err != nil {
		return out, err
	}
	sigs, known := scalarFuncs[name]
	if !known {
		if err := b.unsupportedBuiltin(name, f.Location); err != nil {
			return nil, err
		}
		return nil, b.noFunction(name, args, f.Location)
	}
	sig, ok := resolveOverload(sigs, args)
	if !ok {
		return nil, b.noFunction(name, args, f.Location)
	}
	out := &plan.Func{Name: name, Typ: sig.result, Volatile: sig.volatile || sig.stable || (sig.zoned && !b.opts.ForView)}
	for i, a := range args {
		want := sig.args[min(i, len(sig.args)-1)]
		c, err := b.coerce(a, want, f.Location)
		if err != nil {
			return nil, err
		}
		out.Args = append(out.Args, c)
	}
	if sig.sameAsArg && len(out.Args) > 0 {
		out.Typ = baseType(out.Args[0].Type())
	}
	if out.Volatile && b.opts.ForView {
		return nil, b.unsupported(f.Location, name+"() (its value changes over time)")
	}
	return out, nil
}

// charLengthMax is PostgreSQL's MaxAttrSize for char(n) and varchar(n)
// (10 MB): a cast to char(n) pads to n characters.
const charLengthMax = 10485760

func (b *binder) noFunction(name string, args []plan.Scalar, loc int32) error {
	ts := make([]types.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	return b.noFunctionTypes(name, ts, loc)
}

// noFunctionTypes is PostgreSQL's 42883 for name over argument types args.
func (b *binder) noFunctionTypes(name string, args []types.Type, loc int32) error {
	ts := make([]string, len(args))
	for i, a := range args {
		ts[i] = a.SQLName()
	}
	return errcode.New(errcode.SQLUndefinedFunction, "function %s(%s) does not exist", name, strings.Join(ts, ", ")).WithPosition(b.pos(loc))
}

// resolveOverload picks an overload PostgreSQL-style: arity must match and
// every argument must cast implicitly; prefer the most exact matches, then
// the candidates taking preferred types, then the first listed.
func resolveOverload(sigs []funcSig, args []plan.Scalar) (funcSig, bool) {
	best, bestExact, bestPref, found := funcSig{}, -1, -1, false
	for _, s := range sigs {
		if len(s.args) != len(args) && !(s.variadic && len(args) >= len(s.args)) {
			continue
		}
		exact, pref, ok := 0, 0, true
		for i, a := range args {
			want := s.args[min(i, len(s.args)-1)]
			at := a.Type()
			if at.Kind == want.Kind {
				exact++
				continue
			}
			if !implicitCastOK(at, want) {
				ok = false
				break
			}
			if want.Equal(preferred(categoryOf(want.Kind))) {
				pref++
			}
		}
		if !ok {
			continue
		}
		if exact > bestExact || exact == bestExact && pref > bestPref {
			best, bestExact, bestPref, found = s, exact, pref, true
		}
	}
	return best, found
}

// allowsAggOrder names the aggregates whose result follows an ORDER BY
// inside the call.
func allowsAggOrder(name string) bool {
	switch name {
	case "string_agg", "array_agg", "json_agg", "jsonb_agg", "json_object_agg", "jsonb_object_agg":
		return true
	}
	return false
}

// aggregate binds an aggregate call into ctx's collector.
func (b *binder) aggregate(name string, f *pg_query.FuncCall, sc *scope, ctx exprCtx) (plan.Scalar, error) {
	if ctx.aggs == nil {
		clause := ctx.clause
		if clause == "" {
			clause = "this context"
		}
		return nil, errcode.New(errcode.SQLGroupingError, "aggregate functions are not allowed in %s", clause).WithPosition(b.pos(f.Location))
	}
	if ctx.inAgg {
		return nil, errcode.New(errcode.SQLGroupingError, "aggregate function calls cannot be nested").WithPosition(b.pos(f.Location))
	}
	if len(f.AggOrder) > 0 && !allowsAggOrder(name) {
		return nil, b.unsupported(f.Location, "ORDER BY inside "+name+"()")
	}
	inner := ctx
	inner.inAgg = true
	call := plan.AggCall{Func: name, Distinct: f.AggDistinct}
	if name == "every" {
		call.Func = "bool_and"
	}
	if f.AggStar {
		if name != "count" {
			return nil, b.semantic("42809", f.Location, "%s(*) must be used with an aggregate that takes no arguments", name)
		}
	} else {
		for _, a := range f.Args {
			s, err := b.expr(a, sc, inner)
			if err != nil {
				return nil, err
			}
			call.Args = append(call.Args, s)
		}
		if name == "count" && len(call.Args) == 0 {
			return nil, b.noFunction(name, nil, f.Location)
		}
	}
	values := len(call.Args)
	ts := make([]types.Type, values)
	// written keeps the argument types as written (unknown literals
	// included) for PostgreSQL's "function ... does not exist" message.
	written := make([]types.Type, values)
	for i, a := range call.Args[:values] {
		t := a.Type()
		written[i] = t
		if t.Kind == types.KindUnknown {
			var err error
			if call.Args[i], err = b.coerce(a, types.TText, f.Location); err != nil {
				return nil, err
			}
			t = types.TText
		}
		ts[i] = t
	}
	if call.Func == "string_agg" && len(ts) == 2 && (ts[0].Kind == types.KindBytea || ts[1].Kind == types.KindBytea) {
		return nil, b.unsupported(f.Location, "string_agg(bytea, bytea)")
	}
	if allowsAggOrder(name) && name != "string_agg" && name != "array_agg" {
		for _, t := range ts {
			if t.Kind == types.KindRecord {
				return nil, b.unsupported(f.Location, name+"() of a row value")
			}
		}
	}
	res, ok := aggResult(call.Func, ts)
	if !ok {
		return nil, b.noFunctionTypes(name, written, f.Location)
	}
	if isFloatVariance(call.Func, ts) {
		return nil, b.unsupported(f.Location, fmt.Sprintf("aggregate function %s(%s) (variance and standard deviation of float arguments; cast the argument to numeric)", name, ts[0].SQLName()))
	}
	// Arguments are cast to the aggregate's input type where PostgreSQL
	// would (varchar → text for min/max/string_agg).
	for i, a := range call.Args[:values] {
		if a.Type().Kind.IsString() && a.Type().Kind != types.KindText && (call.Func == "min" || call.Func == "max" || call.Func == "string_agg") && a.Type().Kind != types.KindChar {
			call.Args[i] = &plan.Cast{Arg: a, Typ: types.TText}
		}
	}
	call.Typ = res
	// ORDER BY expressions follow the arguments (plan.AggCall.Order).
	for _, o := range f.AggOrder {
		sb := o.GetSortBy()
		if sb == nil || sb.UseOp != nil {
			return nil, b.unsupported(f.Location, "ORDER BY ... USING inside aggregate calls")
		}
		s, err := b.expr(sb.Node, sc, inner)
		if err != nil {
			return nil, err
		}
		if s.Type().Kind == types.KindUnknown {
			if s, err = b.coerce(s, types.TText, f.Location); err != nil {
				return nil, err
			}
		}
		if call.Distinct && !containsScalar(call.Args[:values], s) {
			return nil, b.semantic("42P10", sb.Location, "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list")
		}
		call.Args = append(call.Args, s)
		call.Order = append(call.Order, sortKey(0, sb))
	}
	return b.addAggCall(f, sc, ctx, call)
}

// addAggCall binds aggregate call f's FILTER into call and records call
// in ctx.aggs, or finds an equal call recorded before (computed once).
func (b *binder) addAggCall(f *pg_query.FuncCall, sc *scope, ctx exprCtx, call plan.AggCall) (*aggRef, error) {
	if f.AggFilter != nil {
		filt, err := b.expr(f.AggFilter, sc, exprCtx{clause: "FILTER"})
		if err != nil {
			return nil, err
		}
		if filt, err = b.coerceBool(filt, "FILTER", f.Location); err != nil {
			return nil, err
		}
		call.Filter = filt
	}
	for _, prev := range *ctx.aggs {
		if aggCallEqual(prev.call, call) {
			r := prev
			return &r, nil
		}
	}
	ref := &aggRef{index: len(*ctx.aggs), call: call}
	*ctx.aggs = append(*ctx.aggs, *ref)
	return ref, nil
}

// typeName resolves a pg_query TypeName to a types.Type, typmods included.
func (b *binder) typeName(tn *pg_query.TypeName) (types.Type, error) {
	return ResolveTypeName(tn, func(loc int32) int { return b.pos(loc) })
}

// ResolveTypeName maps a pg_query TypeName to a types.Type (varchar(n),
// char(n), numeric(p,s), timestamp(p), arrays). pos converts locations.
func ResolveTypeName(tn *pg_query.TypeName, pos func(int32) int) (types.Type, error) {
	name := funcName(tn.Names)
	if tn.Setof || tn.PctType {
		return types.Type{}, errcode.New(errcode.SQLFeatureNotSupported, "type modifiers SETOF/%%TYPE are not supported").WithPosition(pos(tn.Location))
	}
	var kind types.Kind
	switch name {
	case "bool", "boolean":
		kind = types.KindBool
	case "int2", "smallint":
		kind = types.KindInt2
	case "int4", "int", "integer":
		kind = types.KindInt4
	case "int8", "bigint":
		kind = types.KindInt8
	case "float4", "real":
		kind = types.KindFloat4
	case "float8", "double precision":
		kind = types.KindFloat8
	case "numeric", "decimal":
		kind = types.KindNumeric
	case "text":
		kind = types.KindText
	case "varchar":
		kind = types.KindVarchar
	case "bpchar", "char", "character":
		kind = types.KindChar
	case "name":
		kind = types.KindName
	case "bytea":
		kind = types.KindBytea
	case "date":
		kind = types.KindDate
	case "time":
		kind = types.KindTime
	case "timestamp":
		kind = types.KindTimestamp
	case "timestamptz":
		kind = types.KindTimestampTZ
	case "interval":
		kind = types.KindInterval
	case "uuid":
		kind = types.KindUUID
	case "json":
		kind = types.KindJSON
	case "jsonb":
		kind = types.KindJSONB
	case "oid":
		kind = types.KindOID
	case "regclass":
		kind = types.KindRegClass
	case "regtype":
		kind = types.KindRegType
	case "regproc":
		kind = types.KindRegProc
	case "regnamespace":
		kind = types.KindRegNamespace
	default:
		return types.Type{}, errcode.New(errcode.SQLSemanticError, "type \"%s\" does not exist", name).WithSQLState("42704").WithPosition(pos(tn.Location))
	}
	var mods []int64
	for _, m := range tn.Typmods {
		c := m.GetAConst()
		if c == nil || c.GetIval() == nil {
			return types.Type{}, errcode.New(errcode.SQLSemanticError, "type modifiers must be simple constants or identifiers").WithSQLState("22023").WithPosition(pos(tn.Location))
		}
		mods = append(mods, int64(c.GetIval().Ival))
	}
	t := types.Type{Kind: kind, Typmod: -1}
	bad := func() (types.Type, error) {
		return types.Type{}, errcode.New(errcode.SQLSemanticError, "invalid type modifier for type %s", name).WithSQLState("22023").WithPosition(pos(tn.Location))
	}
	switch kind {
	case types.KindVarchar, types.KindChar:
		switch len(mods) {
		case 0:
			if kind == types.KindChar {
				t.Typmod = 1 + 4 // char means char(1)
			}
		case 1:
			if name == "bpchar" {
				name = "char" // PostgreSQL's bpchartypmodin says char
			}
			if mods[0] < 1 {
				return types.Type{}, errcode.New(errcode.SQLSemanticError, "length for type %s must be at least 1", name).WithSQLState("22023").WithPosition(pos(tn.Location))
			}
			if mods[0] > charLengthMax {
				return types.Type{}, errcode.New(errcode.SQLSemanticError, "length for type %s cannot exceed %d", name, charLengthMax).WithSQLState("22023").WithPosition(pos(tn.Location))
			}
			t.Typmod = int32(mods[0]) + 4
		default:
			return bad()
		}
	case types.KindNumeric:
		switch len(mods) {
		case 0:
		case 1, 2:
			p, s := mods[0], int64(0)
			if len(mods) == 2 {
				s = mods[1]
			}
			if p < 1 || p > 1000 {
				return types.Type{}, errcode.New(errcode.SQLSemanticError, "NUMERIC precision %d must be between 1 and 1000", p).WithSQLState("22023").WithPosition(pos(tn.Location))
			}
			if s < -1000 || s > 1000 {
				return types.Type{}, errcode.New(errcode.SQLSemanticError, "NUMERIC scale %d must be between -1000 and 1000", s).WithSQLState("22023").WithPosition(pos(tn.Location))
			}
			t.Typmod = int32((p<<16)|(s&0xffff)) + 4
		default:
			return bad()
		}
	case types.KindTimestamp, types.KindTimestampTZ, types.KindTime:
		switch len(mods) {
		case 0:
		case 1:
			p := mods[0]
			if p < 0 {
				return bad()
			}
			if p > 6 {
				p = 6
			}
			t.Typmod = int32(p)
		default:
			return bad()
		}
	case types.KindInterval:
		// The grammar gives the field range mask, then the precision:
		// `interval '1' minute` → [2048], `interval(2)` → [0x7FFF, 2].
		if len(mods) > 0 {
			precision := int64(types.IntervalFullPrecision)
			if len(mods) == 2 {
				precision = mods[1]
			}
			tm, ok := types.IntervalTypmod(mods[0], precision)
			if !ok || len(mods) > 2 {
				return bad()
			}
			t.Typmod = tm
		}
	default:
		if len(mods) > 0 {
			return bad()
		}
	}
	if len(tn.ArrayBounds) > 0 {
		if len(tn.ArrayBounds) > 1 {
			return types.Type{}, errcode.New(errcode.SQLFeatureNotSupported, "multidimensional arrays are not supported").WithPosition(pos(tn.Location))
		}
		return types.ArrayOf(t), nil
	}
	return t, nil
}

// containsScalar reports whether list holds a scalar equal to s.
func containsScalar(list []plan.Scalar, s plan.Scalar) bool {
	for _, x := range list {
		if plan.Equal(x, s) {
			return true
		}
		// The binder casts varchar arguments to text (see aggregate).
		if c, ok := x.(*plan.Cast); ok && plan.Equal(c.Arg, s) {
			return true
		}
	}
	return false
}

func aggCallEqual(a, b plan.AggCall) bool {
	if a.Func != b.Func || a.Distinct != b.Distinct || len(a.Args) != len(b.Args) || !plan.Equal(a.Filter, b.Filter) {
		return false
	}
	if len(a.Order) != len(b.Order) {
		return false
	}
	for i := range a.Order {
		if a.Order[i] != b.Order[i] {
			return false
		}
	}
	for i := range a.Args {
		if !plan.Equal(a.Args[i], b.Args[i]) {
			return false
		}
	}
	return true
}

// registryCall resolves a function in the expression engine's registry;
// ok is false when the registry does not know the name.
func (b *binder) registryCall(name string, args []plan.Scalar, loc int32) (plan.Scalar, bool, error) {
	if len(expr.Overloads(name)) == 0 {
		return nil, false, nil
	}
	ats := make([]types.Type, len(args))
	for i, a := range args {
		ats[i] = a.Type()
	}
	fn, err := expr.LookupFunc(name, ats)
	if err != nil {
		if e, ok := errcode.As(err); ok {
			return nil, true, e.WithPosition(b.pos(loc))
		}
		return nil, true, err
	}
	// NB: in a materialized view, a function that is stable only through
	// the session's TimeZone (and the output format of values) is
	// deterministic: the view keeps its creator's zone.
	zonedInView := b.opts.ForView && fn.Volatility == expr.Stable && zonedFuncs[name]
	out := &plan.Func{Name: name, Volatile: fn.Volatility != expr.Immutable && !zonedInView}
	for i, a := range args {
		var p types.Type
		if len(fn.Args) > 0 {
			p = fn.Args[min(i, len(fn.Args)-1)]
		}
		switch {
		case p.Kind == types.KindInvalid || (p.Kind == types.KindArray && p.Elem == nil):
			if a.Type().Kind == types.KindUnknown {
				if a, err = b.coerce(a, types.TText, loc); err != nil {
					return nil, true, err
				}
			}
		default:
			if a, err = b.coerce(a, p, loc); err != nil {
				return nil, true, err
			}
		}
		out.Args = append(out.Args, a)
		ats[i] = a.Type()
	}
	out.Typ = fn.Result
	if fn.ResultOf != nil {
		out.Typ = fn.ResultOf(ats)
	}
	if out.Volatile && b.opts.ForView {
		if plan.NowName(name) && len(args) == 0 {
			// Accepted only in a temporal filter, which the compiler
			// checks once the plan is optimized (ivm/sql/temporal.go).
			return plan.Now(), true, nil
		}
		return nil, true, b.unsupported(loc, name+"() (its value changes over time)")
	}
	return out, true, nil
}

// zonedFuncs are the registry's functions that are stable only because
// they depend on the session's TimeZone (formatting or truncating a
// timestamptz, or turning values into text): a materialized view keeps
// the zone of the session that created it, so they are deterministic
// there.
//
//lint:immutable a constant table; never assigned after init.
var zonedFuncs = map[string]bool{
	"concat": true, "concat_ws": true, "array_to_string": true, "to_char": true,
	"date_trunc": true, "date_part": true, "extract": true,
	"to_jsonb": true, "jsonb_build_object": true, "jsonb_build_array": true,
	"to_json": true, "json_build_object": true, "json_build_array": true,
}
