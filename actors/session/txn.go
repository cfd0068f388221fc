package session

import (
	"sort"

	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/keyenc"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/runtime"
)

// TxnWritesMax bounds the rows one transaction may buffer (STYLE.md 10);
// past it the statement fails with RS-2009 rather than growing memory
// without bound. COPY of larger files should commit in several
// transactions.
const TxnWritesMax = 5_000_000

// txn is a session's open transaction.
type txn struct {
	readOnly bool
	implicit bool
	tables   map[catalog.ID]*tableWrites
	order    []catalog.ID
	count    int
	// marks, undo and gen implement savepoints (savepoint.go).
	marks []savepointMark
	undo  []undoEntry
	gen   uint64
	// isolation is the transaction's level; snapshot its pinned shard
	// snapshot once a REPEATABLE READ transaction ran a statement.
	isolation Isolation
	snapshot  uint64
}

// tableWrites are one table's pending row changes, by encoded primary key.
type tableWrites struct {
	rel *catalog.Relation
	// rows indexes keys[:indexed]. The rest, the tail, is strictly
	// ascending and above every indexed key, and is searched in place
	// (get): a bulk load in key order (a COPY of rows sorted by key) adds
	// every key to the tail, with no map entry per row to build and for
	// the collector to scan.
	rows    map[string]*pendingRow
	indexed int
	keys    []string // first-write order, for a deterministic commit
	// pending are the entries of keys in rows, in the same order (a
	// rollback restores entries in place, so they stay the map's): the
	// commit walks them without a map access per row.
	pending []*pendingRow
	// lo and hi bound the keys ever in rows (when bounded): a key outside
	// them is new to the transaction without a map access, which for a
	// bulk load in key order (a COPY of rows sorted by key) is every key.
	// They never shrink, so a rollback leaves them bounds still.
	lo, hi  string
	bounded bool
	// appended are rows inserted into tables without a primary key
	// (INSERT_ONLY or declared without one); removed are rows deleted from
	// a table without a primary key, by value (an UPDATE removes the old
	// row and appends the new one). Both only grow (savepoints truncate
	// them); together they are the table's Z-set delta.
	appended []types.Row
	removed  []types.Row
	// seen is the oldest state a shard answered the transaction's
	// lookups of the table in (lookupSeen), unseen that one came with
	// none or from another shard: the commit then reads every key the
	// lookups found absent again (shard.Commit.Absent).
	seen   lookupSeen
	unseen bool
}

// noteSeen records the state a lookup of the table was answered in.
func (tw *tableWrites) noteSeen(s lookupSeen) {
	switch {
	case tw.unseen:
	case s.seen.Epoch == 0 || (tw.seen.seen.Epoch != 0 && (s.by != tw.seen.by || s.seen.Catalog != tw.seen.seen.Catalog)):
		tw.unseen = true
	case tw.seen.seen.Epoch == 0 || s.seen.Epoch < tw.seen.seen.Epoch:
		tw.seen = s
	}
}

// absent lists the tables whose keys found absent the commit at shard to
// need not read again, if nothing wrote them since (shard.Commit.Absent).
func (t *txn) absent(to runtime.ActorID) []shard.TableAbsent {
	var out []shard.TableAbsent
	for _, id := range t.order {
		if tw := t.tables[id]; !tw.unseen && tw.seen.seen.Epoch != 0 && tw.seen.by == to {
			out = append(out, shard.TableAbsent{Table: id, Seen: tw.seen.seen})
		}
	}
	return out
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
	// absent); the commit checks it is unchanged (RS-2008), so a
	// concurrent update is never silently overwritten.
	base types.Row
	// gen is the savepoint generation in which the row's previous state
	// was last saved (txn.writable).
	gen uint64
}

func newTxn(b Begin) *txn {
	return &txn{readOnly: b.ReadOnly, implicit: b.Implicit, isolation: b.Isolation, tables: map[catalog.ID]*tableWrites{}}
}

func (t *txn) repeatable() bool { return t != nil && t.isolation == RepeatableRead }

// table returns rel's pending writes, keeping a copy of rel for them.
func (t *txn) table(rel catalog.Relation) *tableWrites {
	tw := t.tables[rel.ID]
	if tw == nil {
		tw = &tableWrites{rel: &rel, rows: map[string]*pendingRow{}}
		t.tables[rel.ID] = tw
		t.order = append(t.order, rel.ID)
	}
	return tw
}

// grow counts n more buffered row changes.
func (t *txn) grow(n int) error {
	t.count += n
	if t.count > TxnWritesMax {
		return errcode.New(errcode.TransactionTooLarge, "transaction changes more than %d rows", TxnWritesMax)
	}
	return nil
}

// KeyOf is the primary-key values of a row of rel, in PrimaryKey order.
func KeyOf(rel *catalog.Relation, row types.Row) types.Row {
	k := make(types.Row, len(rel.PrimaryKey))
	for i, c := range rel.PrimaryKey {
		k[i] = row[c]
	}
	return k
}

// EncodeKey is keyenc.EncodeKey over the primary-key columns of rel,
// ascending: the key a transaction's writes and row locks name a row by
// (called several times per written row: no allocation but the string).
func EncodeKey(rel *catalog.Relation, key types.Row) string {
	var buf [64]byte
	return string(AppendKey(buf[:0], rel, key))
}

// AppendKey appends EncodeKey's encoding of key to dst.
func AppendKey(dst []byte, rel *catalog.Relation, key types.Row) []byte {
	for i, c := range rel.PrimaryKey {
		dst = keyenc.EncodeColumn(dst, rel.Columns[c].Type, key[i], keyenc.Asc)
	}
	return dst
}

// SameRow reports whether two rows of rel hold the same values.
func SameRow(rel *catalog.Relation, a, b types.Row) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	var ba, bb []byte
	for i, c := range rel.Columns {
		if i >= len(a) {
			break
		}
		ba = keyenc.EncodeColumn(ba[:0], c.Type, a[i], keyenc.Asc)
		bb = keyenc.EncodeColumn(bb[:0], c.Type, b[i], keyenc.Asc)
		if string(ba) != string(bb) {
			return false
		}
	}
	return true
}

// writes turns the buffer into the shard's commit request.
func (t *txn) writes() []shard.RowWrite {
	out := make([]shard.RowWrite, 0, t.count)
	for _, id := range t.order {
		tw := t.tables[id]
		for _, p := range tw.pending {
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
func (t *txn) overlay(id catalog.ID, committed zset.Batch) zset.Batch {
	if t == nil {
		return committed
	}
	tw := t.tables[id]
	if tw == nil {
		return committed
	}
	rel := tw.rel
	out := zset.Batch{}
	for i, r := range committed.Rows {
		if len(rel.PrimaryKey) > 0 {
			if p := tw.get(EncodeKey(rel, KeyOf(rel, r))); p != nil && p.changed {
				continue
			}
		}
		out.Add(r, committed.Weights[i])
	}
	keys := append([]string(nil), tw.keys...)
	sort.Strings(keys)
	for _, k := range keys {
		if p := tw.get(k); p.changed && p.row != nil {
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
