// Package catalog is the compiler's read-only view of the catalog: the
// tables, inline views, materialized views and sources of one namespace.
// The control plane owns and implements it (spec §5.2); Memory is a plain
// in-memory implementation for tests and tools.
//
// Names are resolved inside the session's namespace: a namespace is like a
// PostgreSQL database, with no schema layer inside it, so `public.t` and
// `t` name the same relation.
package catalog

import (
	"fmt"
	"strings"

	"github.com/rockstream/rockstream/ivm/types"
)

// NamespaceID identifies a namespace (16 bytes in catalog keys, spec §5.2).
// The default namespace is the zero ID.
type NamespaceID [16]byte

// ObjectID identifies a catalog object inside its namespace (16 bytes).
type ObjectID [16]byte

// ID is a namespace-scoped object id: references between objects (a view's
// plan naming its input tables) are by ID, never by name.
type ID struct {
	Namespace NamespaceID
	Object    ObjectID
}

// String renders the id compactly (hex of the object part, namespace
// elided when default).
func (id ID) String() string {
	obj := strings.TrimLeft(fmt.Sprintf("%x", id.Object[:]), "0")
	if obj == "" {
		obj = "0"
	}
	if id.Namespace == (NamespaceID{}) {
		return obj
	}
	return fmt.Sprintf("%x/%s", id.Namespace[:], obj)
}

// Kind is the kind of a relation.
type Kind uint8

// Relation kinds.
const (
	KindTable Kind = iota + 1
	// KindView is an inline view (CREATE VIEW): expanded at compile time.
	KindView
	// KindMaterializedView is maintained by the IVM engine; queries read its
	// output like a table.
	KindMaterializedView
	// KindSource is a connector source (e.g. GENERATE ROWS): append-only.
	KindSource
)

func (k Kind) String() string {
	switch k {
	case KindTable:
		return "table"
	case KindView:
		return "view"
	case KindMaterializedView:
		return "materialized view"
	case KindSource:
		return "source"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Column is one column of a relation.
type Column struct {
	Name    string
	Type    types.Type
	NotNull bool
	// Default is the DEFAULT expression as SQL text; "" when none (NULL).
	Default string
}

// Relation is a table, view, materialized view or source.
type Relation struct {
	ID   ID
	Kind Kind
	Name string
	// Columns is the output schema (for inline views: as of their creation).
	Columns []Column
	// PrimaryKey lists column indexes of the primary key (tables); empty for
	// INSERT_ONLY tables, sources and views.
	PrimaryKey []int
	// InsertOnly marks tables created WITH (insert_only = true) and sources:
	// rows are never updated or deleted, so no key is needed.
	InsertOnly bool
	// SQL is the defining query of a view or materialized view.
	SQL string
	// Checks are a table's CHECK constraints.
	Checks []Check
}

// Check is a CHECK constraint: a boolean expression over the table's
// columns that every row must not make false.
type Check struct {
	Name string
	// Expr is the expression as SQL text.
	Expr string
}

// ColumnIndex returns the index of the column named name, or -1.
func (r *Relation) ColumnIndex(name string) int {
	for i, c := range r.Columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// Catalog is what the compiler reads. Implementations must be safe to read
// for the duration of one compilation (a consistent snapshot).
type Catalog interface {
	// Namespace is the namespace names resolve in.
	Namespace() NamespaceID
	// LookupRelation resolves a possibly qualified, already case-folded name
	// (["t"] or ["public", "t"]); ok is false when it does not exist.
	LookupRelation(name []string) (rel *Relation, ok bool)
	// RelationByID returns a relation by id.
	RelationByID(id ID) (rel *Relation, ok bool)
}
