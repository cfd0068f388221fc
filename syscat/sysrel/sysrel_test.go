package sysrel

import (
	"testing"

	"github.com/rockstream/rockstream/ivm/sql/catalog"
)

// TestIdentity: names are unique, ids are dense from 1 and below the first
// user object, and lookups agree with All.
func TestIdentity(t *testing.T) {
	seen := map[string]bool{}
	for i, rel := range All() {
		k := rel.Schema + "." + rel.Rel.Name
		if seen[k] {
			t.Fatalf("%s defined twice", k)
		}
		seen[k] = true
		if got := objectNumber(rel.Rel.ID); got != uint64(i+1) || got >= FirstUserObject {
			t.Fatalf("%s has object number %d, want %d (< %d)", k, got, i+1, FirstUserObject)
		}
		if len(rel.Rel.Columns) == 0 {
			t.Fatalf("%s has no columns", k)
		}
		if r, ok := Lookup([]string{rel.Schema, rel.Rel.Name}); !ok || r != rel.Rel {
			t.Fatalf("Lookup(%s) = %v, %v", k, r, ok)
		}
		if r, ok := ByID(rel.Rel.ID); !ok || r != rel.Rel || SchemaOf(rel.Rel.ID) != rel.Schema || !IsSystem(rel.Rel.ID) {
			t.Fatalf("ByID/SchemaOf/IsSystem disagree for %s", k)
		}
	}
	// Unqualified names resolve in pg_catalog, as PostgreSQL's search_path.
	if r, ok := Lookup([]string{"tables"}); ok {
		t.Fatalf("unqualified tables resolved to %v; only pg_catalog is implicit", r.Name)
	}
	if r, ok := Lookup([]string{"pg_class"}); !ok || SchemaOf(r.ID) != SchemaPgCatalog {
		t.Fatalf("unqualified pg_class did not resolve in pg_catalog")
	}
	var user catalog.ID
	user.Object[15], user.Object[14] = 0xe8, 0x03 // object 1000
	if IsSystem(user) || SchemaOf(user) != SchemaPublic {
		t.Fatalf("a user id counts as system")
	}
}

func objectNumber(id catalog.ID) uint64 {
	var n uint64
	for _, b := range id.Object[8:] {
		n = n<<8 | uint64(b)
	}
	return n
}
