package bind

import (
	"fmt"
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// selectStmt binds a SELECT, VALUES or set operation. outer is the scope
// of the enclosing query for correlated subqueries (nil at top level).
func (b *binder) selectStmt(sel *pg_query.SelectStmt, outer *scope) (*BoundQuery, error) {
	if sel.WithClause != nil {
		ctes := map[string]*cteDef{}
		b.ctes = append(b.ctes, ctes)
		defer func() { b.ctes = b.ctes[:len(b.ctes)-1] }()
		for _, n := range sel.WithClause.Ctes {
			cte := n.GetCommonTableExpr()
			inner := cte.Ctequery.GetSelectStmt()
			if inner == nil {
				return nil, b.unsupported(cte.Location, "data-modifying statements in WITH")
			}
			if sel.WithClause.Recursive {
				done, err := b.recursiveCTE(cte, inner, ctes, outer)
				if err != nil {
					return nil, err
				}
				if done {
					continue
				}
			}
			q, err := b.selectStmt(inner, outer)
			if err != nil {
				return nil, err
			}
			node, cols, err := b.finishSubquery(q, aliasNames(cte.Aliascolnames), cte.Ctename, cte.Location)
			if err != nil {
				return nil, err
			}
			if _, dup := ctes[cte.Ctename]; dup {
				return nil, b.semantic("42712", cte.Location, "WITH query name \"%s\" specified more than once", cte.Ctename)
			}
			ctes[cte.Ctename] = &cteDef{node: node, columns: cols, origins: q.Origins}
		}
	}
	if len(sel.LockingClause) > 0 {
		return nil, b.unsupported(-1, "FOR UPDATE/SHARE")
	}
	if sel.IntoClause != nil {
		return nil, b.unsupported(-1, "SELECT INTO")
	}
	var q *BoundQuery
	var err error
	switch {
	case sel.Op != pg_query.SetOperation_SETOP_NONE:
		q, err = b.setOp(sel, outer)
	case len(sel.ValuesLists) > 0:
		q, err = b.values(sel, outer)
	default:
		q, err = b.simpleSelect(sel, outer)
	}
	if err != nil {
		return nil, err
	}
	// ORDER BY for VALUES / set operations binds against the output.
	if sel.Op != pg_query.SetOperation_SETOP_NONE || len(sel.ValuesLists) > 0 {
		if len(sel.SortClause) > 0 {
			sc := outputScope(q.Columns, outer)
			for _, sn := range sel.SortClause {
				sb := sn.GetSortBy()
				idx, err := b.outputColumnRef(sb.Node, q.Columns, sc)
				if err != nil {
					return nil, err
				}
				q.Order = append(q.Order, sortKey(idx, sb))
			}
		}
	}
	if err := b.limit(sel, q); err != nil {
		return nil, err
	}
	return q, nil
}

// outputScope makes a scope of a query's output columns.
func outputScope(cols []plan.Column, parent *scope) *scope {
	sc := &scope{parent: parent}
	for i, c := range cols {
		sc.cols = append(sc.cols, scopeCol{name: c.Name, index: i, typ: c.Type, nullable: c.Nullable})
		sc.star = append(sc.star, i)
	}
	return sc
}

// outputColumnRef resolves an ORDER BY item of a set operation: an output
// column name or ordinal.
func (b *binder) outputColumnRef(n *pg_query.Node, cols []plan.Column, sc *scope) (int, error) {
	if c := n.GetAConst(); c != nil && c.GetIval() != nil {
		i := int(c.GetIval().Ival)
		if i < 1 || i > len(cols) {
			return 0, b.semantic("42P10", c.Location, "ORDER BY position %d is not in select list", i)
		}
		return i - 1, nil
	}
	s, err := b.expr(n, sc, exprCtx{clause: "ORDER BY"})
	if err != nil {
		return 0, err
	}
	if c, ok := s.(*plan.ColRef); ok {
		return c.Index, nil
	}
	return 0, b.unsupported(-1, "ORDER BY expressions on UNION/INTERSECT/EXCEPT/VALUES results (use an output column)")
}

func sortKey(col int, sb *pg_query.SortBy) plan.SortKey {
	k := plan.SortKey{Col: col, Desc: sb.SortbyDir == pg_query.SortByDir_SORTBY_DESC}
	switch sb.SortbyNulls {
	case pg_query.SortByNulls_SORTBY_NULLS_FIRST:
		k.NullsFirst = true
	case pg_query.SortByNulls_SORTBY_NULLS_LAST:
		k.NullsFirst = false
	default:
		k.NullsFirst = k.Desc
	}
	return k
}

// limit binds LIMIT/OFFSET constants (or parameters are rejected).
func (b *binder) limit(sel *pg_query.SelectStmt, q *BoundQuery) error {
	q.Limit, q.Offset = -1, 0
	if sel.LimitOption == pg_query.LimitOption_LIMIT_OPTION_WITH_TIES {
		return b.unsupported(-1, "FETCH ... WITH TIES")
	}
	paramN := 0
	get := func(n *pg_query.Node, what string) (int64, bool, error) {
		paramN = 0
		if n == nil {
			return 0, false, nil
		}
		s, err := b.expr(n, nil, exprCtx{clause: what})
		if err != nil {
			return 0, false, err
		}
		if p, ok := s.(*plan.Param); ok {
			if _, err := b.coerce(p, types.TInt8, -1); err != nil {
				return 0, false, err
			}
			paramN = p.Index + 1
			return 0, false, nil
		}
		if s, err = b.coerce(s, types.TInt8, -1); err != nil {
			return 0, false, err
		}
		c, ok := s.(*plan.Const)
		if !ok {
			return 0, false, b.unsupported(-1, "non-constant "+what)
		}
		if c.Value == nil {
			return 0, false, nil // LIMIT NULL / LIMIT ALL
		}
		v, ok := c.Value.(int64)
		if !ok {
			return 0, false, errcode.New(errcode.SQLDatatypeMismatch, "argument of %s must be type bigint, not type %s", what, c.Typ.SQLName())
		}
		if v < 0 {
			state := "2201W"
			if what == "OFFSET" {
				state = "2201X"
			}
			return 0, false, b.semantic(state, -1, "%s must not be negative", what)
		}
		return v, true, nil
	}
	if v, ok, err := get(sel.LimitCount, "LIMIT"); err != nil {
		return err
	} else if ok {
		q.Limit = v
	}
	q.LimitParam = paramN
	if v, ok, err := get(sel.LimitOffset, "OFFSET"); err != nil {
		return err
	} else if ok {
		q.Offset = v
	}
	q.OffsetParam = paramN
	return nil
}

// finishSubquery turns a bound subquery (FROM, CTE, view) into a node with
// exactly its visible columns, ORDER BY ... LIMIT becoming a TopK; column
// aliases rename the output.
func (b *binder) finishSubquery(q *BoundQuery, aliases []string, name string, loc int32) (plan.Node, []plan.Column, error) {
	if q.LimitParam != 0 || q.OffsetParam != 0 {
		return nil, nil, b.unsupported(loc, "LIMIT/OFFSET parameters in subqueries")
	}
	node := q.Plan
	if q.Limit >= 0 || q.Offset > 0 {
		node = &plan.TopK{Input: node, Order: q.Order, Limit: q.Limit, Offset: q.Offset}
	}
	cols := append([]plan.Column(nil), q.Columns...)
	nVisible := len(cols)
	if len(aliases) > len(cols) {
		return nil, nil, b.semantic("42P10", loc, "table \"%s\" has %d columns available but %d columns specified", name, len(cols), len(aliases))
	}
	for i, a := range aliases {
		cols[i].Name = a
	}
	// Hidden fields of record columns stay reachable as (col).field.
	cols = append(cols, node.Schema()[nVisible:nVisible+q.RecordHidden]...)
	if len(node.Schema()) != len(cols) || len(aliases) > 0 {
		node = &plan.Project{Input: node, Exprs: plan.ColumnRefs(node.Schema())[:len(cols)], Cols: cols}
	}
	return node, cols, nil
}

func aliasNames(nodes []*pg_query.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.GetString_().GetSval()
	}
	return out
}

// values binds VALUES (...), (...).
func (b *binder) values(sel *pg_query.SelectStmt, outer *scope) (*BoundQuery, error) {
	var rows [][]plan.Scalar
	width := -1
	for _, l := range sel.ValuesLists {
		items := l.GetList().GetItems()
		if width >= 0 && len(items) != width {
			return nil, b.semantic("42601", -1, "VALUES lists must all be the same length")
		}
		width = len(items)
		row := make([]plan.Scalar, len(items))
		for i, it := range items {
			s, err := b.expr(it, outer, exprCtx{clause: "VALUES"})
			if err != nil {
				return nil, err
			}
			if plan.HasSubquery(s) {
				return nil, b.unsupported(-1, "subqueries in VALUES")
			}
			row[i] = s
		}
		rows = append(rows, row)
	}
	cols := make([]plan.Column, width)
	for c := 0; c < width; c++ {
		ts := make([]types.Type, len(rows))
		for r := range rows {
			ts[r] = rows[r][c].Type()
		}
		t, err := b.common(ts, "VALUES", -1)
		if err != nil {
			return nil, err
		}
		nullable := false
		for r := range rows {
			if rows[r][c], err = b.coerce(rows[r][c], t, -1); err != nil {
				return nil, err
			}
			if k, ok := rows[r][c].(*plan.Const); !ok || k.Value == nil {
				nullable = true
			}
		}
		cols[c] = plan.Column{Name: fmt.Sprintf("column%d", c+1), Type: t, Nullable: nullable}
	}
	return &BoundQuery{Plan: &plan.Values{Rows: rows, Cols: cols}, Columns: cols, Limit: -1}, nil
}

// setOp binds UNION/INTERSECT/EXCEPT [ALL].
func (b *binder) setOp(sel *pg_query.SelectStmt, outer *scope) (*BoundQuery, error) {
	l, err := b.selectStmt(sel.Larg, outer)
	if err != nil {
		return nil, err
	}
	r, err := b.selectStmt(sel.Rarg, outer)
	if err != nil {
		return nil, err
	}
	var kind plan.SetOpKind
	var name string
	switch sel.Op {
	case pg_query.SetOperation_SETOP_UNION:
		kind, name = plan.Union, "UNION"
	case pg_query.SetOperation_SETOP_INTERSECT:
		kind, name = plan.Intersect, "INTERSECT"
	default:
		kind, name = plan.Except, "EXCEPT"
	}
	ln, lcols, err := b.finishSubquery(l, nil, name, -1)
	if err != nil {
		return nil, err
	}
	rn, rcols, err := b.finishSubquery(r, nil, name, -1)
	if err != nil {
		return nil, err
	}
	if len(lcols) != len(rcols) {
		return nil, b.semantic("42601", -1, "each %s query must have the same number of columns", name)
	}
	cols := make([]plan.Column, len(lcols))
	lexprs, rexprs := plan.ColumnRefs(lcols), plan.ColumnRefs(rcols)
	castL, castR := false, false
	for i := range lcols {
		t, err := b.common([]types.Type{lcols[i].Type, rcols[i].Type}, name, -1)
		if err != nil {
			return nil, err
		}
		cols[i] = plan.Column{Name: lcols[i].Name, Type: t, Nullable: lcols[i].Nullable || rcols[i].Nullable}
		if !lcols[i].Type.Equal(t) {
			if lexprs[i], err = b.coerce(lexprs[i], t, -1); err != nil {
				return nil, err
			}
			castL = true
		}
		if !rcols[i].Type.Equal(t) {
			if rexprs[i], err = b.coerce(rexprs[i], t, -1); err != nil {
				return nil, err
			}
			castR = true
		}
	}
	if castL {
		ln = &plan.Project{Input: ln, Exprs: lexprs, Cols: cols}
	}
	if castR {
		rn = &plan.Project{Input: rn, Exprs: rexprs, Cols: cols}
	}
	node := &plan.SetOp{Kind: kind, All: sel.All, Left: ln, Right: rn, Cols: cols}
	return &BoundQuery{Plan: node, Columns: cols, Limit: -1}, nil
}

// simpleSelect binds SELECT ... FROM ... WHERE ... GROUP BY ... HAVING ...
// ORDER BY.
func (b *binder) simpleSelect(sel *pg_query.SelectStmt, outer *scope) (*BoundQuery, error) {
	if len(sel.WindowClause) > 0 {
		return nil, b.unsupported(-1, "WINDOW clauses")
	}
	// FROM
	var node plan.Node
	var sc *scope
	var err error
	if len(sel.FromClause) == 0 {
		node = &plan.Values{Rows: [][]plan.Scalar{{}}}
		sc = &scope{parent: outer}
	} else {
		for _, item := range sel.FromClause {
			var left *lateralLeft
			if node != nil {
				left = &lateralLeft{node: node, sc: sc, kind: plan.InnerJoin}
			}
			n, s, combined, err := b.fromItemLateral(item, outer, left)
			if err != nil {
				return nil, err
			}
			if node == nil || combined {
				node, sc = n, s
				continue
			}
			for _, t := range s.tables {
				if sc.conflicts(t) {
					return nil, b.semantic("42712", -1, "table name \"%s\" specified more than once", tableName(t))
				}
			}
			node, sc = crossJoin(node, sc, n, s)
		}
	}
	// WHERE
	if sel.WhereClause != nil {
		pred, err := b.expr(sel.WhereClause, sc, exprCtx{clause: "WHERE"})
		if err != nil {
			return nil, err
		}
		if pred, err = b.coerceBool(pred, "WHERE", -1); err != nil {
			return nil, err
		}
		node = &plan.Filter{Input: node, Pred: pred}
	}
	// Target list (bound over the FROM row; aggregates collected).
	var aggs []aggRef
	var wins []*winRef
	srfs := &srfCollector{base: len(node.Schema())}
	var records []*recordTarget
	var groupings []*groupingRef
	actx := exprCtx{clause: "SELECT", aggs: &aggs, wins: &wins, srfs: srfs, groupings: &groupings}
	var targets []plan.Scalar
	var names []string
	for _, t := range sel.TargetList {
		rt := t.GetResTarget()
		if cr := rt.Val.GetColumnRef(); cr != nil && isStar(cr) {
			exprs, cols, err := b.expandStar(cr, sc)
			if err != nil {
				return nil, err
			}
			targets = append(targets, exprs...)
			names = append(names, cols...)
			continue
		}
		s, err := b.expr(rt.Val, sc, actx)
		if err != nil {
			return nil, err
		}
		name := rt.Name
		if name == "" {
			name = columnName(rt.Val)
		}
		if _, isParam := s.(*plan.Param); !isParam && s.Type().Kind == types.KindUnknown {
			// An untyped literal in the select list resolves to text.
			if s, err = b.coerce(s, types.TText, rt.Location); err != nil {
				return nil, err
			}
		}
		if r := srfs.record; r != nil {
			srfs.record = nil
			if r.placeholder != s {
				return nil, b.unsupported(rt.Location, "record-valued set-returning functions inside expressions")
			}
			r.target = len(targets)
			records = append(records, r)
		}
		targets = append(targets, s)
		names = append(names, name)
	}
	if len(srfs.funcs) > 0 {
		if len(aggs) > 0 || len(wins) > 0 || len(groupings) > 0 || len(sel.GroupClause) > 0 || sel.HavingClause != nil {
			return nil, b.unsupported(-1, "set-returning functions in the SELECT list of a grouped or windowed query")
		}
		cols := append([]plan.Column(nil), node.Schema()...)
		for _, f := range srfs.funcs {
			cols = append(cols, f.Cols...)
		}
		node = &plan.ProjectSet{Input: node, Funcs: srfs.funcs, Cols: cols}
	}
	origins := make([]Origin, len(targets))
	for i, t := range targets {
		if cr, ok := t.(*plan.ColRef); ok {
			origins[i] = sc.originOf(cr.Index)
		}
	}
	// GROUP BY (sets: the grouping sets, nil for a plain GROUP BY)
	groupExprs, sets, err := b.groupBy(sel, sc, targets, names)
	if err != nil {
		return nil, err
	}
	var having plan.Scalar
	if sel.HavingClause != nil {
		h, err := b.expr(sel.HavingClause, sc, exprCtx{clause: "HAVING", aggs: &aggs, groupings: &groupings})
		if err != nil {
			return nil, err
		}
		if having, err = b.coerceBool(h, "HAVING", -1); err != nil {
			return nil, err
		}
	}
	// ORDER BY: output names/ordinals first, else expressions over FROM.
	type orderItem struct {
		target int // index into targets, or -1
		expr   plan.Scalar
		sb     *pg_query.SortBy
	}
	var order []orderItem
	for _, sn := range sel.SortClause {
		sb := sn.GetSortBy()
		if sb.UseOp != nil {
			return nil, b.unsupported(sb.Location, "ORDER BY ... USING")
		}
		if idx, ok, err := b.orderByOutput(sb.Node, names, targets); err != nil {
			return nil, err
		} else if ok {
			order = append(order, orderItem{target: idx, sb: sb})
			continue
		}
		s, err := b.expr(sb.Node, sc, exprCtx{clause: "ORDER BY", aggs: &aggs, wins: &wins, groupings: &groupings})
		if err != nil {
			return nil, err
		}
		order = append(order, orderItem{target: -1, expr: s, sb: sb})
	}
	grouped := len(aggs) > 0 || len(groupings) > 0 || len(sel.GroupClause) > 0 || having != nil
	if grouped {
		var needed []*plan.ColRef
		collect := func(x plan.Scalar) { ungroupedColumns(x, groupExprs, &needed) }
		for _, t := range targets {
			collect(t)
		}
		if having != nil {
			collect(having)
		}
		for _, o := range order {
			if o.expr != nil {
				collect(o.expr)
			}
		}
		if sets == nil {
			groupExprs = functionallyDependent(sc, groupExprs, needed)
		} else {
			// A column is dependent when a primary key is in every set
			// (PostgreSQL checks against the expressions common to all
			// sets); it joins every set.
			var common []plan.Scalar
			for i, e := range groupExprs {
				inAll := true
				for _, set := range sets {
					inAll = inAll && slices.Contains(set, i)
				}
				if inAll {
					common = append(common, e)
				}
			}
			for _, dep := range functionallyDependent(sc, common, needed)[len(common):] {
				for k := range sets {
					sets[k] = append(sets[k], len(groupExprs))
				}
				groupExprs = append(groupExprs, dep)
			}
		}
		if err := bindGroupings(groupings, groupExprs, sets, len(aggs)); err != nil {
			return nil, err
		}
		node, err = b.buildAggregate(node, groupExprs, aggs)
		if err != nil {
			return nil, err
		}
		if sets != nil {
			node = buildGroupingSets(node.(*plan.Aggregate), groupExprs, sets, groupings)
		}
		lift := func(s plan.Scalar) (plan.Scalar, error) { return b.liftGrouped(s, groupExprs, len(groupExprs)) }
		for i := range targets {
			if targets[i], err = lift(targets[i]); err != nil {
				return nil, err
			}
		}
		if having != nil {
			if having, err = lift(having); err != nil {
				return nil, err
			}
			node = &plan.Filter{Input: node, Pred: having}
		}
		for i := range order {
			if order[i].expr != nil {
				if order[i].expr, err = lift(order[i].expr); err != nil {
					return nil, err
				}
			}
		}
	}
	// Window functions, over the (grouped) row.
	if len(wins) > 0 {
		ptrs := make([]*plan.Scalar, 0, len(targets)+len(order))
		for i := range targets {
			ptrs = append(ptrs, &targets[i])
		}
		for i := range order {
			if order[i].expr != nil {
				ptrs = append(ptrs, &order[i].expr)
			}
		}
		if node, err = b.buildWindows(node, ptrs); err != nil {
			return nil, err
		}
	}
	// Projection: visible targets, then hidden ORDER BY expressions.
	exprs := append([]plan.Scalar(nil), targets...)
	cols := make([]plan.Column, len(targets))
	for i, t := range targets {
		cols[i] = plan.Column{Name: names[i], Type: t.Type(), Nullable: nullable(t, node)}
	}
	visible := append([]plan.Column(nil), cols...)
	// Record columns' fields, hidden right after the visible columns.
	recordHidden := 0
	for _, r := range records {
		for j, f := range r.fields {
			exprs = append(exprs, &plan.ColRef{Index: r.first + j, Typ: f.Type, Name: f.Name})
			cols = append(cols, plan.Column{Name: recordFieldName(names[r.target], f.Name), Type: f.Type, Nullable: true})
			recordHidden++
		}
	}
	plainDistinct := len(sel.DistinctClause) > 0 && (len(sel.DistinctClause) == 1 && sel.DistinctClause[0] == nil || sel.DistinctClause[0].Node == nil)
	// hidden finds e among the projected expressions or appends it as a
	// hidden column (ORDER BY and DISTINCT ON expressions outside the select
	// list), returning its index.
	hidden := func(e plan.Scalar, name string) int {
		for i, x := range exprs {
			if i >= len(targets) && i < len(targets)+recordHidden {
				continue // record fields
			}
			if plan.Equal(x, e) {
				return i
			}
		}
		exprs = append(exprs, e)
		cols = append(cols, plan.Column{Name: name, Type: e.Type(), Nullable: true})
		return len(exprs) - 1
	}
	var keys []plan.SortKey
	for _, o := range order {
		if o.target >= 0 {
			keys = append(keys, sortKey(o.target, o.sb))
			continue
		}
		// NB: plain DISTINCT compares whole output rows, so an ORDER BY
		// expression outside them is ambiguous; DISTINCT ON keeps one whole
		// input row per key, so it may order by anything (PostgreSQL).
		if plainDistinct {
			found := false
			for _, t := range targets {
				if plan.Equal(t, o.expr) {
					found = true
					break
				}
			}
			if !found {
				return nil, b.semantic("42P10", o.sb.Location, "for SELECT DISTINCT, ORDER BY expressions must appear in select list")
			}
		}
		keys = append(keys, sortKey(hidden(o.expr, "?order?"), o.sb))
	}
	// DISTINCT ON keys: output columns, or expressions (hidden if they are
	// not in the select list).
	var on []int
	if len(sel.DistinctClause) > 0 && !plainDistinct {
		for _, d := range sel.DistinctClause {
			idx, ok, err := b.orderByOutput(d, names, targets)
			if err != nil {
				return nil, err
			}
			if !ok {
				s, err := b.expr(d, sc, exprCtx{clause: "DISTINCT ON", aggs: &aggs})
				if err != nil {
					return nil, err
				}
				if grouped {
					if s, err = b.liftGrouped(s, groupExprs, len(groupExprs)); err != nil {
						return nil, err
					}
				}
				idx = hidden(s, "?distinct?")
			}
			on = append(on, idx)
		}
		// PostgreSQL requires ORDER BY to start with the DISTINCT ON keys
		// (in any order among themselves).
		for i := range on {
			if i < len(keys) && !slices.Contains(on, keys[i].Col) {
				return nil, b.semantic("42P10", -1, "SELECT DISTINCT ON expressions must match initial ORDER BY expressions")
			}
		}
	}
	node = &plan.Project{Input: node, Exprs: exprs, Cols: cols}
	// DISTINCT / DISTINCT ON
	if plainDistinct {
		node = &plan.Distinct{Input: node}
	} else if len(on) > 0 {
		node = &plan.Distinct{Input: node, On: on, Order: keys}
	}
	q := &BoundQuery{Plan: node, Columns: visible, Order: keys, Limit: -1, Origins: origins, RecordHidden: recordHidden}
	return q, nil
}

// nullable guesses whether an output expression can be NULL (a column
// reference inherits its input column's nullability; anything else may
// be NULL).
func nullable(s plan.Scalar, input plan.Node) bool {
	switch x := s.(type) {
	case *plan.ColRef:
		in := input.Schema()
		if x.Index < len(in) {
			return in[x.Index].Nullable
		}
	case *plan.Const:
		return x.Value == nil
	}
	return true
}

// orderByOutput resolves an ORDER BY / DISTINCT ON / GROUP BY item that is
// an output ordinal or a bare output column name.
func (b *binder) orderByOutput(n *pg_query.Node, names []string, targets []plan.Scalar) (int, bool, error) {
	if c := n.GetAConst(); c != nil && c.GetIval() != nil {
		i := int(c.GetIval().Ival)
		if i < 1 || i > len(targets) {
			return 0, false, b.semantic("42P10", c.Location, "ORDER BY position %d is not in select list", i)
		}
		return i - 1, true, nil
	}
	if cr := n.GetColumnRef(); cr != nil && len(cr.Fields) == 1 {
		name := cr.Fields[0].GetString_().GetSval()
		found := -1
		for i, nm := range names {
			if nm == name {
				if found >= 0 && !plan.Equal(targets[found], targets[i]) {
					return 0, false, b.semantic("42702", cr.Location, "ORDER BY \"%s\" is ambiguous", name)
				}
				found = i
			}
		}
		if found >= 0 {
			return found, true, nil
		}
	}
	return 0, false, nil
}

// groupItem binds one GROUP BY item: an input expression, or (as
// PostgreSQL allows) an output ordinal or output column alias.
func (b *binder) groupItem(g *pg_query.Node, sc *scope, targets []plan.Scalar, names []string) (plan.Scalar, error) {
	if c := g.GetAConst(); c != nil && c.GetIval() != nil {
		i := int(c.GetIval().Ival)
		if i < 1 || i > len(targets) {
			return nil, b.semantic("42P10", c.Location, "GROUP BY position %d is not in select list", i)
		}
		hasAgg := false
		plan.Walk(targets[i-1], func(x plan.Scalar) bool {
			if _, ok := x.(*aggRef); ok {
				hasAgg = true
			}
			return !hasAgg
		})
		if hasAgg {
			return nil, errcode.New(errcode.SQLGroupingError, "aggregate functions are not allowed in GROUP BY").WithPosition(b.pos(c.Location))
		}
		return targets[i-1], nil
	}
	if gs := g.GetGroupingSet(); gs != nil {
		// Only a list inside GROUPING SETS / ROLLUP / CUBE gets here.
		return nil, b.semantic("42601", gs.Location, "syntax error: a grouping set cannot be nested in a parenthesized grouping list")
	}
	s, err := b.expr(g, sc, exprCtx{clause: "GROUP BY"})
	if err != nil {
		// NB: a bare name that is no input column may name an output
		// column (PostgreSQL's SQL-92 rule; input columns win).
		if cr := g.GetColumnRef(); cr != nil && len(cr.Fields) == 1 && cr.Fields[0].GetString_() != nil {
			if ce, ok := errcode.As(err); ok && ce.State() == "42703" {
				name := cr.Fields[0].GetString_().GetSval()
				found := -1
				for i, n := range names {
					if n == name {
						if found >= 0 && !plan.Equal(targets[found], targets[i]) {
							return nil, b.semantic("42702", cr.Location, "GROUP BY \"%s\" is ambiguous", name)
						}
						found = i
					}
				}
				if found >= 0 {
					return b.groupItem(&pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Val: &pg_query.A_Const_Ival{Ival: &pg_query.Integer{Ival: int32(found + 1)}}, Location: cr.Location}}}, sc, targets, names)
				}
			}
		}
		return nil, err
	}
	return s, nil
}

// buildAggregate makes Aggregate(Project(input -> group exprs ++ agg
// args)). The output is the group columns then one column per aggregate.
func (b *binder) buildAggregate(input plan.Node, groupExprs []plan.Scalar, aggs []aggRef) (plan.Node, error) {
	var pre []plan.Scalar
	var preCols []plan.Column
	inCols := input.Schema()
	for i, g := range groupExprs {
		if plan.HasSubquery(g) {
			return nil, b.unsupported(-1, "subqueries in GROUP BY")
		}
		name := g.String()
		if c, ok := g.(*plan.ColRef); ok {
			name = c.Name
		} else {
			name = fmt.Sprintf("group%d", i+1)
		}
		pre = append(pre, g)
		preCols = append(preCols, plan.Column{Name: name, Type: g.Type(), Nullable: nullable(g, input)})
	}
	agg := &plan.Aggregate{}
	for i := range groupExprs {
		agg.GroupBy = append(agg.GroupBy, i)
	}
	for _, a := range aggs {
		call := a.call
		args := make([]plan.Scalar, len(call.Args))
		for j, arg := range call.Args {
			if plan.HasSubquery(arg) {
				return nil, b.unsupported(-1, "subqueries in aggregate arguments")
			}
			if j == 0 && isOrderedSetAggregate(call.Func) && call.Func != "mode" {
				// NB: a percentile's fraction reads no column (withinGroup
				// checks it); it stays a constant, evaluated per group.
				args[j] = arg
				continue
			}
			idx := len(pre)
			pre = append(pre, arg)
			name := fmt.Sprintf("arg%d", idx)
			if c, ok := arg.(*plan.ColRef); ok {
				name = c.Name
			}
			preCols = append(preCols, plan.Column{Name: name, Type: arg.Type(), Nullable: true})
			args[j] = &plan.ColRef{Index: idx, Typ: arg.Type(), Name: preCols[idx].Name}
		}
		call.Args = args
		if call.Filter != nil {
			idx := len(pre)
			pre = append(pre, call.Filter)
			preCols = append(preCols, plan.Column{Name: fmt.Sprintf("filter%d", idx), Type: types.TBool, Nullable: true})
			call.Filter = &plan.ColRef{Index: idx, Typ: types.TBool, Name: preCols[idx].Name}
		}
		agg.Aggs = append(agg.Aggs, call)
	}
	_ = inCols
	agg.Input = &plan.Project{Input: input, Exprs: pre, Cols: preCols}
	for i := range groupExprs {
		agg.Cols = append(agg.Cols, preCols[i])
	}
	for _, a := range agg.Aggs {
		// count never returns NULL; the others do on empty or all-NULL input.
		agg.Cols = append(agg.Cols, plan.Column{Name: a.Func, Type: a.Typ, Nullable: a.Func != "count"})
	}
	return agg, nil
}

// liftGrouped rewrites an expression bound over the FROM row into one over
// the Aggregate's output: group expressions become their group column,
// aggregates their aggregate column; any other column reference is a
// grouping error (42803).
func (b *binder) liftGrouped(s plan.Scalar, groupExprs []plan.Scalar, nGroups int) (plan.Scalar, error) {
	for i, g := range groupExprs {
		if plan.Equal(s, g) {
			return &plan.ColRef{Index: i, Typ: g.Type(), Name: groupName(g, i)}, nil
		}
	}
	switch x := s.(type) {
	case *aggRef:
		return &plan.ColRef{Index: nGroups + x.index, Typ: x.call.Typ, Name: x.call.Func}, nil
	case *groupingRef:
		if x.col < 0 {
			return &plan.Const{Value: int64(0), Typ: types.TInt4}, nil
		}
		return &plan.ColRef{Index: x.col, Typ: types.TInt4, Name: "grouping"}, nil
	case *plan.ColRef:
		name := x.Name
		if x.Qualifier != "" {
			name = x.Qualifier + "." + x.Name
		}
		return nil, errcode.New(errcode.SQLGroupingError, "column \"%s\" must appear in the GROUP BY clause or be used in an aggregate function", name)
	case *plan.Subquery:
		if plan.HasCorrelation(x.Plan) {
			return nil, b.unsupported(-1, "correlated subqueries in grouped queries")
		}
	}
	ch := s.Children()
	if len(ch) == 0 {
		return s, nil
	}
	out := make([]plan.Scalar, len(ch))
	for i, c := range ch {
		var err error
		if out[i], err = b.liftGrouped(c, groupExprs, nGroups); err != nil {
			return nil, err
		}
	}
	return s.WithChildren(out), nil
}

func groupName(g plan.Scalar, i int) string {
	if c, ok := g.(*plan.ColRef); ok {
		return c.Name
	}
	return fmt.Sprintf("group%d", i+1)
}

func isStar(cr *pg_query.ColumnRef) bool {
	last := cr.Fields[len(cr.Fields)-1]
	_, ok := last.Node.(*pg_query.Node_AStar)
	return ok
}

// expandStar expands `*` or `t.*`.
func (b *binder) expandStar(cr *pg_query.ColumnRef, sc *scope) ([]plan.Scalar, []string, error) {
	schema, table := "", ""
	switch len(cr.Fields) {
	case 1:
	case 2:
		table = cr.Fields[0].GetString_().GetSval()
	case 3:
		schema, table = cr.Fields[0].GetString_().GetSval(), cr.Fields[1].GetString_().GetSval()
	default:
		return nil, nil, b.semantic("0A000", cr.Location, "cross-database references are not implemented")
	}
	var exprs []plan.Scalar
	var names []string
	if table == "" {
		if len(sc.tables) == 0 {
			return nil, nil, b.semantic("42601", cr.Location, "SELECT * with no tables specified is not valid")
		}
		for _, i := range sc.star {
			c := sc.cols[i]
			exprs = append(exprs, &plan.ColRef{Index: c.index, Typ: c.typ, Name: c.name, Qualifier: c.table})
			names = append(names, c.name)
		}
		return exprs, names, nil
	}
	if !sc.hasTable(table) {
		return nil, nil, errcode.New(errcode.SQLUndefinedTable, "missing FROM-clause entry for table \"%s\"", table).WithPosition(b.pos(cr.Location))
	}
	first := -1
	for i, c := range sc.cols {
		if c.table == table && !c.unqualifiedOnly && (schema == "" || c.schema == schema) {
			if first < 0 {
				first = i
			} else if schema == "" && c.schema != sc.cols[first].schema {
				return nil, nil, errcode.New(errcode.SQLAmbiguousColumn, "table reference \"%s\" is ambiguous", table).WithSQLState("42P09").WithPosition(b.pos(cr.Location))
			}
			exprs = append(exprs, &plan.ColRef{Index: c.index, Typ: c.typ, Name: c.name, Qualifier: c.table})
			names = append(names, c.name)
		}
	}
	if schema != "" && first < 0 {
		return nil, nil, errcode.New(errcode.SQLUndefinedTable, "missing FROM-clause entry for table \"%s\"", table).WithPosition(b.pos(cr.Location))
	}
	return exprs, names, nil
}

// columnName is PostgreSQL's FigureColname: the column or function name,
// else "?column?".
func columnName(n *pg_query.Node) string {
	switch x := n.Node.(type) {
	case *pg_query.Node_ColumnRef:
		last := x.ColumnRef.Fields[len(x.ColumnRef.Fields)-1]
		if s := last.GetString_(); s != nil {
			return s.Sval
		}
	case *pg_query.Node_FuncCall:
		return funcName(x.FuncCall.Funcname[len(x.FuncCall.Funcname)-1:])
	case *pg_query.Node_TypeCast:
		if name := columnName(x.TypeCast.Arg); name != "?column?" {
			return name
		}
		tn := x.TypeCast.TypeName.Names
		return tn[len(tn)-1].GetString_().GetSval()
	case *pg_query.Node_CaseExpr:
		return "case"
	case *pg_query.Node_AArrayExpr:
		return "array"
	case *pg_query.Node_AIndirection:
		// PostgreSQL: the last field name, else the name of what is
		// subscripted (a[1] is "a").
		fname := ""
		for _, i := range x.AIndirection.Indirection {
			if s := i.GetString_(); s != nil {
				fname = s.Sval
			}
		}
		if fname != "" {
			return fname
		}
		return columnName(x.AIndirection.Arg)
	case *pg_query.Node_CoalesceExpr:
		return "coalesce"
	case *pg_query.Node_MinMaxExpr:
		if x.MinMaxExpr.Op == pg_query.MinMaxOp_IS_LEAST {
			return "least"
		}
		return "greatest"
	case *pg_query.Node_SubLink:
		if x.SubLink.SubLinkType == pg_query.SubLinkType_EXISTS_SUBLINK {
			return "exists"
		}
		if x.SubLink.SubLinkType == pg_query.SubLinkType_ARRAY_SUBLINK {
			return "array"
		}
		if x.SubLink.SubLinkType == pg_query.SubLinkType_EXPR_SUBLINK {
			if sel := x.SubLink.Subselect.GetSelectStmt(); sel != nil && len(sel.TargetList) == 1 {
				rt := sel.TargetList[0].GetResTarget()
				if rt.Name != "" {
					return rt.Name
				}
				return columnName(rt.Val)
			}
		}
	case *pg_query.Node_SqlvalueFunction:
		switch x.SqlvalueFunction.Op {
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
			return "current_date"
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
			return "current_timestamp"
		case pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
			return "localtimestamp"
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_USER, pg_query.SQLValueFunctionOp_SVFOP_USER:
			return "current_user"
		case pg_query.SQLValueFunctionOp_SVFOP_SESSION_USER:
			return "session_user"
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:
			return "current_role"
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:
			return "current_catalog"
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
			return "current_schema"
		}
	case *pg_query.Node_AExpr:
		if x.AExpr.Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF {
			return "nullif"
		}
	}
	return "?column?"
}

// subLink binds a subquery expression (scalar, EXISTS, IN / = ANY).
func (b *binder) subLink(s *pg_query.SubLink, sc *scope, ctx exprCtx) (plan.Scalar, error) {
	sel := s.Subselect.GetSelectStmt()
	q, err := b.selectStmt(sel, sc)
	if err != nil {
		return nil, err
	}
	if s.SubLinkType == pg_query.SubLinkType_ARRAY_SUBLINK {
		return b.arraySubquery(q, s.Location)
	}
	node, cols, err := b.finishSubquery(q, nil, "subquery", s.Location)
	if err != nil {
		return nil, err
	}
	switch s.SubLinkType {
	case pg_query.SubLinkType_EXISTS_SUBLINK:
		return &plan.Subquery{Kind: plan.SubExists, Plan: node, Typ: types.TBool}, nil
	case pg_query.SubLinkType_EXPR_SUBLINK:
		if len(cols) != 1 {
			return nil, b.semantic("42601", s.Location, "subquery must return only one column")
		}
		return &plan.Subquery{Kind: plan.SubScalar, Plan: node, Typ: cols[0].Type}, nil
	case pg_query.SubLinkType_ANY_SUBLINK, pg_query.SubLinkType_ALL_SUBLINK:
		op := "="
		if len(s.OperName) > 0 {
			op = s.OperName[len(s.OperName)-1].GetString_().GetSval()
		}
		negate := false
		switch {
		case s.SubLinkType == pg_query.SubLinkType_ANY_SUBLINK && op == "=":
		case s.SubLinkType == pg_query.SubLinkType_ALL_SUBLINK && op == "<>":
			negate = true // x <> ALL (q) is NOT IN
		default:
			return nil, b.unsupported(s.Location, op+" ANY/ALL (subquery)")
		}
		if len(cols) != 1 {
			if len(cols) > 1 {
				return nil, b.semantic("42601", s.Location, "subquery has too many columns")
			}
			return nil, b.semantic("42601", s.Location, "subquery has too few columns")
		}
		test, err := b.expr(s.Testexpr, sc, ctx)
		if err != nil {
			return nil, err
		}
		if test.Type().Kind == types.KindRecord {
			return nil, b.unsupported(s.Location, "row-valued IN (subquery)")
		}
		// Resolve the comparison as test = column, casting either side.
		colRef := &plan.ColRef{Index: 0, Typ: cols[0].Type, Name: cols[0].Name}
		eq, err := b.binaryOp("=", test, colRef, s.Location)
		if err != nil {
			return nil, err
		}
		f := eq.(*plan.Func)
		if rc, ok := f.Args[1].(*plan.Cast); ok {
			node = &plan.Project{Input: node, Exprs: []plan.Scalar{rc}, Cols: []plan.Column{{Name: cols[0].Name, Type: rc.Typ, Nullable: true}}}
		}
		return &plan.Subquery{Kind: plan.SubIn, Plan: node, Test: f.Args[0], Negate: negate, Typ: types.TBool}, nil
	}
	return nil, b.unsupported(s.Location, "this kind of subquery ("+s.SubLinkType.String()+")")
}

// parseView parses a stored view definition.
func parseView(sql string) (*pg_query.SelectStmt, error) {
	st, err := parse.ParseOne(sql)
	if err != nil {
		return nil, err
	}
	pg, ok := st.(*parse.PG)
	if !ok || pg.Stmt.GetSelectStmt() == nil {
		return nil, errcode.New(errcode.InternalError, "stored view definition is not a query: %s", sql)
	}
	return pg.Stmt.GetSelectStmt(), nil
}

// functionallyDependent adds to the group keys every column of a table
// whose primary key is grouped on, as PostgreSQL allows (SELECT t.a, t.b
// ... GROUP BY t.pk): those columns are determined by the key, so grouping
// by them too changes nothing.
func functionallyDependent(sc *scope, groupExprs []plan.Scalar, needed []*plan.ColRef) []plan.Scalar {
	neededSet := map[int]bool{}
	for _, c := range needed {
		neededSet[c.Index] = true
	}
	grouped := map[int]bool{}
	for _, g := range groupExprs {
		if c, ok := g.(*plan.ColRef); ok {
			grouped[c.Index] = true
		}
	}
	type tableKey struct {
		table string
		rel   *catalog.Relation
	}
	var tables []tableKey
	seen := map[tableKey]bool{}
	for _, c := range sc.cols {
		k := tableKey{c.table, c.rel}
		if c.rel != nil && len(c.rel.PrimaryKey) > 0 && !seen[k] {
			seen[k] = true
			tables = append(tables, k)
		}
	}
	out := groupExprs
	for _, tk := range tables {
		pkGrouped := true
		for _, p := range tk.rel.PrimaryKey {
			found := false
			for _, c := range sc.cols {
				if c.rel == tk.rel && c.table == tk.table && c.relCol == p && grouped[c.index] {
					found = true
				}
			}
			if !found {
				pkGrouped = false
			}
		}
		if !pkGrouped {
			continue
		}
		for _, c := range sc.cols {
			if c.rel == tk.rel && c.table == tk.table && !grouped[c.index] && neededSet[c.index] {
				grouped[c.index] = true
				out = append(out, &plan.ColRef{Index: c.index, Typ: c.typ, Name: c.name, Qualifier: c.table})
			}
		}
	}
	return out
}

// ungroupedColumns collects the column references of s that are neither
// inside an aggregate nor part of a group expression.
func ungroupedColumns(s plan.Scalar, groupExprs []plan.Scalar, out *[]*plan.ColRef) {
	for _, g := range groupExprs {
		if plan.Equal(s, g) {
			return
		}
	}
	switch x := s.(type) {
	case *aggRef:
		return
	case *plan.ColRef:
		*out = append(*out, x)
		return
	}
	for _, c := range s.Children() {
		ungroupedColumns(c, groupExprs, out)
	}
}
