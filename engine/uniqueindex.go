package engine

import (
	"context"
	"strings"

	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/keyenc"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// checkUnique enforces the table's unique indexes over the rows a
// statement wrote (after it flushed them to the transaction): each key
// value it wrote is read back through the index, the transaction's own
// writes included, and a value held by two rows fails the statement with
// 23505 as PostgreSQL does (NULLs are distinct). The shard checks again
// when the transaction commits (actors/shard/index.go), which catches
// another transaction's commit in between.
//
// NB: the check is at the end of the statement, where PostgreSQL checks
// row by row: an UPDATE that moves values through each other (SET u = u +
// 1) succeeds here and may fail on PostgreSQL.
func (w *writer) checkUnique(ctx context.Context, rows []types.Row) error {
	if len(rows) == 0 || len(w.rel.PrimaryKey) == 0 {
		return nil
	}
	type checked struct {
		idx     *catalog.Relation
		keyCols []int
		held    map[string]int64
	}
	var checks []checked
	idxs, allCols := w.uniqueIndexes()
	for n, idx := range idxs {
		keyCols := allCols[n]
		held := map[string]int64{}
		var ranges []shard.KeyRange
		for _, r := range rows {
			enc, key := w.indexKey(keyCols, r)
			if key == nil {
				continue
			}
			if _, ok := held[enc]; !ok {
				held[enc] = 0
				ranges = append(ranges, shard.KeyRange{Index: idx.ID, Eq: key})
			}
		}
		if len(ranges) == 0 {
			continue
		}
		batches, err := w.s.readSnapshotKeys(ctx, w.snap, []*catalog.Relation{w.rel}, nil, map[catalog.ID][]shard.KeyRange{w.rel.ID: ranges})
		if err != nil {
			return err
		}
		b := batches[w.rel.ID]
		for i, r := range b.Rows {
			if enc, key := w.indexKey(keyCols, r); key != nil {
				if _, ok := held[enc]; ok {
					held[enc] += b.Weights[i]
				}
			}
		}
		checks = append(checks, checked{idx: idx, keyCols: keyCols, held: held})
	}
	// PostgreSQL checks each row as it writes it, against the rows there
	// before the statement and those the statement wrote before it, and
	// reports the first that fails: held less this statement's rows is
	// what was there before.
	for _, c := range checks {
		for _, r := range rows {
			if enc, key := w.indexKey(c.keyCols, r); key != nil {
				c.held[enc]--
			}
		}
	}
	for _, r := range rows {
		for _, c := range checks {
			enc, key := w.indexKey(c.keyCols, r)
			if key == nil {
				continue
			}
			c.held[enc]++
			if c.held[enc] > 1 {
				return errcode.New(errcode.UniqueViolation, "duplicate key value violates unique constraint %q", c.idx.Name).
					WithDetail("Key %s already exists.", describeIndexKey(w.rel, c.keyCols, key, w.s.outputStyle()))
			}
		}
	}
	return nil
}

// indexKey returns a row's values of keyCols and their encoding; key is
// nil when one is NULL (such rows never collide).
func (w *writer) indexKey(keyCols []int, r types.Row) (enc string, key types.Row) {
	var b []byte
	key = make(types.Row, len(keyCols))
	for i, c := range keyCols {
		if r[c] == nil {
			return "", nil
		}
		key[i] = r[c]
		b = keyenc.EncodeColumn(b, w.rel.Columns[c].Type, r[c], keyenc.Asc)
	}
	return string(b), key
}

// describeIndexKey is PostgreSQL's (col, ...)=(val, ...) of an index key.
func describeIndexKey(rel *catalog.Relation, keyCols []int, key types.Row, st types.OutputStyle) string {
	names := make([]string, len(keyCols))
	vals := make([]string, len(keyCols))
	for i, c := range keyCols {
		names[i] = rel.Columns[c].Name
		vals[i] = types.FormatStyle(rel.Columns[c].Type, key[i], st)
	}
	return "(" + strings.Join(names, ", ") + ")=(" + strings.Join(vals, ", ") + ")"
}

// uniqueIndexes returns the table's unique indexes the shard keeps, in
// creation order (the order PostgreSQL checks them in), with their key
// columns.
func (w *writer) uniqueIndexes() (idxs []*catalog.Relation, keyCols [][]int) {
	for _, idx := range w.snap.Indexes(w.rel.ID) {
		if !idx.Index.Unique {
			continue
		}
		if cols, ok := shard.MaintainedIndex(w.rel, idx); ok {
			idxs, keyCols = append(idxs, idx), append(keyCols, cols)
		}
	}
	return idxs, keyCols
}

// uniqueSkipper decides which rows INSERT ... ON CONFLICT DO NOTHING (no
// target) skips for a unique index: those whose value a row held before
// the statement, or a row it inserted before them (nil: no unique index).
type uniqueSkipper struct {
	keyCols [][]int
	held    []map[string]bool
}

func (w *writer) uniqueSkipper(ctx context.Context, rows []types.Row) (*uniqueSkipper, error) {
	idxs, keyCols := w.uniqueIndexes()
	if len(idxs) == 0 {
		return nil, nil
	}
	sk := &uniqueSkipper{keyCols: keyCols}
	for i, idx := range idxs {
		held := map[string]bool{}
		var ranges []shard.KeyRange
		asked := map[string]bool{}
		for _, r := range rows {
			if enc, key := w.indexKey(keyCols[i], r); key != nil && !asked[enc] {
				asked[enc] = true
				ranges = append(ranges, shard.KeyRange{Index: idx.ID, Eq: key})
			}
		}
		if len(ranges) > 0 {
			batches, err := w.s.readSnapshotKeys(ctx, w.snap, []*catalog.Relation{w.rel}, nil, map[catalog.ID][]shard.KeyRange{w.rel.ID: ranges})
			if err != nil {
				return nil, err
			}
			for _, r := range batches[w.rel.ID].Rows {
				if enc, key := w.indexKey(keyCols[i], r); key != nil && asked[enc] {
					held[enc] = true
				}
			}
		}
		sk.held = append(sk.held, held)
	}
	return sk, nil
}

// conflicts reports whether row r is to be skipped, and otherwise counts
// its values as held.
func (sk *uniqueSkipper) conflicts(w *writer, r types.Row) bool {
	if sk == nil {
		return false
	}
	encs := make([]string, len(sk.keyCols))
	for i, cols := range sk.keyCols {
		enc, key := w.indexKey(cols, r)
		if key == nil {
			continue
		}
		if sk.held[i][enc] {
			return true
		}
		encs[i] = enc
	}
	for i, enc := range encs {
		if enc != "" {
			sk.held[i][enc] = true
		}
	}
	return false
}
