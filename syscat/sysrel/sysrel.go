// Package sysrel is the identity of RockStream's system relations: their
// schemas, names, columns and fixed ids. It is what binding a query needs to
// resolve `pg_catalog.pg_class` or `rockstream_catalog.views` to a relation,
// and all the control actor's catalog snapshot needs.
//
// The rows of those relations (the pg_catalog and information_schema
// compatibility data generated from the catalog and a session) are not here:
// package syscat generates them, keyed by the identities defined here. The
// split keeps the control actor, part of the deterministic core, from linking
// the compatibility layer.
//
// Walkthrough:
//
//	rel, ok := sysrel.Lookup([]string{"pg_class"})  // unqualified: pg_catalog
//	sysrel.IsSystem(rel.ID)                          // true: id below FirstUserObject
//	sysrel.SchemaOf(rel.ID)                          // "pg_catalog"
package sysrel

import (
	"sync"

	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// Schema names of the system relations.
const (
	SchemaPgCatalog  = "pg_catalog"
	SchemaInfo       = "information_schema"
	SchemaRockStream = "rockstream_catalog"
	SchemaPublic     = "public"
)

// FirstUserObject is the lowest object number user relations get; system
// relations live below it.
const FirstUserObject = 1000

// Relation is one system relation's identity.
type Relation struct {
	Schema string
	// Rel is shared by every caller and must not be modified.
	Rel *catalog.Relation
}

// registry holds every system relation, by schema-qualified name and by id.
type registry struct {
	byName map[string]Relation
	byID   map[catalog.ID]Relation
	all    []Relation
}

func key(schema, name string) string { return schema + "." + name }

// columns builds a column list from "name type" pairs.
func columns(pairs ...any) []catalog.Column {
	var out []catalog.Column
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, catalog.Column{Name: pairs[i].(string), Type: pairs[i+1].(types.Type)})
	}
	return out
}

func newRegistry(relations []Relation) *registry {
	r := &registry{byName: map[string]Relation{}, byID: map[catalog.ID]Relation{}}
	for i, rel := range relations {
		var obj catalog.ObjectID
		n := uint64(i + 1)
		for b := 0; b < 8; b++ {
			obj[15-b] = byte(n >> (8 * b))
		}
		rel.Rel.ID = catalog.ID{Object: obj}
		rel.Rel.Kind = catalog.KindTable
		rel.Rel.Schema = rel.Schema
		// INVARIANT: system ids stay below user ids.
		if n >= FirstUserObject {
			panic("sysrel: too many system relations")
		}
		r.byName[key(rel.Schema, rel.Rel.Name)] = rel
		r.byID[rel.Rel.ID] = rel
		r.all = append(r.all, rel)
	}
	return r
}

var (
	registryOnce sync.Once
	theRegistry  *registry
)

// relations builds the registry on first use; it is never modified after.
func relations() *registry {
	registryOnce.Do(func() { theRegistry = newRegistry(definitions()) })
	return theRegistry
}

// Lookup resolves a (possibly qualified, folded) name to a system relation.
// Unqualified names resolve in pg_catalog, as PostgreSQL's implicit
// search_path does.
func Lookup(name []string) (*catalog.Relation, bool) {
	var rel Relation
	var ok bool
	switch len(name) {
	case 1:
		rel, ok = relations().byName[key(SchemaPgCatalog, name[0])]
	case 2:
		rel, ok = relations().byName[key(name[0], name[1])]
	}
	if !ok {
		return nil, false
	}
	return rel.Rel, true
}

// IsSystemSchema reports whether name is a system schema (pg_catalog,
// information_schema, rockstream_catalog).
func IsSystemSchema(name string) bool {
	return name == SchemaPgCatalog || name == SchemaInfo || name == SchemaRockStream
}

// IsSystem reports whether id is a system relation.
func IsSystem(id catalog.ID) bool {
	_, ok := relations().byID[id]
	return ok
}

// ByID returns a system relation.
func ByID(id catalog.ID) (*catalog.Relation, bool) {
	rel, ok := relations().byID[id]
	if !ok {
		return nil, false
	}
	return rel.Rel, true
}

// SchemaOf returns the schema a system relation lives in (public for any
// other id).
func SchemaOf(id catalog.ID) string {
	if rel, ok := relations().byID[id]; ok {
		return rel.Schema
	}
	return SchemaPublic
}

// All lists the system relations in id order.
func All() []Relation { return relations().all }
