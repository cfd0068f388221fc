package control

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
)

// Catalog key bytes (spec §5.2).
const (
	prefixCatalog      byte = 0x01
	catalogNextID      byte = 0x00
	catalogTable       byte = 0x01
	catalogView        byte = 0x02
	catalogVersion     byte = 0x03
	recordFormatV1          = 1
	namespaceIDBytes        = 16
	objectIDBytes           = 16
	catalogKeyBytesMax      = 2 + namespaceIDBytes + objectIDBytes
)

// record is the durable form of one relation.
type record struct {
	Format   int               `json:"format"`
	Relation *catalog.Relation `json:"relation"`
	Deps     []catalog.ID      `json:"deps,omitempty"`
}

func relationKey(r *catalog.Relation) []byte {
	kind := catalogTable
	if r.Kind == catalog.KindView || r.Kind == catalog.KindMaterializedView {
		kind = catalogView
	}
	k := make([]byte, 0, catalogKeyBytesMax)
	k = append(k, prefixCatalog, kind)
	k = append(k, r.ID.Namespace[:]...)
	return append(k, r.ID.Object[:]...)
}

func nextIDKey(ns catalog.NamespaceID) []byte {
	k := []byte{prefixCatalog, catalogNextID}
	return append(k, ns[:]...)
}

// versionKey holds the catalog version, so versions never go back across
// a restart (the shard adopts a snapshot only if its version is newer).
func versionKey(ns catalog.NamespaceID) []byte {
	k := []byte{prefixCatalog, catalogVersion}
	return append(k, ns[:]...)
}

func namespacePrefix(kind byte, ns catalog.NamespaceID) []byte {
	k := []byte{prefixCatalog, kind}
	return append(k, ns[:]...)
}

func encodeRecord(r *catalog.Relation, deps []catalog.ID) ([]byte, error) {
	return json.Marshal(record{Format: recordFormatV1, Relation: r, Deps: deps})
}

func decodeRecord(key, value []byte) (*catalog.Relation, []catalog.ID, error) {
	var rec record
	if err := json.Unmarshal(value, &rec); err != nil {
		return nil, nil, errcode.Wrap(CatalogCorrupt, err, "catalog record %x is unreadable", key)
	}
	if rec.Format != recordFormatV1 {
		return nil, nil, errcode.New(CatalogFormat, "catalog record %x has format %d; this binary reads format %d", key, rec.Format, recordFormatV1)
	}
	if rec.Relation == nil {
		return nil, nil, errcode.New(CatalogCorrupt, "catalog record %x has no relation", key)
	}
	// INVARIANT: the key names the record's own id (paired with relationKey).
	if got := relationKey(rec.Relation); string(got) != string(key) {
		return nil, nil, errcode.New(CatalogCorrupt, "catalog record %x holds relation %s stored under the wrong key", key, rec.Relation.ID)
	}
	return rec.Relation, rec.Deps, nil
}

func encodeUint64(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

func decodeUint64(b []byte) (uint64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("want 8 bytes, have %d", len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}
