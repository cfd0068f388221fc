package shard

import (
	"bytes"
	"slices"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/runtime"
)

// Upgrading base-table rows from shard format 1 to 2 (format.go). Format 2
// carries the bucket in every row key, between the table id and the
// primary key (or row id):
//
//	format 1:  0x01 'T' table(16) pk-key            0x01 'T' table(16) epoch(8) pos(4)
//	format 2:  0x01 'T' table(16) bucket(2) pk-key  0x01 'T' table(16) bucket(2) epoch(8) pos(4)
//
// Rows are the source of truth and cannot be recomputed, but they can be
// re-keyed: the bucket of a keyed row is a function of its stored key, and
// that of a row without a primary key a function of its stored value
// (rows.go, BucketOfRow). The
// shard re-keys every row in ONE atomic batch together with the format
// record 2, so a crash leaves either format 1 (upgrade again) or format 2.
//
// The re-key needs the catalog (which tables store rows under primary
// keys and which under row ids), so it runs when the shard adopts its
// first catalog, before anything reads a row. Rows of a table the catalog
// does not have are handled by the catalog's id counter: a table below it
// was dropped (its rows are deleted, as the drop would have); one at or
// above it is newer than the catalog, and the upgrade waits for a catalog
// that has it rather than guess (the sync fails with RS-3100 until then).
//
//	open: format 1 ──first SyncCatalog──▶ rows re-keyed + format 2 (one batch)

// upgradeRowKeys re-keys a format-1 store's base-table rows to format 2
// under catalog snap.
func (a *Actor) upgradeRowKeys(ctx runtime.Context, snap *control.Snapshot) error {
	if !a.upgradePending {
		return nil
	}
	type moved struct{ oldKey, newKey, value []byte }
	var rows []moved
	var dropped [][]byte
	rowIDs := map[catalog.ID]bool{}
	prefix := []byte{kv.PrefixOpState, kindTableRows}
	err := kv.ScanPrefix(a.store, prefix, func(k, v []byte) error {
		if len(k) < 2+16 {
			return corrupt("table row key %x is too short", k)
		}
		id := catalog.ID{Namespace: snap.Namespace()}
		copy(id.Object[:], k[2:2+16])
		rel, ok := snap.RelationByID(id)
		if !ok || (rel.Kind != catalog.KindTable && rel.Kind != catalog.KindSource) {
			if objectNumber(id) < snap.NextObject {
				dropped = append(dropped, append([]byte(nil), k...))
				return nil
			}
			return errcode.New(errcode.ShardUnavailable, "the shard's rows are in storage format 1 and include rows of relation %s, which catalog version %d does not have yet: waiting for a newer catalog to upgrade them", id, snap.Version)
		}
		storedUnderRowIDs, seen := rowIDs[id]
		if !seen {
			var err error
			if storedUnderRowIDs, err = a.storedUnderRowIDs(rel); err != nil {
				return err
			}
			rowIDs[id] = storedUnderRowIDs
		}
		// The bucket of a keyed row is of its encoded key, that of a row
		// under a row id of its stored value (BucketOfRow): both are the
		// bytes already stored.
		bucket := partition.BucketOf(k[2+16:])
		if storedUnderRowIDs {
			bucket = partition.BucketOf(v)
		}
		newKey := make([]byte, 0, len(k)+partition.BucketBytes)
		newKey = append(newKey, k[:2+16]...)
		newKey = partition.AppendBucket(newKey, bucket)
		newKey = append(newKey, k[2+16:]...)
		rows = append(rows, moved{oldKey: append([]byte(nil), k...), newKey: newKey, value: append([]byte(nil), v...)})
		return nil
	})
	if err != nil {
		return err
	}
	// NB: as in rekey, an overlay transaction applies the deletes before
	// the puts, so a new key equal to some old key byte for byte keeps
	// its row.
	txn := kv.NewTxn(a.store)
	for _, k := range dropped {
		if err := txn.Delete(k); err != nil {
			return err
		}
	}
	for _, m := range rows {
		if err := txn.Delete(m.oldKey); err != nil {
			return err
		}
	}
	slices.SortFunc(rows, func(x, y moved) int { return bytes.Compare(x.newKey, y.newKey) })
	for i, m := range rows {
		// INVARIANT: re-keying keeps keys distinct (the bucket is a
		// function of what followed it).
		if i > 0 && bytes.Equal(rows[i-1].newKey, m.newKey) {
			return corrupt("two format-1 rows re-key to %x", m.newKey)
		}
		if err := txn.Put(m.newKey, m.value); err != nil {
			return err
		}
	}
	if err := txn.Put(formatKey(), []byte{shardFormat}); err != nil {
		return err
	}
	if err := a.store.Apply(txn.Batch()); err != nil {
		return err
	}
	a.upgradePending = false
	ctx.Logger().Info("shard rows upgraded to bucketed keys", "format", shardFormat, "rows", len(rows), "dropped_rows", len(dropped))
	return nil
}

// storedUnderRowIDs reports whether a table's rows are keyed by row ids
// (epoch, position) rather than by primary key: it has none, or gained one
// by ALTER TABLE ADD PRIMARY KEY and is not re-keyed yet (rekey.go).
func (a *Actor) storedUnderRowIDs(rel *catalog.Relation) (bool, error) {
	if len(rel.PrimaryKey) == 0 {
		return true, nil
	}
	if !rel.PrimaryKeyAdded {
		return false, nil
	}
	_, done, err := a.store.Get(rekeyedKey(rel.ID))
	return !done, err
}
