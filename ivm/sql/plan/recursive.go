package plan

import (
	"encoding/binary"

	"github.com/rockstream/rockstream/ivm/sql/catalog"
)

// RecursiveUnion is a WITH RECURSIVE common table expression: Init's rows,
// then Step run again and again over the rows the previous round added
// (Step reads them by scanning Work, the working table) until a round adds
// none. UNION (All = false) drops rows already produced. Ad-hoc execution
// evaluates it into constant rows before the circuit is built; views
// run it with the fixpoint operator (op.Recursive, built by incr).
type RecursiveUnion struct {
	Work       *catalog.Relation
	Init, Step Node
	All        bool
	Cols       []Column
}

func (r *RecursiveUnion) Schema() []Column { return r.Cols }
func (r *RecursiveUnion) Inputs() []Node   { return []Node{r.Init, r.Step} }
func (r *RecursiveUnion) WithInputs(in []Node) Node {
	s := *r
	s.Init, s.Step = in[0], in[1]
	return &s
}
func (r *RecursiveUnion) Describe() string {
	if r.All {
		return "RecursiveUnion ALL " + r.Work.Name
	}
	return "RecursiveUnion " + r.Work.Name
}

// workTableNamespace marks the relation ids of working tables: no catalog
// object lives in it.
//
//lint:immutable a constant namespace id.
var workTableNamespace = catalog.NamespaceID{0xff, 'w', 'o', 'r', 'k', 't', 'a', 'b', 'l', 'e'}

// WorkTable makes the working table of a recursive CTE; n distinguishes
// the working tables of one statement.
func WorkTable(name string, cols []Column, n uint64) *catalog.Relation {
	rel := &catalog.Relation{Kind: catalog.KindTable, Name: name, ID: catalog.ID{Namespace: workTableNamespace}}
	binary.BigEndian.PutUint64(rel.ID.Object[8:], n)
	for _, c := range cols {
		rel.Columns = append(rel.Columns, catalog.Column{Name: c.Name, Type: c.Type})
	}
	return rel
}

// IsWorkTable reports whether rel is a recursive CTE's working table
// (read from the recursion, not from storage).
func IsWorkTable(rel *catalog.Relation) bool { return rel.ID.Namespace == workTableNamespace }

// ScansRelation reports whether n (or a subquery inside it) scans rel.
func ScansRelation(n Node, rel *catalog.Relation) bool {
	found := false
	var walk func(Node)
	walk = func(n Node) {
		if s, ok := n.(*Scan); ok && s.Relation.ID == rel.ID {
			found = true
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
		for _, s := range Scalars(n) {
			Walk(s, func(e Scalar) bool {
				if sq, ok := e.(*Subquery); ok {
					walk(sq.Plan)
				}
				return !found
			})
		}
	}
	walk(n)
	return found
}
