package control

import (
	"sort"

	"github.com/rockstream/rockstream/syscat/sysrel"

	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
)

// Snapshot is one immutable version of a namespace's catalog. It implements
// catalog.Catalog for the compiler.
//
// INVARIANT: a Snapshot is never mutated after it is published; DDL builds a
// new one with with/without.
type Snapshot struct {
	namespace catalog.NamespaceID
	// Version increases by one with every published change.
	Version uint64
	// NextObject is the next object id to allocate.
	NextObject uint64
	// byName holds relations, sinks and indexes by Key; schemas holds
	// schemas by name.
	byName  map[string]*catalog.Relation
	schemas map[string]*catalog.Relation
	byID    map[catalog.ID]*catalog.Relation
	// deps lists, per view, the relations its SQL reads.
	deps map[catalog.ID][]catalog.ID
	// bucketMap is the bucket map in force (topology.go).
	bucketMap partition.Map
	// partitioned: tables' rows are spread over the shards (topology.go).
	partitioned bool
	// indexCount counts each table's indexes, so a statement on a table
	// without any learns it without listing the catalog (Indexes).
	indexCount map[catalog.ID]int
}

func newSnapshot(ns catalog.NamespaceID) *Snapshot {
	return &Snapshot{
		namespace:  ns,
		NextObject: firstObjectID,
		byName:     map[string]*catalog.Relation{},
		schemas:    map[string]*catalog.Relation{},
		byID:       map[catalog.ID]*catalog.Relation{},
		deps:       map[catalog.ID][]catalog.ID{},
		indexCount: map[catalog.ID]int{},
	}
}

// firstObjectID leaves room below for the system relations (sysrel).
const firstObjectID = sysrel.FirstUserObject

// BucketMap is the bucket map in force when this snapshot was published:
// which shard owns each bucket of every partitioned key.
func (s *Snapshot) BucketMap() partition.Map { return s.bucketMap }

// Partitioned reports whether the rows of tables are spread over the
// shards of the bucket map by their key's bucket (topology.go), every
// shard then taking commits with epochs from the control plane
// (epochs.go); else every table is on the first shard.
func (s *Snapshot) Partitioned() bool { return s.partitioned }

// Namespace implements catalog.Catalog.
func (s *Snapshot) Namespace() catalog.NamespaceID { return s.namespace }

// LookupRelation implements catalog.Catalog: `t` resolves in public (a
// session resolves unqualified names through its search_path with
// catalog.WithSearchPath, which asks for `s.t`), `s.t` in schema s. A
// one-part name may also be a relation's Key (schema.name), as the engine
// passes names it resolved.
//
// System relations (pg_catalog, information_schema, rockstream_catalog)
// resolve through sysrel; an unqualified name prefers a user relation.
func (s *Snapshot) LookupRelation(name []string) (*catalog.Relation, bool) {
	switch len(name) {
	case 1:
		if r, ok := s.byName[name[0]]; ok && r.Kind != catalog.KindSink {
			return r, true
		}
	case 2:
		if r, ok := s.byName[catalog.Key(name[0], name[1])]; ok {
			if r.Kind == catalog.KindSink || r.SchemaName() != name[0] || r.Name != name[1] {
				return nil, false
			}
			return r, true
		}
	default:
		return nil, false
	}
	return sysrel.Lookup(name)
}

// Schema returns the schema named name (public and the system schemas
// exist without an object: ok with a nil relation).
func (s *Snapshot) Schema(name string) (*catalog.Relation, bool) {
	if sysrel.IsSystemSchema(name) || name == catalog.SchemaPublic {
		return nil, true
	}
	r, ok := s.schemas[name]
	return r, ok
}

// Schemas lists the schemas CREATE SCHEMA made, sorted by id.
func (s *Snapshot) Schemas() []*catalog.Relation {
	return s.objects(func(r *catalog.Relation) bool { return r.Kind == catalog.KindSchema })
}

// InSchema lists the relations, sinks and indexes of schema name, sorted
// by id.
func (s *Snapshot) InSchema(name string) []*catalog.Relation {
	return s.objects(func(r *catalog.Relation) bool { return r.Kind != catalog.KindSchema && r.SchemaName() == name })
}

// RelationByID implements catalog.Catalog.
func (s *Snapshot) RelationByID(id catalog.ID) (*catalog.Relation, bool) {
	if r, ok := s.byID[id]; ok {
		return r, true
	}
	return sysrel.ByID(id)
}

// Relations lists every relation sorted by id (creation order). Sinks
// are not relations a query, a shard or the system catalogs see: they
// are listed by Sinks.
func (s *Snapshot) Relations() []*catalog.Relation {
	return s.objects(func(r *catalog.Relation) bool { return r.Kind != catalog.KindSink && r.Kind != catalog.KindSchema })
}

// Sinks lists every sink sorted by id (creation order).
func (s *Snapshot) Sinks() []*catalog.Relation {
	return s.objects(func(r *catalog.Relation) bool { return r.Kind == catalog.KindSink })
}

// objects lists the relations and sinks that keep says to, sorted by id.
func (s *Snapshot) objects(keep func(*catalog.Relation) bool) []*catalog.Relation {
	out := make([]*catalog.Relation, 0, len(s.byID))
	//lint:maprange sorted below by id.
	for _, r := range s.byID {
		if keep(r) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return ObjectNumber(out[i].ID) < ObjectNumber(out[j].ID) })
	return out
}

// WithHidden is a copy of s, of the same version, that also holds rels by
// id (no name resolves to them): a shard's own relations, the lower
// stages of its staged views (actors/shard stages.go).
func (s *Snapshot) WithHidden(rels []*catalog.Relation) *Snapshot {
	if len(rels) == 0 {
		return s
	}
	c := s.clone()
	c.Version = s.Version
	for _, r := range rels {
		c.byID[r.ID] = r
	}
	return c
}

// clone returns a shallow copy whose maps may be changed.
func (s *Snapshot) clone() *Snapshot {
	c := &Snapshot{
		namespace:   s.namespace,
		Version:     s.Version + 1,
		NextObject:  s.NextObject,
		byName:      make(map[string]*catalog.Relation, len(s.byName)+1),
		schemas:     make(map[string]*catalog.Relation, len(s.schemas)+1),
		byID:        make(map[catalog.ID]*catalog.Relation, len(s.byID)+1),
		deps:        make(map[catalog.ID][]catalog.ID, len(s.deps)+1),
		bucketMap:   s.bucketMap,
		partitioned: s.partitioned,
		indexCount:  make(map[catalog.ID]int, len(s.indexCount)+1),
	}
	//lint:maprange copying a map into a map; order cannot matter.
	for k, v := range s.indexCount {
		c.indexCount[k] = v
	}
	//lint:maprange copying a map into a map; order cannot matter.
	for k, v := range s.deps {
		c.deps[k] = v
	}
	//lint:maprange copying a map into a map; order cannot matter.
	for k, v := range s.byName {
		c.byName[k] = v
	}
	//lint:maprange copying a map into a map; order cannot matter.
	for k, v := range s.schemas {
		c.schemas[k] = v
	}
	//lint:maprange copying a map into a map; order cannot matter.
	for k, v := range s.byID {
		c.byID[k] = v
	}
	return c
}

func (s *Snapshot) put(r *catalog.Relation, deps []catalog.ID) {
	if old, ok := s.byID[r.ID]; ok {
		s.unname(old)
		s.countIndex(old, -1)
	}
	s.countIndex(r, 1)
	if r.Kind == catalog.KindSchema {
		s.schemas[r.Name] = r
	} else {
		s.byName[r.Key()] = r
	}
	s.byID[r.ID] = r
	if len(deps) > 0 {
		s.deps[r.ID] = deps
	} else {
		delete(s.deps, r.ID)
	}
}

func (s *Snapshot) remove(id catalog.ID) {
	if old, ok := s.byID[id]; ok {
		s.unname(old)
		s.countIndex(old, -1)
		delete(s.byID, id)
		delete(s.deps, id)
	}
}

// countIndex adds d to the index count of r's table if r is an index.
func (s *Snapshot) countIndex(r *catalog.Relation, d int) {
	if r.Kind != catalog.KindIndex || r.Index == nil {
		return
	}
	if s.indexCount[r.Index.Table] += d; s.indexCount[r.Index.Table] == 0 {
		delete(s.indexCount, r.Index.Table)
	}
}

// Indexes lists the indexes of table (CREATE INDEX) sorted by id, the
// order they were created in.
func (s *Snapshot) Indexes(table catalog.ID) []*catalog.Relation {
	if s.indexCount[table] == 0 {
		return nil
	}
	return s.objects(func(r *catalog.Relation) bool {
		return r.Kind == catalog.KindIndex && r.Index != nil && r.Index.Table == table
	})
}

// unname removes r's name from the name maps.
func (s *Snapshot) unname(r *catalog.Relation) {
	if r.Kind == catalog.KindSchema {
		delete(s.schemas, r.Name)
	} else {
		delete(s.byName, r.Key())
	}
}

// ObjectNumber is the sequential number inside an object id (ids are
// allocated from a per-namespace counter, big-endian in the last 8 bytes).
func ObjectNumber(id catalog.ID) uint64 {
	var n uint64
	for _, b := range id.Object[8:] {
		n = n<<8 | uint64(b)
	}
	return n
}

// objectID makes the id of object number n in namespace ns.
func objectID(ns catalog.NamespaceID, n uint64) catalog.ID {
	var obj catalog.ObjectID
	for i := 0; i < 8; i++ {
		obj[15-i] = byte(n >> (8 * i))
	}
	return catalog.ID{Namespace: ns, Object: obj}
}

// Dependencies returns the relations a view's SQL reads.
func (s *Snapshot) Dependencies(id catalog.ID) []catalog.ID { return s.deps[id] }

// Dependents returns the views whose SQL reads relation id directly, and
// the sinks that write a view's changes, sorted by id.
func (s *Snapshot) Dependents(id catalog.ID) []*catalog.Relation {
	var out []*catalog.Relation
	for _, r := range s.objects(func(*catalog.Relation) bool { return true }) {
		for _, d := range s.deps[r.ID] {
			if d == id {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// NewSnapshot builds a snapshot from relations (ids are allocated for those
// without one, in order). For tests and tools that need a catalog without a
// control actor; deps maps a view's position in rels to the positions it
// reads. Its bucket map places every bucket on shard 0.
func NewSnapshot(ns catalog.NamespaceID, version uint64, rels ...*catalog.Relation) *Snapshot {
	s := newSnapshot(ns)
	s.Version = version
	s.bucketMap = partition.NewMap(1, []partition.ShardID{0})
	for _, r := range rels {
		if r.ID == (catalog.ID{}) {
			r.ID = objectID(ns, s.NextObject)
			s.NextObject++
		}
		s.put(r, nil)
	}
	return s
}
