package engine

import (
	"context"
	"sort"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/syscat/sysrel"
)

// Schemas and search_path. A session resolves an unqualified name through
// its search_path when a statement is bound (catalog.WithSearchPath), so
// a view binds to the relations it resolved at CREATE (its Refs hold
// their ids) whatever the path is later; DDL names resolve here before
// they reach the control plane, which knows relations by catalog.Key.
//
//	SET search_path TO a, public
//	CREATE TABLE t (...)   → a.t (the first schema of the path that exists)
//	SELECT * FROM t        → a.t, else public.t, else pg_catalog.t
//	SELECT * FROM s.t      → s.t; 3F000 if s does not exist (as a 42P01)

// searchPath is the session's search_path as the schemas that exist, in
// order ("$user" is the schema named as the session's user, if any).
func (s *session) searchPath(snap *control.Snapshot, settings *gateway.Settings) []string {
	raw := `"$user", public`
	if settings != nil {
		if v, ok := settings.Get("search_path"); ok {
			raw = v
		}
	}
	var out []string
	for _, name := range splitSearchPath(raw) {
		if name == "$user" {
			name = s.info.User
		}
		if _, ok := snap.Schema(name); ok && name != "" {
			out = append(out, name)
		}
	}
	return out
}

// splitSearchPath splits a search_path value as PostgreSQL does
// (SplitIdentifierString): comma-separated identifiers, folded to lower
// case unless double-quoted.
func splitSearchPath(v string) []string {
	var out []string
	var cur strings.Builder
	quoted, inQuote, any := false, false, false
	flush := func() {
		if any {
			name := cur.String()
			if !quoted {
				name = strings.ToLower(strings.TrimSpace(name))
			}
			out = append(out, name)
		}
		cur.Reset()
		quoted, any = false, false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"' && inQuote && i+1 < len(v) && v[i+1] == '"':
			cur.WriteByte('"')
			i++
		case c == '"':
			inQuote = !inQuote
			quoted, any = true, true
		case c == ',' && !inQuote:
			flush()
		case (c == ' ' || c == '\t' || c == '\n') && !inQuote:
		default:
			cur.WriteByte(c)
			any = true
		}
	}
	flush()
	return out
}

// resolveExisting resolves a DDL statement's name (catalog.Qualify form)
// of an object that should exist to its catalog.Key: a qualified name in
// its schema (3F000 when the schema does not exist), an unqualified one
// in the first schema of the search path that holds it. A name no schema
// holds keeps its first schema, for the control plane's "does not exist".
func (s *session) resolveExisting(snap *control.Snapshot, written string) (string, error) {
	schema, name := catalog.Split(written)
	if schema != "" {
		if _, ok := snap.Schema(schema); !ok {
			return "", schemaMissing(schema)
		}
		return catalog.Key(schema, name), nil
	}
	path := s.searchPath(snap, s.settings)
	for _, sc := range path {
		if _, ok := snap.LookupRelation([]string{sc, name}); ok {
			return catalog.Key(sc, name), nil
		}
	}
	return name, nil
}

// creationSchema resolves the name of an object a DDL statement creates:
// its schema (the first schema of the search path that exists when
// unqualified; 3F000 when none does) and its name.
func (s *session) creationSchema(snap *control.Snapshot, written string) (schema, name string, err error) {
	schema, name = catalog.Split(written)
	if schema != "" {
		if _, ok := snap.Schema(schema); !ok {
			return "", "", schemaMissing(schema)
		}
	} else {
		for _, sc := range s.searchPath(snap, s.settings) {
			if !sysrel.IsSystemSchema(sc) {
				schema = sc
				break
			}
		}
		if schema == "" {
			return "", "", errcode.New(errcode.UndefinedObject, "no schema has been selected to create in").WithSQLState("3F000")
		}
	}
	if sysrel.IsSystemSchema(schema) {
		return "", "", errcode.New(errcode.InsufficientPrivilege, "permission denied for schema %s", schema)
	}
	if schema == catalog.SchemaPublic {
		schema = ""
	}
	return schema, name, nil
}

// schemaMissing is PostgreSQL's 3F000.
func schemaMissing(name string) *errcode.Error {
	return errcode.New(errcode.UndefinedObject, "schema %q does not exist", name).WithSQLState("3F000")
}

// schemaDDL runs CREATE SCHEMA and DROP SCHEMA.
func (s *session) schemaDDL(ctx context.Context, st ddl.Statement, notice func(control.DDLResult), dropped func([]*catalog.Relation)) error {
	switch st := st.(type) {
	case *ddl.CreateSchema:
		r, err := s.control(ctx, control.CreateRelation{Relation: &catalog.Relation{Kind: catalog.KindSchema, Name: st.Name}, IfNotExists: st.IfNotExists})
		if err != nil {
			return err
		}
		notice(r)
	case *ddl.DropSchema:
		for _, name := range st.Names {
			r, err := s.control(ctx, control.DropSchema{Name: name, IfExists: st.IfExists, Cascade: st.Cascade})
			if err != nil {
				return err
			}
			notice(r)
			dropped(r.Dropped)
		}
	}
	return nil
}

// resolveDDL returns st with the names of existing objects resolved to
// their catalog.Key and, for a statement that creates a relation, its
// name unqualified and its schema ("" for public). st is the prepared
// statement's and is not changed (a later execution may run under another
// search_path).
func (s *session) resolveDDL(snap *control.Snapshot, st ddl.Statement) (ddl.Statement, string, error) {
	var err error
	key := func(name *string) {
		if err == nil {
			*name, err = s.resolveExisting(snap, *name)
		}
	}
	switch x := st.(type) {
	case *ddl.CreateTable:
		c := *x
		if c.LateRows != "" {
			key(&c.LateRows)
			if err != nil {
				return nil, "", err
			}
		}
		schema, name, err := s.creationSchema(snap, x.Name)
		c.Name = name
		return &c, schema, err
	case *ddl.CreateView:
		c := *x
		schema, name, err := s.creationSchema(snap, x.Name)
		c.Name = name
		return &c, schema, err
	case *ddl.CreateSequence:
		c := *x
		if c.OwnedByTable != "" {
			key(&c.OwnedByTable)
		}
		if err != nil {
			return nil, "", err
		}
		schema, name, err := s.creationSchema(snap, x.Name)
		c.Name = name
		return &c, schema, err
	case *ddl.Drop:
		c := *x
		c.Names = make([]string, len(x.Names))
		for i, n := range x.Names {
			c.Names[i] = n
			key(&c.Names[i])
		}
		return &c, "", err
	case *ddl.AddColumn:
		c := *x
		key(&c.Table)
		return &c, "", err
	case *ddl.AddPrimaryKey:
		c := *x
		key(&c.Table)
		return &c, "", err
	case *ddl.CreateIndex:
		c := *x
		key(&c.Table)
		return &c, "", err
	case *ddl.Rename:
		c := *x
		key(&c.Name)
		return &c, "", err
	case *ddl.Recompile:
		c := *x
		key(&c.Name)
		return &c, "", err
	case *ddl.SetViewOptions:
		c := *x
		key(&c.Name)
		return &c, "", err
	case *ddl.SetLateRows:
		c := *x
		key(&c.Name)
		if c.LateRows != "" {
			key(&c.LateRows)
		}
		return &c, "", err
	case *ddl.AlterSequence:
		c := *x
		key(&c.Name)
		return &c, "", err
	case *ddl.CreateSink:
		c := *x
		key(&c.View)
		return &c, "", err
	}
	return st, "", nil
}

// lookup resolves a name as the session's statements do (unqualified
// through the search_path).
func (s *session) lookup(snap *control.Snapshot, name []string) (*catalog.Relation, bool) {
	return catalog.WithSearchPath(snap, s.searchPath(snap, s.settings)).LookupRelation(name)
}

// viewDefinition is a view's definition as pg_get_viewdef shows it to
// this session: as written, with the schema put before each unqualified
// relation name that would not resolve to the same relation through the
// session's search_path (PostgreSQL qualifies exactly those), so the text
// still means what the view reads.
func (s *session) viewDefinition(snap *control.Snapshot, path []string) func(*catalog.Relation) string {
	cat := catalog.WithSearchPath(snap, path)
	return func(r *catalog.Relation) string {
		if len(r.Refs) == 0 {
			return r.SQL
		}
		tree, err := parse.PGParse(r.SQL)
		if err != nil || len(tree.Stmts) != 1 {
			return r.SQL
		}
		top := tree.Stmts[0].Stmt.ProtoReflect()
		ctes := map[string]bool{}
		var unqualified []*pg_query.RangeVar
		walkMessages(top, func(m protoreflect.Message) {
			switch x := m.Interface().(type) {
			case *pg_query.CommonTableExpr:
				ctes[x.Ctename] = true
			case *pg_query.RangeVar:
				if x.Schemaname == "" && x.Catalogname == "" {
					unqualified = append(unqualified, x)
				}
			}
		})
		type insert struct {
			at   int
			text string
		}
		var inserts []insert
		for _, rv := range unqualified {
			if ctes[rv.Relname] || rv.Location < 0 || int(rv.Location) > len(r.SQL) {
				continue
			}
			var id catalog.ID
			found := false
			for _, ref := range r.Refs {
				if len(ref.Name) == 1 && ref.Name[0] == rv.Relname {
					id, found = ref.ID, true
				}
			}
			if !found {
				continue
			}
			rel, ok := snap.RelationByID(id)
			if !ok || sysrel.IsSystem(id) {
				continue
			}
			if now, ok := cat.LookupRelation([]string{rv.Relname}); ok && now.ID == id {
				continue
			}
			inserts = append(inserts, insert{at: int(rv.Location), text: pgIdent(rel.SchemaName()) + "."})
		}
		if len(inserts) == 0 {
			return r.SQL
		}
		sort.Slice(inserts, func(i, j int) bool { return inserts[i].at > inserts[j].at })
		out := r.SQL
		for _, in := range inserts {
			out = out[:in.at] + in.text + out[in.at:]
		}
		return out
	}
}

// pgIdent quotes an identifier when PostgreSQL's quote_ident would (not a
// lower-case letter or underscore then lower-case letters, digits,
// underscores and dollars).
func pgIdent(s string) string {
	plain := s != ""
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || i > 0 && (c >= '0' && c <= '9' || c == '$')) {
			plain = false
		}
	}
	if plain {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
