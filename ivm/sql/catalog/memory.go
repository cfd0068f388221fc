package catalog

import "sort"

// Memory is an in-memory Catalog for tests and tools. Not safe for
// concurrent mutation.
type Memory struct {
	namespace NamespaceID
	byName    map[string]*Relation
	byID      map[ID]*Relation
	nextID    uint64
}

// NewMemory returns an empty catalog in namespace ns.
func NewMemory(ns NamespaceID) *Memory {
	return &Memory{namespace: ns, byName: map[string]*Relation{}, byID: map[ID]*Relation{}}
}

// Add registers rel, assigning it the next ID when rel.ID is zero, and
// returns it. An existing relation of the same name is replaced.
func (m *Memory) Add(rel *Relation) *Relation {
	if rel.ID == (ID{}) {
		m.nextID++
		var obj ObjectID
		for i := 0; i < 8; i++ {
			obj[15-i] = byte(m.nextID >> (8 * i))
		}
		rel.ID = ID{Namespace: m.namespace, Object: obj}
	}
	if old, ok := m.byName[rel.Name]; ok {
		delete(m.byID, old.ID)
	}
	m.byName[rel.Name] = rel
	m.byID[rel.ID] = rel
	return rel
}

// Drop removes the relation named name.
func (m *Memory) Drop(name string) {
	if old, ok := m.byName[name]; ok {
		delete(m.byID, old.ID)
		delete(m.byName, name)
	}
}

// Names lists relation names in order.
func (m *Memory) Names() []string {
	out := make([]string, 0, len(m.byName))
	for n := range m.byName { //lint:maprange sorted below
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Namespace implements Catalog.
func (m *Memory) Namespace() NamespaceID { return m.namespace }

// LookupRelation implements Catalog: `t` or `public.t`.
func (m *Memory) LookupRelation(name []string) (*Relation, bool) {
	switch len(name) {
	case 1:
	case 2:
		if name[0] != "public" {
			return nil, false
		}
	default:
		return nil, false
	}
	r, ok := m.byName[name[len(name)-1]]
	return r, ok
}

// RelationByID implements Catalog.
func (m *Memory) RelationByID(id ID) (*Relation, bool) {
	r, ok := m.byID[id]
	return r, ok
}
