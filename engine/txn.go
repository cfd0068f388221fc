package engine

import (
	"sort"

	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/ivm/keyenc"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// txnWritesMax bounds the rows one transaction may buffer (STYLE.md 10);
// past it the statement fails with RS-2009 rather than growing memory
// without bound. COPY of larger files should commit in several transactions.
const txnWritesMax = 5_000_000

// txnState is a session's open transaction.
type txnState struct {
	readOnly bool
	tables   map[catalog.ID]*tableWrites
	order    []catalog.ID
	count    int
	// marks, undo and gen implement savepoints (savepoint.go).
	marks []savepointMark
	undo  []undoEntry
	gen   uint64
	// restarts are sequences TRUNCATE ... RESTART IDENTITY restarted,
	// put back on rollback (truncate.go).
	restarts []seqRestart
	// isolation is the transaction's level; snapshotID its pinned shard
	// snapshot once a REPEATABLE READ transaction ran a statement
	// (isolation.go).
	isolation  gateway.Isolation
	snapshotID uint64
}

// tableWrites are one table's pending row changes, by encoded primary key.
type tableWrites struct {
	rel  *catalog.Relation
	rows map[string]*pendingRow
	keys []string // first-write order, for a deterministic commit
	// appended are rows inserted into tables without a primary key
	// (INSERT_ONLY or declared without one); removed are rows deleted from
	// a table without a primary key, by value (an UPDATE removes the old
	// row and appends the new one). Both only grow (savepoints truncate
	// them); together they are the table's Z-set delta.
	appended []types.Row
	removed  []types.Row
}

// keylessDelta is a keyless table's pending change as a consolidated Z-set:
// rows appended and then removed again in the transaction cancel.
func (tw *tableWrites) keylessDelta() zset.Batch {
	var b zset.Batch
	for _, r := range tw.appended {
		b.Add(r, 1)
	}
	for _, r := range tw.removed {
		b.Add(r, -1)
	}
	return zset.Consolidate(b)
}

type pendingRow struct {
	key types.Row // primary key values
	row types.Row // nil = deleted
	// existedBefore reports whether a committed row had this key when the
	// transaction first touched it (nil row + existedBefore = delete).
	existedBefore bool
	mustNotExist  bool
	// changed is false for rows only looked up (row = committed row).
	changed bool
	// base is the committed row when the transaction first looked (nil:
	// absent); an explicit transaction's commit checks it is unchanged
	// (RS-2008), so a concurrent update is never silently overwritten.
	base types.Row
	// gen is the savepoint generation in which the row's previous state
	// was last saved (txnState.writable).
	gen uint64
}

func newTxn(readOnly bool) *txnState {
	return &txnState{readOnly: readOnly, tables: map[catalog.ID]*tableWrites{}}
}

func (t *txnState) table(rel *catalog.Relation) *tableWrites {
	tw := t.tables[rel.ID]
	if tw == nil {
		tw = &tableWrites{rel: rel, rows: map[string]*pendingRow{}}
		t.tables[rel.ID] = tw
		t.order = append(t.order, rel.ID)
	}
	return tw
}

func pkTypes(rel *catalog.Relation) []types.Type {
	ts := make([]types.Type, len(rel.PrimaryKey))
	for i, c := range rel.PrimaryKey {
		ts[i] = rel.Columns[c].Type
	}
	return ts
}

func pkOf(rel *catalog.Relation, row types.Row) types.Row {
	k := make(types.Row, len(rel.PrimaryKey))
	for i, c := range rel.PrimaryKey {
		k[i] = row[c]
	}
	return k
}

// encodePK is keyenc.EncodeKey over the primary-key columns, ascending
// (called several times per written row: no allocation but the string).
func encodePK(rel *catalog.Relation, key types.Row) string {
	var buf [64]byte
	b := buf[:0]
	for i, c := range rel.PrimaryKey {
		b = keyenc.EncodeColumn(b, rel.Columns[c].Type, key[i], keyenc.Asc)
	}
	return string(b)
}

// writes turns the buffer into the shard's commit request.
func (t *txnState) writes() []shard.RowWrite {
	out := make([]shard.RowWrite, 0, t.count)
	for _, id := range t.order {
		tw := t.tables[id]
		for _, k := range tw.keys {
			p := tw.rows[k]
			if !p.changed || (p.row == nil && !p.existedBefore) {
				continue // only looked up, or inserted then deleted inside the transaction
			}
			out = append(out, shard.RowWrite{Table: id, Key: p.key, Row: p.row, MustNotExist: p.mustNotExist,
				// Every transaction checks: a row lock covers the
				// rows its holder read after locking, but not what a
				// writer that takes no lock (COPY, INSERT) or a lock a
				// restarted shard forgot lets through.
				CheckBase: p.existedBefore, Base: p.base})
		}
		if len(tw.removed) == 0 {
			for _, r := range tw.appended {
				out = append(out, shard.RowWrite{Table: id, Row: r})
			}
			continue
		}
		delta := tw.keylessDelta()
		for i, r := range delta.Rows {
			for n := delta.Weights[i]; n > 0; n-- {
				out = append(out, shard.RowWrite{Table: id, Row: r})
			}
			for n := delta.Weights[i]; n < 0; n++ {
				// A delete by value: the shard removes one stored row equal to Base.
				out = append(out, shard.RowWrite{Table: id, Base: r})
			}
		}
	}
	return out
}

// overlay applies the transaction's pending writes to a committed snapshot
// of a table, so the session reads its own writes.
func (t *txnState) overlay(rel *catalog.Relation, committed zset.Batch) zset.Batch {
	if t == nil {
		return committed
	}
	tw := t.tables[rel.ID]
	if tw == nil {
		return committed
	}
	out := zset.Batch{}
	for i, r := range committed.Rows {
		if len(rel.PrimaryKey) > 0 {
			if p, ok := tw.rows[encodePK(rel, pkOf(rel, r))]; ok && p.changed {
				continue
			}
		}
		out.Add(r, committed.Weights[i])
	}
	keys := append([]string(nil), tw.keys...)
	sort.Strings(keys)
	for _, k := range keys {
		if p := tw.rows[k]; p.changed && p.row != nil {
			out.Add(p.row, 1)
		}
	}
	if len(tw.removed) == 0 {
		for _, r := range tw.appended {
			out.Add(r, 1)
		}
		return out
	}
	out.AddBatch(tw.keylessDelta(), 1)
	// INVARIANT: a transaction removes only rows it could read, so no
	// row's weight goes below zero.
	return zset.Consolidate(out)
}

// snapshotTable copies a table's pending writes (nil if none), so a failed
// COPY can put them back.
func (t *txnState) snapshotTable(id catalog.ID) *tableWrites {
	tw := t.tables[id]
	if tw == nil {
		return nil
	}
	c := &tableWrites{rel: tw.rel, rows: make(map[string]*pendingRow, len(tw.rows)), keys: append([]string(nil), tw.keys...), appended: append([]types.Row(nil), tw.appended...), removed: append([]types.Row(nil), tw.removed...)}
	for k, p := range tw.rows { //lint:maprange copying a map into a map
		cp := *p
		c.rows[k] = &cp
	}
	return c
}

// restoreTable puts back what snapshotTable saved.
func (t *txnState) restoreTable(id catalog.ID, saved *tableWrites) {
	if saved == nil {
		if tw := t.tables[id]; tw != nil {
			t.count -= len(tw.appended) + len(tw.removed)
			tw.rows, tw.keys, tw.appended, tw.removed = map[string]*pendingRow{}, nil, nil, nil
		}
		return
	}
	t.tables[id] = saved
}
