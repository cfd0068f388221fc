package control

import (
	"testing"

	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// TestSnapshotIndexes: Indexes lists a table's indexes in creation order,
// follows puts (a rename replaces, not adds) and removes on a clone, and
// leaves the snapshot cloned from unchanged.
func TestSnapshotIndexes(t *testing.T) {
	table := &catalog.Relation{Kind: catalog.KindTable, Name: "t", PrimaryKey: []int{0}, Columns: []catalog.Column{{Name: "k", Type: types.TInt8}}}
	other := &catalog.Relation{Kind: catalog.KindTable, Name: "o", Columns: []catalog.Column{{Name: "k", Type: types.TInt8}}}
	s := NewSnapshot(catalog.NamespaceID{}, 1, table, other)
	index := func(name string, on catalog.ID) *catalog.Relation {
		return &catalog.Relation{Kind: catalog.KindIndex, Name: name, Index: &catalog.Index{Table: on, Columns: []catalog.IndexColumn{{Column: "k"}}}}
	}
	a, b := index("a", table.ID), index("b", table.ID)
	for _, r := range []*catalog.Relation{b, a, index("c", other.ID)} {
		r.ID = objectID(s.namespace, s.NextObject)
		s.NextObject++
		s.put(r, nil)
	}
	names := func(rs []*catalog.Relation) (out []string) {
		for _, r := range rs {
			out = append(out, r.Name)
		}
		return out
	}
	if got := names(s.Indexes(table.ID)); len(got) != 2 || got[0] != "b" || got[1] != "a" {
		t.Fatalf("indexes of t: %v, want [b a] (creation order)", got)
	}
	next := s.clone()
	renamed := *a
	renamed.Name = "a2"
	next.put(&renamed, nil)
	next.remove(b.ID)
	if got := names(next.Indexes(table.ID)); len(got) != 1 || got[0] != "a2" {
		t.Fatalf("after a rename and a drop: %v, want [a2]", got)
	}
	next.remove(a.ID)
	if got := next.Indexes(table.ID); got != nil || len(next.indexCount) != 1 {
		t.Fatalf("after dropping both: %v (counts %v)", names(got), next.indexCount)
	}
	if got := names(s.Indexes(table.ID)); len(got) != 2 {
		t.Fatalf("the snapshot cloned from changed: %v", got)
	}
	if got := names(SnapshotOf(s.Value()).Indexes(table.ID)); len(got) != 2 {
		t.Fatalf("through a value: %v", got)
	}
}
