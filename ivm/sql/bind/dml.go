package bind

import (
	"errors"
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// DML plans. Each carries a relational plan the ad-hoc engine runs over a
// snapshot; the table writer applies its rows. Rows are in table column
// order with every column present (defaults filled, assignment casts to
// the column types applied — typmods included). The writer still checks
// NOT NULL (23502) and primary-key uniqueness (23505).

// Insert is INSERT INTO t [(cols)] VALUES ... | SELECT ... [ON CONFLICT]
// [RETURNING].
type Insert struct {
	Table *catalog.Relation
	// Rows produces the full new rows.
	Rows plan.Node
	// OnConflict is nil when absent (a duplicate key is an error).
	OnConflict *OnConflict
	Returning  *Returning
	ParamTypes []types.Type
}

// OnConflict is ON CONFLICT (pk) DO NOTHING | DO UPDATE SET ... [WHERE].
type OnConflict struct {
	DoNothing bool
	// AnyConstraint is ON CONFLICT without a target (DO NOTHING only):
	// a row conflicting on any unique index is skipped, not only one
	// whose primary key exists.
	AnyConstraint bool
	// Set are the assignments of DO UPDATE, evaluated over the row
	// existing ++ excluded (2 × table width): column i of the existing row
	// is index i, column i of the proposed (EXCLUDED) row is n+i. Columns
	// not assigned keep the existing value.
	Set []Assignment
	// Where filters which conflicting rows are updated (over the same
	// row); nil = all.
	Where plan.Scalar
}

// Assignment sets table column Column to Expr.
type Assignment struct {
	Column int
	Expr   plan.Scalar
}

// Update is UPDATE t SET ... [WHERE ...] [RETURNING].
type Update struct {
	Table *catalog.Relation
	// Rows produces, per updated row, the old row followed by the new row
	// (2 × table width columns), then with FROM the columns of the FROM
	// items joined to it. With FROM a target row can come several times
	// (once per matching source row); it is updated once, as PostgreSQL.
	Rows       plan.Node
	Returning  *Returning
	ParamTypes []types.Type
	// From is set for UPDATE ... FROM.
	From bool
}

// Delete is DELETE FROM t [WHERE ...] [RETURNING].
type Delete struct {
	Table *catalog.Relation
	// Rows produces the rows to delete (full old rows), then with USING the
	// columns of the USING items joined to them (a row can come several
	// times; it is deleted once).
	Rows       plan.Node
	Returning  *Returning
	ParamTypes []types.Type
	// Using is set for DELETE ... USING.
	Using bool
}

// Returning is a RETURNING list, evaluated over the affected table row (the
// new row for INSERT/UPDATE, the old row for DELETE), followed for UPDATE
// ... FROM and DELETE ... USING by the columns of the joined source row.
type Returning struct {
	Exprs   []plan.Scalar
	Columns []plan.Column
}

// DML binds an INSERT, UPDATE or DELETE; the result is *Insert, *Update or
// *Delete.
func DML(cat catalog.Catalog, stmt *parse.PG, opts Options) (any, error) {
	b := newBinder(cat, stmt.SQL, 0, opts)
	var out any
	var err error
	switch x := stmt.Stmt.Node.(type) {
	case *pg_query.Node_InsertStmt:
		out, err = b.insert(x.InsertStmt)
	case *pg_query.Node_UpdateStmt:
		out, err = b.update(x.UpdateStmt)
	case *pg_query.Node_DeleteStmt:
		out, err = b.delete(x.DeleteStmt)
	default:
		return nil, errcode.New(errcode.SQLFeatureNotSupported, "not a DML statement")
	}
	if err != nil {
		return nil, err
	}
	if err := b.finishParams(); err != nil {
		return nil, err
	}
	fixRet := func(r *Returning) {
		if r == nil {
			return
		}
		for i, e := range r.Exprs {
			r.Exprs[i] = b.fixScalar(e)
		}
	}
	params := append([]types.Type(nil), b.params...)
	switch x := out.(type) {
	case *Insert:
		x.Rows = b.fixParams(x.Rows)
		fixRet(x.Returning)
		if x.OnConflict != nil {
			for i := range x.OnConflict.Set {
				x.OnConflict.Set[i].Expr = b.fixScalar(x.OnConflict.Set[i].Expr)
			}
			if x.OnConflict.Where != nil {
				x.OnConflict.Where = b.fixScalar(x.OnConflict.Where)
			}
		}
		x.ParamTypes = params
	case *Update:
		x.Rows = b.fixParams(x.Rows)
		fixRet(x.Returning)
		x.ParamTypes = params
	case *Delete:
		x.Rows = b.fixParams(x.Rows)
		fixRet(x.Returning)
		x.ParamTypes = params
	}
	return out, nil
}

// fixScalar applies final parameter types to one scalar.
func (b *binder) fixScalar(s plan.Scalar) plan.Scalar {
	n := b.fixParams(&plan.Filter{Input: &plan.Values{}, Pred: s})
	return n.(*plan.Filter).Pred
}

// targetTable resolves the table a DML statement writes.
func (b *binder) targetTable(rv *pg_query.RangeVar) (*catalog.Relation, string, error) {
	name := []string{rv.Relname}
	if rv.Schemaname != "" {
		name = []string{rv.Schemaname, rv.Relname}
	}
	rel, ok := b.cat.LookupRelation(name)
	if !ok {
		return nil, "", errcode.New(errcode.SQLUndefinedTable, "relation \"%s\" does not exist", strings.Join(name, ".")).WithPosition(b.pos(rv.Location))
	}
	if rel.Kind == catalog.KindIndex {
		return nil, "", b.semantic("42809", rv.Location, "\"%s\" is an index", rel.Name)
	}
	if rel.Kind != catalog.KindTable {
		return nil, "", b.semantic("42809", rv.Location, "cannot change %s \"%s\"", rel.Kind, rel.Name)
	}
	alias := rel.Name
	if rv.Alias != nil {
		alias = rv.Alias.Aliasname
	}
	return rel, alias, nil
}

func tableColumns(rel *catalog.Relation) []plan.Column {
	cols := make([]plan.Column, len(rel.Columns))
	for i, c := range rel.Columns {
		cols[i] = plan.Column{Name: c.Name, Type: c.Type, Nullable: !c.NotNull}
	}
	return cols
}

// defaultFor is the DEFAULT of column i (NULL when none).
func (b *binder) defaultFor(rel *catalog.Relation, i int) (plan.Scalar, error) {
	c := rel.Columns[i]
	if c.Default == "" {
		return &plan.Const{Value: nil, Typ: c.Type}, nil
	}
	return DefaultExpr(c.Default, c.Type, c.Name)
}

func (b *binder) insert(s *pg_query.InsertStmt) (*Insert, error) {
	if s.WithClause != nil {
		return nil, b.unsupported(s.WithClause.Location, "WITH in INSERT")
	}
	rel, alias, err := b.targetTable(s.Relation)
	if err != nil {
		return nil, err
	}
	if s.Override == pg_query.OverridingKind_OVERRIDING_USER_VALUE {
		return nil, b.unsupported(s.Relation.Location, "OVERRIDING USER VALUE")
	}
	// Target columns: explicit list or all.
	var targets []int
	seen := map[int]bool{}
	for _, c := range s.Cols {
		rt := c.GetResTarget()
		if len(rt.Indirection) > 0 {
			return nil, b.unsupported(rt.Location, "assignment to subfields or array elements")
		}
		idx := rel.ColumnIndex(rt.Name)
		if idx < 0 {
			return nil, errcode.New(errcode.SQLUndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", rt.Name, rel.Name).WithPosition(b.pos(rt.Location))
		}
		if seen[idx] {
			return nil, errcode.New(errcode.SQLDuplicateColumn, "column \"%s\" specified more than once", rt.Name).WithPosition(b.pos(rt.Location))
		}
		seen[idx] = true
		targets = append(targets, idx)
	}
	if len(s.Cols) == 0 {
		for i := range rel.Columns {
			targets = append(targets, i)
		}
	}
	cols := tableColumns(rel)
	ins := &Insert{Table: rel}
	sel := s.SelectStmt.GetSelectStmt()
	switch {
	case sel == nil:
		// INSERT ... DEFAULT VALUES
		row := make([]plan.Scalar, len(cols))
		for i := range cols {
			if row[i], err = b.defaultFor(rel, i); err != nil {
				return nil, err
			}
		}
		ins.Rows = &plan.Values{Rows: [][]plan.Scalar{row}, Cols: cols}
	case len(sel.ValuesLists) > 0 && sel.WithClause == nil && len(sel.SortClause) == 0 && sel.LimitCount == nil && sel.LimitOffset == nil:
		var rows [][]plan.Scalar
		for _, l := range sel.ValuesLists {
			items := l.GetList().GetItems()
			if len(items) > len(targets) {
				return nil, b.semantic("42601", -1, "INSERT has more expressions than target columns")
			}
			if len(items) < len(targets) && len(s.Cols) > 0 {
				return nil, b.semantic("42601", -1, "INSERT has more target columns than expressions")
			}
			row := make([]plan.Scalar, len(cols))
			for i := range cols {
				if row[i], err = b.defaultFor(rel, i); err != nil {
					return nil, err
				}
			}
			for j, it := range items {
				col := targets[j]
				if _, isDefault := it.Node.(*pg_query.Node_SetToDefault); isDefault {
					continue
				}
				if err := checkGeneratedAlways(rel, col, s.Override); err != nil {
					return nil, err
				}
				v, err := b.expr(it, nil, exprCtx{clause: "VALUES"})
				if err != nil {
					return nil, err
				}
				if row[col], err = b.assign(v, cols[col].Type, cols[col].Name, exprLocation(it)); err != nil {
					return nil, err
				}
			}
			rows = append(rows, row)
		}
		ins.Rows = &plan.Values{Rows: rows, Cols: cols}
	default:
		q, err := b.selectStmt(sel, nil)
		if err != nil {
			return nil, err
		}
		node, qcols, err := b.finishSubquery(q, nil, "INSERT", -1)
		if err != nil {
			return nil, err
		}
		if len(qcols) > len(targets) {
			return nil, b.semantic("42601", -1, "INSERT has more expressions than target columns")
		}
		if len(qcols) < len(targets) && len(s.Cols) > 0 {
			return nil, b.semantic("42601", -1, "INSERT has more target columns than expressions")
		}
		// A parameter selected into a column takes the column's type, as
		// in PostgreSQL (INSERT INTO t SELECT $1, $2).
		if p, ok := node.(*plan.Project); ok {
			for j := range qcols {
				if prm, isParam := p.Exprs[j].(*plan.Param); isParam && prm.Typ.Kind == types.KindUnknown {
					t := cols[targets[j]].Type
					b.params[prm.Index] = t
					p.Exprs[j] = &plan.Param{Index: prm.Index, Typ: t}
					p.Cols[j].Type = t
					qcols[j].Type = t
				}
			}
		}
		exprs := make([]plan.Scalar, len(cols))
		for i := range cols {
			if exprs[i], err = b.defaultFor(rel, i); err != nil {
				return nil, err
			}
		}
		for j, qc := range qcols {
			col := targets[j]
			if err := checkGeneratedAlways(rel, col, s.Override); err != nil {
				return nil, err
			}
			ref := &plan.ColRef{Index: j, Typ: qc.Type, Name: qc.Name}
			if exprs[col], err = b.assign(ref, cols[col].Type, cols[col].Name, -1); err != nil {
				return nil, err
			}
		}
		ins.Rows = &plan.Project{Input: node, Exprs: exprs, Cols: cols}
	}
	if oc := s.OnConflictClause; oc != nil {
		if ins.OnConflict, err = b.onConflict(rel, alias, oc); err != nil {
			return nil, err
		}
	}
	if len(s.ReturningList) > 0 {
		if ins.Returning, err = b.returning(rel, alias, s.ReturningList); err != nil {
			return nil, err
		}
	}
	return ins, nil
}

func exprLocation(n *pg_query.Node) int32 {
	switch x := n.Node.(type) {
	case *pg_query.Node_AConst:
		return x.AConst.Location
	case *pg_query.Node_ColumnRef:
		return x.ColumnRef.Location
	case *pg_query.Node_ParamRef:
		return x.ParamRef.Location
	case *pg_query.Node_TypeCast:
		return x.TypeCast.Location
	case *pg_query.Node_FuncCall:
		return x.FuncCall.Location
	case *pg_query.Node_AExpr:
		return x.AExpr.Location
	}
	return -1
}

// onConflict binds ON CONFLICT; the conflict target must be the primary key.
func (b *binder) onConflict(rel *catalog.Relation, alias string, oc *pg_query.OnConflictClause) (*OnConflict, error) {
	if len(rel.PrimaryKey) == 0 {
		return nil, b.semantic("42P10", oc.Location, "there is no unique or exclusion constraint matching the ON CONFLICT specification")
	}
	if oc.Infer != nil {
		if oc.Infer.Conname != "" || oc.Infer.WhereClause != nil {
			return nil, b.unsupported(oc.Location, "ON CONFLICT ON CONSTRAINT / partial index inference")
		}
		var cols []int
		for _, e := range oc.Infer.IndexElems {
			ie := e.GetIndexElem()
			idx := rel.ColumnIndex(ie.Name)
			if idx < 0 {
				return nil, errcode.New(errcode.SQLUndefinedColumn, "column \"%s\" does not exist", ie.Name).WithPosition(b.pos(oc.Location))
			}
			cols = append(cols, idx)
		}
		if !sameSet(cols, rel.PrimaryKey) {
			return nil, b.semantic("42P10", oc.Location, "there is no unique or exclusion constraint matching the ON CONFLICT specification")
		}
	} else if oc.Action == pg_query.OnConflictAction_ONCONFLICT_UPDATE {
		return nil, b.semantic("42601", oc.Location, "ON CONFLICT DO UPDATE requires inference specification or constraint name")
	}
	out := &OnConflict{DoNothing: oc.Action == pg_query.OnConflictAction_ONCONFLICT_NOTHING, AnyConstraint: oc.Infer == nil}
	if out.DoNothing {
		return out, nil
	}
	cols := tableColumns(rel)
	sc := targetScope(rel, alias, cols)
	n := len(cols)
	for i, c := range cols {
		sc.cols = append(sc.cols, scopeCol{table: "excluded", name: c.Name, index: n + i, typ: c.Type, nullable: true, qualifiedOnly: true})
	}
	sc.tables = append(sc.tables, "excluded")
	var err error
	if out.Set, err = b.assignments(rel, oc.TargetList, sc); err != nil {
		return nil, err
	}
	if oc.WhereClause != nil {
		w, err := b.expr(oc.WhereClause, sc, exprCtx{clause: "WHERE"})
		if err != nil {
			return nil, err
		}
		if out.Where, err = b.coerceBool(w, "WHERE", -1); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func sameSet(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[int]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		m[x]--
		if m[x] < 0 {
			return false
		}
	}
	return true
}

// assignments binds SET col = expr lists.
func (b *binder) assignments(rel *catalog.Relation, list []*pg_query.Node, sc *scope) ([]Assignment, error) {
	var out []Assignment
	seen := map[int]bool{}
	for _, n := range list {
		rt := n.GetResTarget()
		if len(rt.Indirection) > 0 {
			return nil, b.unsupported(rt.Location, "assignment to subfields or array elements")
		}
		if _, isRow := rt.Val.Node.(*pg_query.Node_MultiAssignRef); isRow {
			return nil, b.unsupported(rt.Location, "multiple-column assignment (a, b) = (...)")
		}
		idx := rel.ColumnIndex(rt.Name)
		if idx < 0 {
			return nil, errcode.New(errcode.SQLUndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", rt.Name, rel.Name).WithPosition(b.pos(rt.Location))
		}
		if seen[idx] {
			return nil, b.semantic("42601", rt.Location, "multiple assignments to same column \"%s\"", rt.Name)
		}
		seen[idx] = true
		col := rel.Columns[idx]
		var v plan.Scalar
		var err error
		if _, isDefault := rt.Val.Node.(*pg_query.Node_SetToDefault); isDefault {
			v, err = b.defaultFor(rel, idx)
		} else {
			v, err = b.expr(rt.Val, sc, exprCtx{clause: "UPDATE"})
			if err == nil {
				v, err = b.assign(v, col.Type, col.Name, rt.Location)
			}
		}
		if err != nil {
			return nil, err
		}
		out = append(out, Assignment{Column: idx, Expr: v})
	}
	return out, nil
}

func (b *binder) returning(rel *catalog.Relation, alias string, list []*pg_query.Node) (*Returning, error) {
	return b.returningIn(targetScope(rel, alias, tableColumns(rel)), list)
}

// returningIn binds a RETURNING list over sc (the target's columns, then
// any FROM/USING columns).
func (b *binder) returningIn(sc *scope, list []*pg_query.Node) (*Returning, error) {
	r := &Returning{}
	for _, n := range list {
		rt := n.GetResTarget()
		if cr := rt.Val.GetColumnRef(); cr != nil && isStar(cr) {
			exprs, names, err := b.expandStar(cr, sc)
			if err != nil {
				return nil, err
			}
			for i, e := range exprs {
				r.Exprs = append(r.Exprs, e)
				r.Columns = append(r.Columns, plan.Column{Name: names[i], Type: e.Type(), Nullable: true})
			}
			continue
		}
		s, err := b.expr(rt.Val, sc, exprCtx{clause: "RETURNING"})
		if err != nil {
			return nil, err
		}
		if plan.HasSubquery(s) {
			return nil, b.unsupported(rt.Location, "subqueries in RETURNING")
		}
		if _, isParam := s.(*plan.Param); !isParam && s.Type().Kind == types.KindUnknown {
			if s, err = b.coerce(s, types.TText, rt.Location); err != nil {
				return nil, err
			}
		}
		name := rt.Name
		if name == "" {
			name = columnName(rt.Val)
		}
		r.Exprs = append(r.Exprs, s)
		r.Columns = append(r.Columns, plan.Column{Name: name, Type: s.Type(), Nullable: true})
	}
	return r, nil
}

// tableScan is the scan + scope of a DML target.
func (b *binder) tableScan(rel *catalog.Relation, alias string) (plan.Node, *scope) {
	cols := tableColumns(rel)
	return &plan.Scan{Relation: rel, Alias: alias, Cols: cols}, targetScope(rel, alias, cols)
}

// targetScope is the scope of a DML target: unaliased, its columns are
// reachable as schema.table.column too, and a FROM item of the same name
// in another schema may join it.
func targetScope(rel *catalog.Relation, alias string, cols []plan.Column) *scope {
	sc := relationScope(alias, cols, nil)
	if alias == rel.Name {
		sc.tables[0] = alias + "\x00" + rel.ID.String()
		for i := range sc.cols {
			sc.cols[i].schema = rel.SchemaName()
		}
	}
	return sc
}

// joinSources joins the target scan with the FROM items of UPDATE ... FROM
// or the USING items of DELETE ... USING (cross joins, filtered later by
// the WHERE), target columns first. The items cannot see the target (only
// LATERAL could, which is not supported), and a name may appear once: the
// target's own name (or alias) among them is 42712, as in PostgreSQL.
func (b *binder) joinSources(node plan.Node, sc *scope, items []*pg_query.Node) (plan.Node, *scope, error) {
	for _, item := range items {
		if rs := item.GetRangeSubselect(); rs != nil && rs.Lateral {
			return nil, nil, b.unsupported(-1, "LATERAL in UPDATE ... FROM and DELETE ... USING")
		}
		if rf := item.GetRangeFunction(); rf != nil && rf.Lateral {
			return nil, nil, b.unsupported(-1, "LATERAL in UPDATE ... FROM and DELETE ... USING")
		}
		n, s, err := b.fromItem(item, nil)
		if err != nil {
			return nil, nil, invalidReference(err, sc)
		}
		for _, t := range s.tables {
			if sc.conflicts(t) {
				return nil, nil, b.semantic("42712", -1, "table name \"%s\" specified more than once", tableName(t))
			}
		}
		node, sc = crossJoin(node, sc, n, s)
	}
	return node, sc, nil
}

// invalidReference rewords a FROM item's reference to the target (or an
// earlier item) as PostgreSQL does: the table is there, but this part of
// the statement cannot see it.
func invalidReference(err error, sc *scope) error {
	var e *errcode.Error
	if !errors.As(err, &e) || e.Code != errcode.SQLUndefinedTable {
		return err
	}
	for _, t := range sc.tables {
		t = tableName(t)
		if e.Message == fmt.Sprintf("missing FROM-clause entry for table \"%s\"", t) {
			out := errcode.New(errcode.SQLUndefinedTable, "invalid reference to FROM-clause entry for table \"%s\"", t).WithPosition(e.Position)
			out.Hint = fmt.Sprintf("There is an entry for table \"%s\", but it cannot be referenced from this part of the query.", t)
			return out
		}
	}
	return err
}

func (b *binder) where(node plan.Node, sc *scope, w *pg_query.Node) (plan.Node, error) {
	if w == nil {
		return node, nil
	}
	pred, err := b.expr(w, sc, exprCtx{clause: "WHERE"})
	if err != nil {
		return nil, err
	}
	if pred, err = b.coerceBool(pred, "WHERE", -1); err != nil {
		return nil, err
	}
	return &plan.Filter{Input: node, Pred: pred}, nil
}

func (b *binder) update(s *pg_query.UpdateStmt) (*Update, error) {
	if s.WithClause != nil {
		return nil, b.unsupported(s.WithClause.Location, "WITH in UPDATE")
	}
	rel, alias, err := b.targetTable(s.Relation)
	if err != nil {
		return nil, err
	}
	node, sc := b.tableScan(rel, alias)
	if node, sc, err = b.joinSources(node, sc, s.FromClause); err != nil {
		return nil, err
	}
	sets, err := b.assignments(rel, s.TargetList, sc)
	if err != nil {
		return nil, err
	}
	if node, err = b.where(node, sc, s.WhereClause); err != nil {
		return nil, err
	}
	cols := tableColumns(rel)
	exprs := plan.ColumnRefs(cols)
	newExprs := plan.ColumnRefs(cols)
	for _, a := range sets {
		newExprs[a.Column] = a.Expr
	}
	outCols := append(append([]plan.Column(nil), cols...), cols...)
	outExprs := append(exprs, newExprs...)
	// The FROM items' columns follow, for RETURNING.
	all := node.Schema()
	for i := len(cols); i < len(all); i++ {
		outExprs = append(outExprs, &plan.ColRef{Index: i, Typ: all[i].Type})
		outCols = append(outCols, all[i])
	}
	u := &Update{Table: rel, Rows: &plan.Project{Input: node, Exprs: outExprs, Cols: outCols}, From: len(s.FromClause) > 0}
	if len(s.ReturningList) > 0 {
		if u.Returning, err = b.returningIn(sc, s.ReturningList); err != nil {
			return nil, err
		}
	}
	return u, nil
}

func (b *binder) delete(s *pg_query.DeleteStmt) (*Delete, error) {
	if s.WithClause != nil {
		return nil, b.unsupported(s.WithClause.Location, "WITH in DELETE")
	}
	rel, alias, err := b.targetTable(s.Relation)
	if err != nil {
		return nil, err
	}
	node, sc := b.tableScan(rel, alias)
	if node, sc, err = b.joinSources(node, sc, s.UsingClause); err != nil {
		return nil, err
	}
	if node, err = b.where(node, sc, s.WhereClause); err != nil {
		return nil, err
	}
	d := &Delete{Table: rel, Rows: node, Using: len(s.UsingClause) > 0}
	if len(s.ReturningList) > 0 {
		if d.Returning, err = b.returningIn(sc, s.ReturningList); err != nil {
			return nil, err
		}
	}
	return d, nil
}
