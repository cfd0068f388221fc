package bind

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// rangeFunction binds a function in FROM: the set-returning functions
// generate_series, unnest, generate_subscripts, the jsonb expanders and
// information_schema._pg_expandarray, or any scalar function (one row).
// Arguments see the enclosing query levels and, as in PostgreSQL (a
// function in FROM is implicitly LATERAL), the FROM items to its left
// (left, nil when there are none). A call that references them becomes a
// ProjectSet over left (combined is set: the returned node and scope
// include left's columns first); otherwise it is a FuncScan the caller
// joins.
func (b *binder) rangeFunction(rf *pg_query.RangeFunction, outer *scope, left *lateralLeft) (node plan.Node, sc *scope, combined bool, err error) {
	const construct = "functions in FROM (set-returning functions)"
	if rf.IsRowsfrom || len(rf.Functions) != 1 || len(rf.Coldeflist) > 0 {
		return nil, nil, false, b.unsupported(-1, "ROWS FROM and column definition lists")
	}
	items := rf.Functions[0].GetList().GetItems()
	if len(items) == 0 || items[0].GetFuncCall() == nil {
		return nil, nil, false, b.unsupported(-1, construct)
	}
	fc := items[0].GetFuncCall()
	name := funcName(fc.Funcname)
	if name == "session" {
		node, sc, err := b.sessionFunction(rf, fc, outer)
		return node, sc, false, err
	}
	if name == "tumble" || name == "hop" {
		node, sc, err := b.timeWindowFunction(name, rf, fc, outer)
		return node, sc, false, err
	}
	table := name
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		table = name[i+1:]
	}
	ctx := exprCtx{clause: "functions in FROM"}
	// The arguments are evaluated one query level in: enclosing queries'
	// columns are outer references, the FROM items to the left plain
	// columns (both scopes have the enclosing query as parent, so outer
	// references have the same depth either way).
	argScope := &scope{parent: outer}
	if left != nil {
		argScope = left.sc
	}
	fs, err := b.srf(fc, name, argScope, ctx)
	if err != nil {
		return nil, nil, false, err
	}
	if fs == nil { // a scalar function: one row
		s, err := b.funcCall(fc, argScope, ctx)
		if err != nil {
			return nil, nil, false, err
		}
		fs = &plan.FuncScan{Args: []plan.Scalar{s}, Cols: []plan.Column{{Name: table, Type: s.Type(), Nullable: true}}}
	}
	if rf.Alias != nil {
		table = rf.Alias.Aliasname
		// A single-column function takes the table alias as its column
		// name (PostgreSQL's rule for scalar-returning functions) unless
		// it names its one OUT parameter.
		if len(fs.Cols) == 1 && len(rf.Alias.Colnames) == 0 && !namedOutParameter(fs.Name) {
			fs.Cols[0].Name = table
		}
	}
	if rf.Ordinality {
		fs.Ordinality = true
		fs.Cols = append(fs.Cols, plan.Column{Name: "ordinality", Type: types.TInt8})
	}
	if rf.Alias != nil {
		names := aliasNames(rf.Alias.Colnames)
		if len(names) > len(fs.Cols) {
			return nil, nil, false, b.semantic("42P10", fc.Location, "table \"%s\" has %d columns available but %d columns specified", table, len(fs.Cols), len(names))
		}
		for i, n := range names {
			fs.Cols[i].Name = n
		}
	}
	fsc := relationScope(table, fs.Cols, outer)
	if rf.Alias != nil && namedOutParameter(fs.Name) && !fs.Ordinality {
		// The alias alone is the whole row, which for a one-column
		// function is its value.
		c := fsc.cols[0]
		fsc.cols = append(fsc.cols, scopeCol{table: table, name: table, index: c.index, typ: c.typ, nullable: c.nullable, unqualifiedOnly: true})
	}
	if left == nil || !referencesRow(fs.Args) {
		return fs, fsc, false, nil
	}
	for _, a := range fs.Args {
		if plan.HasSubquery(a) {
			return nil, nil, false, b.unsupported(fc.Location, "subqueries in the arguments of a LATERAL function")
		}
	}
	for _, t := range fsc.tables {
		if left.sc.conflicts(t) {
			return nil, nil, false, b.semantic("42712", -1, "table name \"%s\" specified more than once", tableName(t))
		}
	}
	nLeft := len(left.node.Schema())
	ps := &plan.ProjectSet{Input: left.node, Funcs: []*plan.FuncScan{fs}, Cols: append(append([]plan.Column(nil), left.node.Schema()...), fs.Cols...)}
	sc = mergeScopes(left.sc, fsc, nLeft, false, left.kind == plan.LeftJoin)
	cond, err := left.bindOn(sc)
	if err != nil {
		return nil, nil, false, err
	}
	if left.kind == plan.LeftJoin {
		ps.Outer = true
		if !isTrue(cond) {
			ps.Cond = cond
		}
		return ps, sc, true, nil
	}
	if cond != nil && !isTrue(cond) {
		return &plan.Filter{Input: ps, Pred: cond}, sc, true, nil
	}
	return ps, sc, true, nil
}

// namedOutParameter reports the set-returning functions whose one result
// column is a named OUT parameter: the column keeps that name under a
// table alias.
func namedOutParameter(name string) bool {
	return name == "jsonb_array_elements" || name == "jsonb_array_elements_text"
}

// referencesRow reports whether any scalar reads a column of the current
// row (a ColRef, not an outer reference).
func referencesRow(ss []plan.Scalar) bool {
	for _, s := range ss {
		if len(plan.ColumnsUsed(s)) > 0 {
			return true
		}
	}
	return false
}

func isTrue(s plan.Scalar) bool {
	c, ok := s.(*plan.Const)
	return ok && c.Value == true
}

// isSetReturning reports the set-returning functions RockStream runs.
func isSetReturning(name string) bool {
	switch name {
	case "generate_series", "unnest", "generate_subscripts", "information_schema._pg_expandarray",
		"jsonb_array_elements", "jsonb_array_elements_text", "jsonb_each", "jsonb_each_text", "jsonb_object_keys":
		return true
	}
	return false
}

// srfCollector gathers the set-returning functions of one SELECT list; they
// become a ProjectSet over the FROM row, whose columns follow the FROM
// row's (base) in call order.
type srfCollector struct {
	base  int
	funcs []*plan.FuncScan
	width int
	// record is the last bare multi-column call bound (a record-valued
	// select-list column: its fields become hidden columns).
	record *recordTarget
}

// recordTarget is a record-valued select-list column: placeholder stands
// for it in the target list, and its fields are ProjectSet columns first..
type recordTarget struct {
	placeholder plan.Scalar
	target      int
	first       int
	fields      []plan.Column
}

// recordFieldName names the hidden column carrying field of the record
// column col; "?" keeps it out of `*` and of name lookup.
func recordFieldName(col, field string) string { return "?" + col + "." + field }

func (c *srfCollector) add(fs *plan.FuncScan) int {
	idx := c.base + c.width
	c.funcs = append(c.funcs, fs)
	c.width += len(fs.Cols)
	return idx
}

// selectListSRF binds a set-returning function call in an expression:
// allowed in an ad-hoc query's SELECT list, where it stands for its column
// of the ProjectSet (field selects one column of a multi-column result,
// as in `(information_schema._pg_expandarray(a)).n`).
func (b *binder) selectListSRF(fc *pg_query.FuncCall, name, field string, sc *scope, ctx exprCtx) (plan.Scalar, error) {
	if ctx.inAgg {
		return nil, b.semantic("0A000", fc.Location, "aggregate function calls cannot contain set-returning function calls")
	}
	if ctx.srfs == nil {
		return nil, b.semantic("0A000", fc.Location, "set-returning functions are not allowed in %s", ctx.clause)
	}
	if b.opts.ForView {
		return nil, b.unsupported(fc.Location, "set-returning functions in the SELECT list")
	}
	fs, err := b.srf(fc, name, sc, exprCtx{clause: "arguments of set-returning functions"})
	if err != nil {
		return nil, err
	}
	col := 0
	if field != "" {
		col = -1
		for i, c := range fs.Cols {
			if c.Name == field {
				col = i
			}
		}
		if col < 0 || len(fs.Cols) == 1 {
			return nil, b.semantic("42703", fc.Location, "could not identify column \"%s\" in record data type", field)
		}
	} else if len(fs.Cols) != 1 {
		// A record: NULL in the plan, its fields hidden columns that
		// `(col).field` in an enclosing query reads.
		idx := ctx.srfs.add(fs)
		ph := &plan.Const{Typ: types.Type{Kind: types.KindRecord, Typmod: -1}}
		ctx.srfs.record = &recordTarget{placeholder: ph, first: idx, fields: fs.Cols}
		return ph, nil
	}
	idx := ctx.srfs.add(fs)
	return &plan.ColRef{Index: idx + col, Typ: fs.Cols[col].Type, Name: name}, nil
}

// srfField binds `(srf(...)).field` and `(col).field` of a record column
// a subquery's set-returning function made; ok is false for other
// indirections.
func (b *binder) srfField(ind *pg_query.A_Indirection, sc *scope, ctx exprCtx) (plan.Scalar, bool, error) {
	if len(ind.Indirection) != 1 || ind.Indirection[0].GetString_() == nil {
		return nil, false, nil
	}
	field := ind.Indirection[0].GetString_().Sval
	if cr := ind.Arg.GetColumnRef(); cr != nil {
		s, err := b.columnRef(cr, sc)
		if err != nil {
			return nil, true, err
		}
		ref, ok := s.(*plan.ColRef)
		if !ok || ref.Type().Kind != types.KindRecord {
			return nil, false, nil
		}
		for _, c := range sc.cols {
			if c.table == ref.Qualifier && c.name == recordFieldName(ref.Name, field) {
				return &plan.ColRef{Index: c.index, Typ: c.typ, Name: field, Qualifier: c.table}, true, nil
			}
		}
		return nil, true, b.semantic("42703", cr.Location, "could not identify column \"%s\" in record data type", field)
	}
	fc := ind.Arg.GetFuncCall()
	if fc == nil {
		return nil, false, nil
	}
	name := funcName(fc.Funcname)
	if !isSetReturning(name) {
		return nil, false, nil
	}
	s, err := b.selectListSRF(fc, name, field, sc, ctx)
	return s, true, err
}

// srf binds a known set-returning function; nil for any other function.
func (b *binder) srf(fc *pg_query.FuncCall, name string, sc *scope, ctx exprCtx) (*plan.FuncScan, error) {
	if !isSetReturning(name) {
		return nil, nil
	}
	if fc.AggStar || fc.AggDistinct || len(fc.AggOrder) > 0 || fc.Over != nil {
		return nil, b.semantic("42809", fc.Location, "%s is not an aggregate function", name)
	}
	args := make([]plan.Scalar, len(fc.Args))
	for i, a := range fc.Args {
		s, err := b.expr(a, sc, ctx)
		if err != nil {
			return nil, err
		}
		args[i] = s
	}
	noFunc := func() error {
		ts := make([]string, len(args))
		for i, a := range args {
			ts[i] = a.Type().SQLName()
		}
		return errcode.New(errcode.SQLUndefinedFunction, "function %s(%s) does not exist", name, joinTypes(ts)).WithPosition(b.pos(fc.Location))
	}
	array := func(i int) (plan.Scalar, types.Type, error) {
		t := args[i].Type()
		if t.Kind != types.KindArray || t.Elem == nil {
			if t.Kind == types.KindUnknown {
				return nil, t, errcode.New(errcode.SQLDatatypeMismatch, "could not determine polymorphic type because input has type unknown").
					WithSQLState("42804").WithPosition(b.pos(fc.Location))
			}
			return nil, t, noFunc()
		}
		return args[i], *t.Elem, nil
	}
	col := func(n string, t types.Type) plan.Column { return plan.Column{Name: n, Type: t, Nullable: true} }
	fs := &plan.FuncScan{Name: name}
	switch name {
	case "generate_series":
		if len(args) != 2 && len(args) != 3 {
			return nil, noFunc()
		}
		ts := []types.Type{args[0].Type(), args[1].Type()}
		t, ok := commonType(ts)
		if !ok {
			return nil, noFunc()
		}
		switch {
		case t.Kind == types.KindUnknown:
			t = types.TInt4
		case t.Kind == types.KindInt2:
			t = types.TInt4
		}
		t = baseType(t)
		stepType := t
		switch t.Kind {
		case types.KindInt4, types.KindInt8, types.KindNumeric:
		case types.KindTimestamp, types.KindTimestampTZ:
			if len(args) != 3 {
				return nil, noFunc()
			}
			stepType = types.TInterval
		default:
			return nil, noFunc()
		}
		var err error
		for i := range args {
			want := t
			if i == 2 {
				want = stepType
			}
			if args[i], err = b.coerce(args[i], want, fc.Location); err != nil {
				return nil, err
			}
		}
		fs.Args, fs.Cols = args, []plan.Column{col(name, t)}
	case "unnest":
		if len(args) == 0 {
			return nil, noFunc()
		}
		for i := range args {
			a, et, err := array(i)
			if err != nil {
				return nil, err
			}
			fs.Args = append(fs.Args, a)
			fs.Cols = append(fs.Cols, col(name, et))
		}
	case "generate_subscripts":
		if len(args) != 2 && len(args) != 3 {
			return nil, noFunc()
		}
		a, _, err := array(0)
		if err != nil {
			return nil, err
		}
		dim, err := b.coerce(args[1], types.TInt4, fc.Location)
		if err != nil {
			return nil, err
		}
		fs.Args = []plan.Scalar{a, dim}
		if len(args) == 3 {
			rev, err := b.coerce(args[2], types.TBool, fc.Location)
			if err != nil {
				return nil, err
			}
			fs.Args = append(fs.Args, rev)
		}
		fs.Cols = []plan.Column{col(name, types.TInt4)}
	case "information_schema._pg_expandarray":
		if len(args) != 1 {
			return nil, noFunc()
		}
		a, et, err := array(0)
		if err != nil {
			return nil, err
		}
		fs.Args, fs.Cols = []plan.Scalar{a}, []plan.Column{col("x", et), col("n", types.TInt4)}
	case "jsonb_array_elements", "jsonb_array_elements_text", "jsonb_each", "jsonb_each_text", "jsonb_object_keys":
		if len(args) != 1 {
			return nil, noFunc()
		}
		t := args[0].Type()
		if t.Kind != types.KindJSONB && t.Kind != types.KindUnknown {
			return nil, noFunc()
		}
		a, err := b.coerce(args[0], types.TJSONB, fc.Location)
		if err != nil {
			return nil, err
		}
		fs.Args = []plan.Scalar{a}
		switch name {
		case "jsonb_array_elements":
			fs.Cols = []plan.Column{col("value", types.TJSONB)}
		case "jsonb_array_elements_text":
			fs.Cols = []plan.Column{col("value", types.TText)}
		case "jsonb_each":
			fs.Cols = []plan.Column{col("key", types.TText), col("value", types.TJSONB)}
		case "jsonb_each_text":
			fs.Cols = []plan.Column{col("key", types.TText), col("value", types.TText)}
		default:
			fs.Cols = []plan.Column{col("jsonb_object_keys", types.TText)}
		}
	}
	return fs, nil
}

func joinTypes(ts []string) string {
	out := ""
	for i, t := range ts {
		if i > 0 {
			out += ", "
		}
		out += t
	}
	return out
}
