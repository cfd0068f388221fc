package control

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/syscat/sysrel"
)

// Schemas (CREATE SCHEMA) are catalog objects of KindSchema; a relation
// names its schema by name (Relation.Schema, "" for public). public and
// the system schemas exist without an object and cannot be dropped.
//
//	CREATE SCHEMA s             → KindSchema "s"
//	CREATE TABLE s.t (...)      → table t, Schema "s", Key "s.t"
//	DROP SCHEMA s               → 2BP01 while s holds objects
//	DROP SCHEMA s CASCADE       → drops s's objects, what depends on them, then s

// DropSchema → DDLResult (DROP SCHEMA [IF EXISTS] name [CASCADE]).
type DropSchema struct {
	Name     string
	IfExists bool
	Cascade  bool
}

// schemaNotFound is PostgreSQL's 3F000 for a schema that does not exist.
func schemaNotFound(name string) *errcode.Error {
	return errcode.New(errcode.UndefinedObject, "schema %q does not exist", name).WithSQLState("3F000")
}

func (a *Actor) createSchema(m CreateRelation) (DDLResult, error) {
	rel := m.Relation
	if strings.HasPrefix(rel.Name, "pg_") {
		return DDLResult{}, errcode.New(errcode.InvalidSchemaName, "unacceptable schema name %q", rel.Name).
			WithDetail("The prefix \"pg_\" is reserved for system schemas.")
	}
	if _, ok := a.snap.Schema(rel.Name); ok {
		if m.IfNotExists {
			return DDLResult{Version: a.snap.Version, Notice: fmt.Sprintf("schema %q already exists, skipping", rel.Name)}, nil
		}
		return DDLResult{}, errcode.New(errcode.DuplicateObject, "schema %q already exists", rel.Name).WithSQLState("42P06")
	}
	next := a.snap.clone()
	created := catalog.Relation{Kind: catalog.KindSchema, Name: rel.Name}
	created.ID = objectID(next.namespace, next.NextObject)
	next.NextObject++
	next.put(&created, nil)
	if err := a.commit(next, []*catalog.Relation{&created}, nil); err != nil {
		return DDLResult{}, err
	}
	return DDLResult{Version: next.Version, Changed: &created}, nil
}

func (a *Actor) dropSchema(m DropSchema) (DDLResult, error) {
	schema, ok := a.snap.Schema(m.Name)
	if ok && schema == nil {
		if sysrel.IsSystemSchema(m.Name) {
			return DDLResult{}, errcode.New(errcode.DependentObjects, "cannot drop schema %s because it is required by the database system", m.Name)
		}
		// public: RockStream keeps it (every namespace has it).
		return DDLResult{}, errcode.New(errcode.SchemasNotSupported, "RockStream does not support dropping schema public").
			WithDetail("Every namespace has a public schema; drop the objects in it instead.")
	}
	if !ok {
		if m.IfExists {
			return DDLResult{Version: a.snap.Version, Notice: fmt.Sprintf("schema %q does not exist, skipping", m.Name)}, nil
		}
		return DDLResult{}, schemaNotFound(m.Name)
	}
	members := a.snap.InSchema(m.Name)
	if len(members) > 0 && !m.Cascade {
		lines := make([]string, 0, len(members))
		for _, r := range members {
			if r.Kind == catalog.KindIndex || (r.Kind == catalog.KindSequence && r.Sequence.OwnedBy != (catalog.ID{})) {
				continue // PostgreSQL lists what owns them only
			}
			lines = append(lines, fmt.Sprintf("%s %s depends on schema %s", r.Kind, schemaQualified(r), m.Name))
		}
		e := errcode.New(errcode.DependentObjects, "cannot drop schema %s because other objects depend on it", m.Name).
			WithDetail("%s", strings.Join(lines, "\n"))
		e.Hint = dropCascadeHint
		return DDLResult{}, e
	}
	// Everything in the schema goes, and everything that depends on it
	// (views elsewhere reading its tables), dependents first.
	seen := map[catalog.ID]bool{}
	var order []*catalog.Relation
	add := func(rs []*catalog.Relation) {
		for _, r := range rs {
			if !seen[r.ID] {
				seen[r.ID] = true
				order = append(order, r)
			}
		}
	}
	// A table that only calls a dropped sequence in a DEFAULT stays (it
	// loses the default below); everything else that depends on a member
	// goes, dependents first.
	var visit func(r *catalog.Relation)
	visited := map[catalog.ID]bool{}
	visit = func(r *catalog.Relation) {
		visited[r.ID] = true
		for _, d := range a.snap.Dependents(r.ID) {
			if visited[d.ID] || (r.Kind == catalog.KindSequence && d.Kind == catalog.KindTable && d.SchemaName() != m.Name) {
				continue
			}
			visit(d)
		}
		add([]*catalog.Relation{r})
	}
	for i := len(members) - 1; i >= 0; i-- {
		if !visited[members[i].ID] {
			visit(members[i])
		}
	}
	add(ownedSequences(a.snap, order))
	add(ownedIndexes(a.snap, order))
	if err := a.checkDropLateRows(order); err != nil {
		return DDLResult{}, err
	}
	next := a.snap.clone()
	var changedIDs []catalog.ID
	for _, r := range order {
		if r.Kind != catalog.KindSequence {
			continue
		}
		// A table outside the schema whose default calls a dropped
		// sequence loses that default (PostgreSQL drops the default).
		_, users := sequenceUsers(a.snap, r)
		for _, u := range users {
			if seen[u.ID] {
				continue
			}
			cur := next.byID[u.ID]
			next.put(withoutSequenceDefaults(cur, r), without(next.deps[u.ID], r.ID))
			if !slices.Contains(changedIDs, u.ID) {
				changedIDs = append(changedIDs, u.ID)
			}
		}
	}
	puts := make([]*catalog.Relation, len(changedIDs))
	for i, id := range changedIDs {
		puts[i] = next.byID[id]
	}
	for _, r := range order {
		next.remove(r.ID)
		delete(a.sequences, r.ID)
	}
	next.remove(schema.ID)
	notice := ""
	switch len(order) {
	case 0:
	case 1:
		notice = fmt.Sprintf("drop cascades to %s %s", order[0].Kind, schemaQualified(order[0]))
	default:
		notice = fmt.Sprintf("drop cascades to %d other objects", len(order))
	}
	if err := a.commit(next, puts, append(append([]*catalog.Relation(nil), order...), schema)); err != nil {
		return DDLResult{}, err
	}
	return DDLResult{Version: next.Version, Dropped: order, Notice: notice}, nil
}

// schemaQualified is schema.name, as PostgreSQL names objects in a DROP
// SCHEMA's messages.
func schemaQualified(r *catalog.Relation) string { return r.SchemaName() + "." + r.Name }
