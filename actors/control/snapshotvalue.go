package control

import (
	"github.com/rockstream/rockstream/internal/assert"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
)

// The catalog crosses actors as a value (issue 16: messages are values),
// never as a *Snapshot: a Snapshot's maps are the control actor's memory,
// and a pointer to them cannot cross a process boundary. Messages name a
// catalog by its version; a reader that needs the contents asks for them
// with GetSnapshot and gets a SnapshotValue, which it turns back into a
// Snapshot (SnapshotOf) once per version, not once per message.
type (
	// GetSnapshot → SnapshotValue, or SnapshotUnchanged when the catalog's
	// version is Known (the caller already holds it). Known 0 always gets
	// the contents.
	GetSnapshot struct{ Known uint64 }
	// SnapshotUnchanged answers a GetSnapshot whose Known version is
	// current.
	SnapshotUnchanged struct{ Version uint64 }
	// SnapshotValue is a Snapshot's contents: its relations in id order,
	// each with the relations it reads. Each entry carries exactly what
	// the durable catalog record of the relation holds (record.go), so
	// the durable and the wire form describe a relation the same way.
	SnapshotValue struct {
		Namespace  catalog.NamespaceID
		Version    uint64
		NextObject uint64
		Relations  []RelationValue
		// BucketMap is the bucket map in force, in its durable form
		// (partition.Map.Encode, topology.go): the map's owners are
		// hidden fields, and the bytes are what the control DB holds.
		BucketMap []byte
		// Partitioned is Snapshot.Partitioned.
		Partitioned bool
	}
	// RelationValue is one relation of a SnapshotValue.
	RelationValue struct {
		Relation catalog.Relation
		Deps     []catalog.ID
	}
)

// Value returns the snapshot's value form. The relations' slices are
// shared with the snapshot, which is immutable (see Snapshot).
func (s *Snapshot) Value() SnapshotValue {
	rels := s.objects(func(*catalog.Relation) bool { return true })
	v := SnapshotValue{Namespace: s.namespace, Version: s.Version, NextObject: s.NextObject, Relations: make([]RelationValue, len(rels)), Partitioned: s.partitioned}
	if s.bucketMap.Valid() {
		v.BucketMap = s.bucketMap.Encode()
	}
	for i, r := range rels {
		v.Relations[i] = RelationValue{Relation: *r, Deps: s.deps[r.ID]}
	}
	return v
}

// SnapshotOf rebuilds the Snapshot a SnapshotValue describes.
func SnapshotOf(v SnapshotValue) *Snapshot {
	s := newSnapshot(v.Namespace)
	s.Version, s.NextObject, s.partitioned = v.Version, v.NextObject, v.Partitioned
	if v.BucketMap != nil {
		m, err := partition.DecodeMap(v.BucketMap)
		// INVARIANT: the bytes are a map's encoding (paired with Value).
		assert.That(err == nil, "catalog version %d carries a bucket map that does not decode: %v", v.Version, err)
		s.bucketMap = m
	}
	for i := range v.Relations {
		rel := v.Relations[i].Relation
		// INVARIANT: a relation appears once (paired with Value, which
		// lists the snapshot's map of relations by id).
		_, dup := s.byID[rel.ID]
		assert.That(!dup, "relation %s appears twice in catalog version %d", rel.ID, v.Version)
		s.put(&rel, v.Relations[i].Deps)
	}
	return s
}
