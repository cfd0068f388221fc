package engine

import (
	"context"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/errcode"
	rsql "github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/syscat/sysrel"
)

// Table privileges for sessions whose role is not a superuser. What a
// statement needs is read from its parse tree, not from its plan, because
// the binder inlines views: a role granted SELECT on a view may read it
// without any privilege on the tables under it (the view's owner, the
// bootstrap superuser, has them), exactly as in PostgreSQL.
//
// Every relation is owned by a superuser: only superusers run DDL (a
// non-superuser's CREATE fails as PostgreSQL 15's does without CREATE on
// schema public), so "owners bypass" is "superusers bypass".

// relationNeed is one privilege a statement needs on a named relation.
type relationNeed struct {
	name []string
	priv control.Privileges
}

// statementNeeds lists the privileges one statement's text needs; nil for
// statements that read or write no relation.
func statementNeeds(sqlText string) []relationNeed {
	stmts, err := parse.Parse(sqlText)
	if err != nil {
		// Compile reports the error itself.
		return nil
	}
	return parsedNeeds(stmts)
}

// parsedNeeds is statementNeeds of the parsed statement text.
func parsedNeeds(stmts []parse.Statement) []relationNeed {
	if len(stmts) != 1 {
		// Compile reports the statement count itself.
		return nil
	}
	switch st := stmts[0].(type) {
	case *parse.Subscribe:
		return []relationNeed{{name: st.Name, priv: control.PrivSelect}}
	case *parse.ExplainIncremental:
		if st.Query != nil {
			return pgNeeds(st.Query.Stmt)
		}
		return []relationNeed{{name: st.Name, priv: control.PrivSelect}}
	case *parse.PG:
		return pgNeeds(st.Stmt)
	}
	return nil
}

// pgNeeds walks a PostgreSQL parse tree: the target of INSERT, UPDATE and
// DELETE needs that privilege (and SELECT when the statement reads its
// columns); every other relation the statement names needs SELECT.
func pgNeeds(n *pg_query.Node) []relationNeed {
	var out []relationNeed
	target := func(rv *pg_query.RangeVar, p control.Privileges) {
		if rv != nil {
			out = append(out, relationNeed{name: rangeVarName(rv), priv: p})
		}
	}
	var top protoreflect.Message
	switch x := n.Node.(type) {
	case *pg_query.Node_InsertStmt:
		st := x.InsertStmt
		p := control.PrivInsert
		if oc := st.OnConflictClause; oc != nil && oc.Action == pg_query.OnConflictAction_ONCONFLICT_UPDATE {
			p |= control.PrivUpdate
		}
		if len(st.ReturningList) > 0 {
			p |= control.PrivSelect
		}
		target(st.Relation, p)
		top = st.ProtoReflect()
	case *pg_query.Node_UpdateStmt:
		st := x.UpdateStmt
		p := control.PrivUpdate
		if st.WhereClause != nil || len(st.ReturningList) > 0 || readsColumns(st.TargetList) {
			p |= control.PrivSelect
		}
		target(st.Relation, p)
		top = st.ProtoReflect()
	case *pg_query.Node_DeleteStmt:
		st := x.DeleteStmt
		p := control.PrivDelete
		if st.WhereClause != nil || len(st.ReturningList) > 0 {
			p |= control.PrivSelect
		}
		target(st.Relation, p)
		top = st.ProtoReflect()
	case *pg_query.Node_ExplainStmt:
		return pgNeeds(x.ExplainStmt.Query)
	case *pg_query.Node_SelectStmt:
		top = x.SelectStmt.ProtoReflect()
	default:
		return nil
	}
	ctes := map[string]bool{}
	walkMessages(top, func(m protoreflect.Message) {
		if c, ok := m.Interface().(*pg_query.CommonTableExpr); ok {
			ctes[c.Ctename] = true
		}
	})
	top.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Name() == "relation" {
			return true // the target, handled above
		}
		walkValue(fd, v, func(m protoreflect.Message) {
			rv, ok := m.Interface().(*pg_query.RangeVar)
			if !ok || (rv.Schemaname == "" && ctes[rv.Relname]) {
				return
			}
			out = append(out, relationNeed{name: rangeVarName(rv), priv: control.PrivSelect})
		})
		return true
	})
	return out
}

func rangeVarName(rv *pg_query.RangeVar) []string {
	if rv.Schemaname != "" {
		return []string{rv.Schemaname, rv.Relname}
	}
	return []string{rv.Relname}
}

// readsColumns reports whether an UPDATE's SET list reads any column
// (SET a = a + 1 needs SELECT; SET a = 1 does not).
func readsColumns(targets []*pg_query.Node) bool {
	found := false
	for _, t := range targets {
		walkMessages(t.ProtoReflect(), func(m protoreflect.Message) {
			if _, ok := m.Interface().(*pg_query.ColumnRef); ok {
				found = true
			}
		})
	}
	return found
}

// walkMessages calls fn on m and every message below it.
func walkMessages(m protoreflect.Message, fn func(protoreflect.Message)) {
	fn(m)
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		walkValue(fd, v, fn)
		return true
	})
}

func walkValue(fd protoreflect.FieldDescriptor, v protoreflect.Value, fn func(protoreflect.Message)) {
	if fd.Kind() != protoreflect.MessageKind {
		return
	}
	if fd.IsList() {
		l := v.List()
		for i := 0; i < l.Len(); i++ {
			walkMessages(l.Get(i).Message(), fn)
		}
		return
	}
	if fd.IsMap() {
		return // pg_query trees have no maps
	}
	walkMessages(v.Message(), fn)
}

// checkPrivileges refuses a statement the session's role may not run
// (42501). Superusers and trusted sessions pass without a look-up. Roles
// are read per statement, so a REVOKE applies to the next statement of
// every session.
func (s *session) checkPrivileges(ctx context.Context, snap *control.Snapshot, p *prepared) error {
	if !s.info.Unprivileged {
		return nil
	}
	switch st := p.stmt.(type) {
	case *rsql.DDL:
		return ddlDenied(st.Stmt)
	case *rsql.Truncate:
		// TRUNCATE is its own privilege, which this server does not grant.
		return errcode.New(errcode.InsufficientPrivilege, "permission denied for table %s", st.Deletes[0].Table.Name)
	}
	return s.checkNeeds(ctx, snap, p.needs)
}

func (s *session) checkNeeds(ctx context.Context, snap *control.Snapshot, needs []relationNeed) error {
	if !s.info.Unprivileged || len(needs) == 0 {
		return nil
	}
	var role control.Role
	loaded := false
	for _, n := range needs {
		if len(n.name) == 2 && n.name[0] == "pg_catalog" && n.name[1] == "pg_authid" || len(n.name) == 1 && n.name[0] == "pg_authid" {
			// pg_authid holds the verifiers: superusers only, as in
			// PostgreSQL (pg_roles shows the same without them).
			return errcode.New(errcode.InsufficientPrivilege, "permission denied for table pg_authid")
		}
		rel, ok := s.lookup(snap, n.name)
		if !ok {
			continue // the binder reports it
		}
		if _, system := sysrel.ByID(rel.ID); system {
			// System relations are readable by every role.
			continue
		}
		if !loaded {
			m, err := s.e.ask(ctx, control.ActorID, control.GetRole{Name: s.info.User})
			if err != nil {
				return err
			}
			role, loaded = m.(control.RoleLookup).Role, true
		}
		if role.Privileges(rel.ID)&n.priv != n.priv {
			return errcode.New(errcode.InsufficientPrivilege, "permission denied for %s %s", privilegeObject(rel.Kind), rel.Name)
		}
	}
	return nil
}

// privilegeObject is the object word of PostgreSQL's "permission denied
// for ..." (views and materialized views are reported as such; a source is
// a table to clients).
func privilegeObject(k catalog.Kind) string {
	if k == catalog.KindSource {
		return "table"
	}
	return k.String()
}

// ddlDenied is PostgreSQL 15's refusal of DDL by a role that owns nothing
// and has no CREATE on schema public.
func ddlDenied(st ddl.Statement) error {
	deny := func(format string, args ...any) error {
		return errcode.New(errcode.InsufficientPrivilege, format, args...)
	}
	switch x := st.(type) {
	case *ddl.Drop:
		kind := map[ddl.DropKind]string{ddl.DropTable: "table", ddl.DropView: "view", ddl.DropMaterializedView: "materialized view",
			ddl.DropSource: "source", ddl.DropSequence: "sequence", ddl.DropSink: "sink", ddl.DropIndex: "index"}[x.Kind]
		name := ""
		if len(x.Names) > 0 {
			name = x.Names[0]
		}
		return deny("must be owner of %s %s", kind, name)
	case *ddl.AddColumn:
		return deny("must be owner of table %s", x.Table)
	case *ddl.AddPrimaryKey:
		return deny("must be owner of table %s", x.Table)
	case *ddl.CreateIndex:
		return deny("must be owner of table %s", x.Table)
	case *ddl.AlterSequence:
		return deny("must be owner of sequence %s", x.Name)
	}
	return deny("permission denied for schema public")
}
