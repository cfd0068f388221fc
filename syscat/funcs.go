package syscat

import (
	"strings"

	"github.com/rockstream/rockstream/internal/version"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
)

// Info answers the catalog functions (expr.CatalogInfo) from the system
// environment, built on first use by get (only queries that call such a
// function pay for it).
func Info(get func() (*Env, error)) expr.CatalogInfo { return &info{get: get} }

type info struct {
	get  func() (*Env, error)
	env  *Env
	done bool
}

func (i *info) load() *Env {
	if !i.done {
		i.done = true
		if env, err := i.get(); err == nil {
			i.env = env
		}
	}
	return i.env
}

// relation finds a user relation by pg_class oid; index tells whether oid
// named its primary-key index.
func (i *info) relation(oid int64, offset int64) *catalog.Relation {
	env := i.load()
	if env == nil {
		return nil
	}
	for _, r := range env.Relations {
		if RelationOID(r.ID)+offset == oid {
			return r
		}
	}
	return nil
}

func (i *info) UserName(oid int64) (string, bool) {
	env := i.load()
	if env == nil {
		return "", false
	}
	for _, r := range env.Roles {
		if r.OID == oid {
			return r.Name, true
		}
	}
	if oid == ownerOID {
		return userName(env), true
	}
	return "", false
}

func (i *info) IndexDef(oid int64) (string, bool) {
	if r := i.relation(oid, indexOIDOffset); r != nil && len(r.PrimaryKey) > 0 {
		return IndexDef(r), true
	}
	if r := i.relation(oid, 0); r != nil && r.Kind == catalog.KindIndex {
		for _, ix := range userIndexes(i.load()) {
			if ix.index == r {
				return ix.def(), true
			}
		}
	}
	return "", false
}

func (i *info) ConstraintDef(oid int64) (string, bool) {
	if r := i.relation(oid, constraintOIDOffset); r != nil && len(r.PrimaryKey) > 0 {
		return ConstraintDef(r), true
	}
	return "", false
}

func (i *info) ViewDef(oid int64) (string, bool) {
	if r := i.relation(oid, 0); r != nil && r.SQL != "" {
		return viewDef(i.load(), r), true
	}
	return "", false
}

func (i *info) ViewDefByName(name string) (string, bool) {
	env := i.load()
	if env == nil {
		return "", false
	}
	schema, rel := "", name
	if i := strings.IndexByte(name, '.'); i >= 0 {
		schema, rel = name[:i], name[i+1:]
	}
	for _, r := range env.Relations {
		if r.Name == rel && r.SQL != "" && (schema == "" && visibleSchema(env, r.SchemaName()) || r.SchemaName() == schema) {
			return viewDef(env, r), true
		}
	}
	return "", false
}

// viewDef is a view's definition as the session sees it
// (Env.ViewDefinition).
func viewDef(env *Env, r *catalog.Relation) string {
	if env != nil && env.ViewDefinition != nil {
		return env.ViewDefinition(r)
	}
	return r.SQL
}

// visibleSchema reports whether schema is on the session's search path.
func visibleSchema(env *Env, schema string) bool {
	if env == nil || env.SearchPath == nil {
		return schema == SchemaPublic
	}
	for _, s := range env.SearchPath {
		if s == schema {
			return true
		}
	}
	return false
}

// TableVisible: pg_catalog relations are visible, information_schema and
// rockstream_catalog ones are not (unless on the search path), and a user
// relation is when its schema is on the session's search_path and no
// schema before it holds the same name.
func (i *info) TableVisible(oid int64) bool {
	if oid < firstNormalOID {
		for _, t := range All() {
			if RelationOID(t.Rel.ID) == oid {
				return t.Schema == SchemaPgCatalog
			}
		}
	}
	r := i.relation(oid, 0)
	if r == nil {
		return true
	}
	env := i.load()
	if env.SearchPath == nil {
		return r.SchemaName() == SchemaPublic
	}
	for _, s := range env.SearchPath {
		for _, o := range env.Relations {
			if o.Name == r.Name && o.SchemaName() == s {
				return o == r
			}
		}
	}
	return false
}

func (i *info) CurrentUser() string {
	if env := i.load(); env != nil && env.User != "" {
		return env.User
	}
	return "rockstream"
}

func (i *info) Database() string {
	if env := i.load(); env != nil {
		return databaseName(env)
	}
	return "default"
}

func (i *info) Version() string { return version.Full }

// RelationName implements expr.RelationNamer (regclass output): the
// relation's quoted name, qualified by its schema unless pg_catalog or
// public makes it visible.
func (i *info) RelationName(oid int64) (string, bool) {
	if oid < firstNormalOID {
		for _, t := range All() {
			if RelationOID(t.Rel.ID) == oid {
				if t.Schema == SchemaPgCatalog {
					return quoteIdent(t.Rel.Name), true
				}
				return quoteIdent(t.Schema) + "." + quoteIdent(t.Rel.Name), true
			}
		}
		return "", false
	}
	if r := i.relation(oid, 0); r != nil {
		if i.TableVisible(oid) {
			return quoteIdent(r.Name), true
		}
		return quoteIdent(r.SchemaName()) + "." + quoteIdent(r.Name), true
	}
	return "", false
}
