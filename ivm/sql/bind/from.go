package bind

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/opt"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// lateralLeft is what a FROM item may reference besides the enclosing
// queries (a function in FROM implicitly, a subquery with LATERAL): the
// FROM items to its left, already combined, and how the item joins them.
type lateralLeft struct {
	node plan.Node
	sc   *scope
	// kind is InnerJoin (a comma or JOIN) or LeftJoin (LEFT JOIN LATERAL).
	kind plan.JoinKind
	// on binds the join's ON condition over the combined scope (nil
	// result: none, as after a comma).
	on func(sc *scope) (plan.Scalar, error)
}

func (l *lateralLeft) bindOn(sc *scope) (plan.Scalar, error) {
	if l.on == nil {
		return nil, nil
	}
	return l.on(sc)
}

// fromItem binds one FROM-clause item: a relation, subquery or join.
func (b *binder) fromItem(n *pg_query.Node, outer *scope) (plan.Node, *scope, error) {
	node, sc, _, err := b.fromItemLateral(n, outer, nil)
	return node, sc, err
}

// fromItemLateral binds a FROM item that may reference left (nil: no
// item to its left). combined is set when the item did: node and scope
// then start with left's columns and already join it.
func (b *binder) fromItemLateral(n *pg_query.Node, outer *scope, left *lateralLeft) (node plan.Node, sc *scope, combined bool, err error) {
	switch x := n.Node.(type) {
	case *pg_query.Node_RangeSubselect:
		if x.RangeSubselect.Lateral && left != nil {
			return b.lateralSubquery(x.RangeSubselect, outer, left)
		}
	case *pg_query.Node_RangeFunction:
		return b.rangeFunction(x.RangeFunction, outer, left)
	case *pg_query.Node_JoinExpr:
		return b.join(x.JoinExpr, outer, left)
	}
	node, sc, err = b.fromItemPlain(n, outer)
	return node, sc, false, err
}

// fromItemPlain binds a FROM item that references no FROM sibling.
func (b *binder) fromItemPlain(n *pg_query.Node, outer *scope) (plan.Node, *scope, error) {
	switch x := n.Node.(type) {
	case *pg_query.Node_RangeVar:
		return b.rangeVar(x.RangeVar, outer)
	case *pg_query.Node_RangeSubselect:
		rs := x.RangeSubselect
		if rs.Alias == nil {
			// PostgreSQL 16 allows this; 15 does not.
			return nil, nil, b.semantic("42601", -1, "subquery in FROM must have an alias")
		}
		// A FROM subquery cannot see sibling FROM items, only the
		// enclosing query levels.
		var parent *scope
		if outer != nil {
			parent = outer
		}
		q, err := b.selectStmt(rs.Subquery.GetSelectStmt(), parent)
		if err != nil {
			return nil, nil, err
		}
		node, cols, err := b.finishSubquery(q, aliasNames(rs.Alias.Colnames), rs.Alias.Aliasname, -1)
		if err != nil {
			return nil, nil, err
		}
		return node, relationScope(rs.Alias.Aliasname, cols, outer).withOrigins(q.Origins), nil
	case *pg_query.Node_JoinExpr:
		node, sc, _, err := b.join(x.JoinExpr, outer, nil)
		return node, sc, err
	case *pg_query.Node_RangeFunction:
		node, sc, _, err := b.rangeFunction(x.RangeFunction, outer, nil)
		return node, sc, err
	case *pg_query.Node_RangeTableSample:
		return nil, nil, b.unsupported(-1, "TABLESAMPLE")
	}
	return nil, nil, b.unsupported(-1, "FROM item "+typeNameOf(n))
}

// relationScope makes the scope of one named relation.
func relationScope(name string, cols []plan.Column, parent *scope) *scope {
	sc := &scope{parent: parent, tables: []string{name}}
	for i, c := range cols {
		sc.cols = append(sc.cols, scopeCol{table: name, name: c.Name, index: i, typ: c.Type, nullable: c.Nullable})
		if !strings.HasPrefix(c.Name, "?") { // hidden record fields
			sc.star = append(sc.star, i)
		}
	}
	return sc
}

// rangeVar resolves a relation name: a CTE, a table/source/materialized
// view (a Scan), or an inline view (expanded).
func (b *binder) rangeVar(rv *pg_query.RangeVar, outer *scope) (plan.Node, *scope, error) {
	alias := rv.Relname
	var colAliases []string
	if rv.Alias != nil {
		alias = rv.Alias.Aliasname
		colAliases = aliasNames(rv.Alias.Colnames)
	}
	rename := func(cols []plan.Column) ([]plan.Column, error) {
		if len(colAliases) > len(cols) {
			return nil, b.semantic("42P10", rv.Location, "table \"%s\" has %d columns available but %d columns specified", alias, len(cols), len(colAliases))
		}
		out := append([]plan.Column(nil), cols...)
		for i, a := range colAliases {
			out[i].Name = a
		}
		return out, nil
	}
	if rv.Schemaname == "" && rv.Catalogname == "" {
		for i := len(b.ctes) - 1; i >= 0; i-- {
			if cte, ok := b.ctes[i][rv.Relname]; ok {
				cols, err := rename(cte.columns)
				if err != nil {
					return nil, nil, err
				}
				return cte.node, relationScope(alias, cols, outer).withOrigins(cte.origins), nil
			}
		}
	}
	name := []string{rv.Relname}
	if rv.Schemaname != "" {
		name = []string{rv.Schemaname, rv.Relname}
	}
	if rv.Catalogname != "" {
		return nil, nil, b.semantic("0A000", rv.Location, "cross-database references are not implemented: %s.%s.%s", rv.Catalogname, rv.Schemaname, rv.Relname)
	}
	rel, ok := b.cat.LookupRelation(name)
	if !ok {
		full := rv.Relname
		if rv.Schemaname != "" {
			full = rv.Schemaname + "." + rv.Relname
		}
		return nil, nil, errcode.New(errcode.SQLUndefinedTable, "relation \"%s\" does not exist", full).WithPosition(b.pos(rv.Location))
	}
	if rel.Kind == catalog.KindIndex {
		return nil, nil, b.semantic("42809", rv.Location, "\"%s\" is an index", rel.Name)
	}
	if rel.Kind == catalog.KindView {
		return b.expandView(rel, alias, colAliases, rv.Location, outer)
	}
	if rel.Kind == catalog.KindMaterializedView && b.opts.InlineMaterialized != nil {
		if def, ok := b.opts.InlineMaterialized(rel); ok {
			return b.expandView(def, alias, colAliases, rv.Location, outer)
		}
	}
	cols := make([]plan.Column, len(rel.Columns))
	for i, c := range rel.Columns {
		cols[i] = plan.Column{Name: c.Name, Type: c.Type, Nullable: !c.NotNull}
	}
	var node plan.Node = &plan.Scan{Relation: rel, Alias: alias, Cols: cols}
	cols, err := rename(cols)
	if err != nil {
		return nil, nil, err
	}
	sc := relationScope(alias, cols, outer)
	if rv.Alias == nil {
		sc.tables[0] = alias + "\x00" + rel.ID.String()
	}
	for i := range sc.cols {
		if rv.Alias == nil {
			sc.cols[i].schema = rel.SchemaName()
		}
		sc.cols[i].rel, sc.cols[i].relCol = rel, i
		sc.cols[i].origin = Origin{Relation: rel, Column: i}
	}
	return node, sc, nil
}

// expandView inlines an inline view's definition (spec §4.3).
func (b *binder) expandView(rel *catalog.Relation, alias string, colAliases []string, loc int32, outer *scope) (plan.Node, *scope, error) {
	if b.viewDepth >= viewExpansionDepthMax {
		return nil, nil, b.semantic("42P17", loc, "infinite recursion detected in the definition of view \"%s\"", rel.Name)
	}
	sel, err := parseView(rel.SQL)
	if err != nil {
		return nil, nil, err
	}
	// The view body is bound on its own: its own text for positions, no
	// CTEs or outer scope of the referencing query.
	saved := *b
	b.src, b.base, b.ctes = rel.SQL, 0, nil
	b.viewDepth++
	// The body's names resolve as they did when the view was created (by
	// id), so a renamed relation it reads is still found.
	if rel.Kind == catalog.KindMaterializedView {
		// An inlined materialized view compiles as it does on its own
		// shard: from what it was pinned to, under its own column names.
		b.cat = catalog.Pinned(b.cat, rel)
		b.inMaterialized = true
	} else {
		b.cat = catalog.WithRefs(b.cat, rel.Refs)
	}
	if rel.Kind == catalog.KindMaterializedView {
		colAliases = viewColumnNames(rel, colAliases)
	}
	if o, ok := b.cat.(catalog.ExpansionObserver); ok {
		o.EnterView()
		defer o.LeaveView()
	}
	q, err := b.selectStmt(sel, nil)
	params := b.params
	*b = saved
	b.params = params
	if err != nil {
		return nil, nil, err
	}
	// An inline view's columns carry the names CREATE VIEW v (a, b) gave
	// them, not the body's (renamed only where they differ).
	if rel.Kind == catalog.KindView && len(colAliases) < len(rel.Columns) {
		for i, c := range rel.Columns {
			if i < len(q.Columns) && c.Name != q.Columns[i].Name {
				colAliases = viewColumnNames(rel, colAliases)
				break
			}
		}
	}
	node, cols, err := b.finishSubquery(q, colAliases, alias, loc)
	if err != nil {
		return nil, nil, err
	}
	return node, relationScope(alias, cols, outer).withOrigins(relationOrigins(rel, len(cols))), nil
}

// viewColumnNames is the alias list of a view read with aliases (maybe
// none): the aliases, then the view's own names for the columns after
// them.
func viewColumnNames(rel *catalog.Relation, aliases []string) []string {
	if len(aliases) > len(rel.Columns) {
		return aliases
	}
	names := make([]string, len(rel.Columns))
	for i, c := range rel.Columns {
		names[i] = c.Name
	}
	copy(names, aliases)
	return names
}

// crossJoin combines two FROM items (FROM a, b).
func crossJoin(l plan.Node, lsc *scope, r plan.Node, rsc *scope) (plan.Node, *scope) {
	node := &plan.Join{Kind: plan.InnerJoin, Left: l, Right: r}
	return node, mergeScopes(lsc, rsc, len(l.Schema()), false, false)
}

// mergeScopes concatenates the scopes of a join's sides; right indexes
// shift by nLeft. Nullability follows the join kind.
func mergeScopes(l, r *scope, nLeft int, leftNullable, rightNullable bool) *scope {
	sc := &scope{parent: l.parent}
	for _, c := range l.cols {
		c.nullable = c.nullable || leftNullable
		sc.cols = append(sc.cols, c)
	}
	for _, c := range r.cols {
		c.index += nLeft
		c.nullable = c.nullable || rightNullable
		sc.cols = append(sc.cols, c)
	}
	sc.star = append(sc.star, l.star...)
	for _, s := range r.star {
		sc.star = append(sc.star, s+len(l.cols))
	}
	sc.tables = append(append([]string(nil), l.tables...), r.tables...)
	return sc
}

// join binds JOIN ... ON / USING / NATURAL. Its left side may reference
// the FROM items to the join's left (outerLeft); combined is then set, as
// for fromItemLateral.
func (b *binder) join(j *pg_query.JoinExpr, outer *scope, outerLeft *lateralLeft) (_ plan.Node, _ *scope, combined bool, _ error) {
	node, sc, err := b.joinItems(j, outer, outerLeft, &combined)
	return node, sc, combined, err
}

func (b *binder) joinItems(j *pg_query.JoinExpr, outer *scope, outerLeft *lateralLeft, combinedLeft *bool) (plan.Node, *scope, error) {
	l, lsc, combined, err := b.fromItemLateral(j.Larg, outer, outerLeft)
	if err != nil {
		return nil, nil, err
	}
	*combinedLeft = combined
	var kind plan.JoinKind
	switch j.Jointype {
	case pg_query.JoinType_JOIN_INNER:
		kind = plan.InnerJoin
	case pg_query.JoinType_JOIN_LEFT:
		kind = plan.LeftJoin
	case pg_query.JoinType_JOIN_RIGHT:
		kind = plan.RightJoin
	case pg_query.JoinType_JOIN_FULL:
		kind = plan.FullJoin
	default:
		return nil, nil, b.unsupported(-1, "join type "+j.Jointype.String())
	}
	if combined && kind != plan.InnerJoin && kind != plan.LeftJoin {
		// Each row to the join's left would need its own outer join.
		return nil, nil, b.unsupported(-1, "RIGHT or FULL JOIN of a function in FROM referencing an earlier FROM item")
	}
	var left *lateralLeft
	if (kind == plan.InnerJoin || kind == plan.LeftJoin) && !j.IsNatural && len(j.UsingClause) == 0 {
		// The right side may reference the left (a function in FROM, or
		// LATERAL); it then joins the left itself, under the ON condition.
		left = &lateralLeft{node: l, sc: lsc, kind: kind, on: func(sc *scope) (plan.Scalar, error) {
			if j.Quals == nil {
				return nil, nil
			}
			cond, err := b.expr(j.Quals, sc, exprCtx{clause: "JOIN conditions"})
			if err != nil {
				return nil, err
			}
			return b.coerceBool(cond, "JOIN/ON", -1)
		}}
	}
	r, rsc, combined, err := b.fromItemLateral(j.Rarg, outer, left)
	if err != nil {
		return nil, nil, err
	}
	if combined {
		return b.joinAlias(j, r, rsc)
	}
	for _, t := range rsc.tables {
		if lsc.conflicts(t) {
			return nil, nil, b.semantic("42712", -1, "table name \"%s\" specified more than once", tableName(t))
		}
	}
	nLeft := len(l.Schema())
	sc := mergeScopes(lsc, rsc, nLeft, kind == plan.RightJoin || kind == plan.FullJoin, kind == plan.LeftJoin || kind == plan.FullJoin)
	node := &plan.Join{Kind: kind, Left: l, Right: r}
	var using []string
	if j.IsNatural {
		// NATURAL: the columns with the same name on both sides, in left order.
		for _, lc := range lsc.star {
			name := lsc.cols[lc].name
			for _, rc := range rsc.star {
				if rsc.cols[rc].name == name {
					using = append(using, name)
					break
				}
			}
		}
	} else if len(j.UsingClause) > 0 {
		using = aliasNames(j.UsingClause)
	}
	if j.Quals != nil {
		cond, err := b.expr(j.Quals, sc, exprCtx{clause: "JOIN conditions"})
		if err != nil {
			return nil, nil, err
		}
		if cond, err = b.coerceBool(cond, "JOIN/ON", -1); err != nil {
			return nil, nil, err
		}
		node.Cond = cond
	}
	var result plan.Node = node
	if j.IsNatural || len(j.UsingClause) > 0 {
		var conds []plan.Scalar
		var mergedExprs []plan.Scalar
		var mergedNames []string
		var usedL, usedR []int
		for _, name := range using {
			lcol, lok, err := lsc.lookupColumn("", "", name, 0)
			if err != nil || !lok {
				if err == nil {
					err = errcode.New(errcode.SQLUndefinedColumn, "column \"%s\" specified in USING clause does not exist in left table", name)
				}
				return nil, nil, err
			}
			rcol, rok, err := rsc.lookupColumn("", "", name, 0)
			if err != nil || !rok {
				if err == nil {
					err = errcode.New(errcode.SQLUndefinedColumn, "column \"%s\" specified in USING clause does not exist in right table", name)
				}
				return nil, nil, err
			}
			lref := &plan.ColRef{Index: lcol.index, Typ: lcol.typ, Name: name, Qualifier: lcol.table}
			rref := &plan.ColRef{Index: rcol.index + nLeft, Typ: rcol.typ, Name: name, Qualifier: rcol.table}
			eq, err := b.binaryOp("=", lref, rref, -1)
			if err != nil {
				return nil, nil, err
			}
			conds = append(conds, eq)
			f := eq.(*plan.Func)
			var merged plan.Scalar
			switch kind {
			case plan.RightJoin:
				merged = f.Args[1]
			case plan.FullJoin:
				merged = &plan.Coalesce{Args: []plan.Scalar{f.Args[0], f.Args[1]}, Typ: f.Args[0].Type()}
			default:
				merged = f.Args[0]
			}
			mergedExprs = append(mergedExprs, merged)
			mergedNames = append(mergedNames, name)
			usedL = append(usedL, positionOf(lsc, lcol))
			usedR = append(usedR, positionOf(rsc, rcol))
		}
		node.Cond = plan.MakeAnd(conds)
		// The output row: all join columns, then the merged USING columns
		// (so qualified references keep working).
		joinCols := node.Schema()
		exprs := plan.ColumnRefs(joinCols)
		cols := append([]plan.Column(nil), joinCols...)
		newSc := &scope{parent: sc.parent, tables: sc.tables}
		for _, c := range sc.cols {
			newSc.cols = append(newSc.cols, c)
		}
		usingPositions := make([]int, len(mergedExprs))
		for i, m := range mergedExprs {
			idx := len(exprs)
			exprs = append(exprs, m)
			cols = append(cols, plan.Column{Name: mergedNames[i], Type: m.Type(), Nullable: true})
			usingPositions[i] = len(newSc.cols)
			newSc.cols = append(newSc.cols, scopeCol{name: mergedNames[i], index: idx, typ: m.Type(), nullable: kind != plan.InnerJoin, unqualifiedOnly: true})
			if j.JoinUsingAlias != nil {
				newSc.cols = append(newSc.cols, scopeCol{table: j.JoinUsingAlias.Aliasname, name: mergedNames[i], index: idx, typ: m.Type(), qualifiedOnly: true})
			}
		}
		// Input USING columns are reachable only qualified.
		hidden := map[int]bool{}
		for _, p := range usedL {
			hidden[p] = true
		}
		for _, p := range usedR {
			hidden[len(lsc.cols)+p] = true
		}
		for p := range newSc.cols[:len(sc.cols)] {
			if hidden[p] {
				newSc.cols[p].qualifiedOnly = true
			}
		}
		// Star: merged columns first, then the rest of left and right.
		newSc.star = append(newSc.star, usingPositions...)
		for _, s := range sc.star {
			if !hidden[s] {
				newSc.star = append(newSc.star, s)
			}
		}
		if j.JoinUsingAlias != nil {
			newSc.tables = append(append([]string(nil), sc.tables...), j.JoinUsingAlias.Aliasname)
		}
		result = &plan.Project{Input: node, Exprs: exprs, Cols: cols}
		sc = newSc
	}
	return b.joinAlias(j, result, sc)
}

// joinAlias applies a join's alias: (a JOIN b) AS x makes only x.col and
// unqualified names visible.
func (b *binder) joinAlias(j *pg_query.JoinExpr, result plan.Node, sc *scope) (plan.Node, *scope, error) {
	if j.Alias != nil {
		alias := j.Alias.Aliasname
		var cols []plan.Column
		var exprs []plan.Scalar
		for _, s := range sc.star {
			c := sc.cols[s]
			exprs = append(exprs, &plan.ColRef{Index: c.index, Typ: c.typ, Name: c.name})
			cols = append(cols, plan.Column{Name: c.name, Type: c.typ, Nullable: c.nullable})
		}
		for i, a := range aliasNames(j.Alias.Colnames) {
			if i < len(cols) {
				cols[i].Name = a
			}
		}
		result = &plan.Project{Input: result, Exprs: exprs, Cols: cols}
		sc = relationScope(alias, cols, sc.parent)
	}
	return result, sc, nil
}

func positionOf(sc *scope, col scopeCol) int {
	for i, c := range sc.cols {
		if c.index == col.index && c.name == col.name && c.table == col.table {
			return i
		}
	}
	return -1
}

var _ = types.TBool

// lateralSubquery binds `LATERAL (SELECT ...) AS s` after left: the
// subquery sees left's columns as outer references, and is decorrelated
// into joins and aggregates of left (opt.LateralJoin); a form that cannot
// be is refused, naming it.
func (b *binder) lateralSubquery(rs *pg_query.RangeSubselect, outer *scope, left *lateralLeft) (plan.Node, *scope, bool, error) {
	if rs.Alias == nil {
		return nil, nil, false, b.semantic("42601", -1, "subquery in FROM must have an alias")
	}
	q, err := b.selectStmt(rs.Subquery.GetSelectStmt(), left.sc)
	if err != nil {
		return nil, nil, false, err
	}
	node, cols, err := b.finishSubquery(q, aliasNames(rs.Alias.Colnames), rs.Alias.Aliasname, -1)
	if err != nil {
		return nil, nil, false, err
	}
	rsc := relationScope(rs.Alias.Aliasname, cols, outer).withOrigins(q.Origins)
	if !plan.HasCorrelation(node) {
		// References nothing outside itself: a plain subquery.
		return node, rsc, false, nil
	}
	for _, t := range rsc.tables {
		if left.sc.conflicts(t) {
			return nil, nil, false, b.semantic("42712", -1, "table name \"%s\" specified more than once", tableName(t))
		}
	}
	if plan.MaxOuterDepth(node) > 1 {
		return nil, nil, false, b.unsupported(-1, "LATERAL subqueries that also reference an enclosing query")
	}
	nLeft := len(left.node.Schema())
	sc := mergeScopes(left.sc, rsc, nLeft, false, left.kind == plan.LeftJoin)
	cond, err := left.bindOn(sc)
	if err != nil {
		return nil, nil, false, err
	}
	out, construct := opt.LateralJoin(left.node, node, left.kind, cond)
	if construct != "" {
		return nil, nil, false, b.unsupported(-1, construct)
	}
	return out, sc, true, nil
}
