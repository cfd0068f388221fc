package session

import (
	"slices"

	"github.com/rockstream/rockstream/ivm/sql/catalog"
)

// Savepoints (SAVEPOINT / ROLLBACK TO SAVEPOINT / RELEASE SAVEPOINT) act on
// the open transaction's pending writes. The gateway keeps the names and
// their stack discipline; the engine keeps one mark per savepoint, by depth.
//
// A mark records how far each table's buffer had grown (keys are only ever
// appended, so keys past the mark are exactly the rows first touched after
// it) and the start of an undo log. While any mark exists, the first change
// to an existing pending row after the newest mark saves the row's previous
// state in the undo log (copy on first write per savepoint interval, via
// txn.writable), so a savepoint costs O(tables) and a rollback
// O(changes since the mark) — pgjdbc's autosave sets one before every
// statement.

// savepointMark is the transaction's state at a SAVEPOINT.
type savepointMark struct {
	undo, count, order int
	tables             map[catalog.ID]tableMark
}

type tableMark struct{ keys, appended, removed int }

// undoEntry is a pending row's state before its first change after a mark.
type undoEntry struct {
	table catalog.ID
	key   string
	old   pendingRow
}

// mark pushes a savepoint.
func (t *txn) mark() {
	m := savepointMark{undo: len(t.undo), count: t.count, order: len(t.order), tables: make(map[catalog.ID]tableMark, len(t.order))}
	for _, id := range t.order {
		tw := t.tables[id]
		m.tables[id] = tableMark{keys: len(tw.keys), appended: len(tw.appended), removed: len(tw.removed)}
	}
	t.marks = append(t.marks, m)
	t.gen++
}

// touch records p as the pending row of key k of tw, a key the
// transaction had not touched. Rolling back to any savepoint set before now
// drops the key, so its state needs no saving until the next savepoint: a
// COPY or bulk INSERT after the statement's own savepoint writes no undo
// entry per row.
//
// It reports false for a key touched twice by one lookup (its keys were
// all untouched, so p holds the same committed row both times): p replaced
// the entry listed in tw.pending, and the caller must relist. A key above
// every key touched joins the tail without a map access (tableWrites.rows).
func (t *txn) touch(tw *tableWrites, k string, p *pendingRow) bool {
	p.gen = t.gen
	if !tw.bounded || k > tw.hi {
		// Above every key touched: it joins the tail (tableWrites.rows).
		tw.keys = append(tw.keys, k)
		tw.pending = append(tw.pending, p)
		if !tw.bounded {
			tw.lo, tw.bounded = k, true
		}
		tw.hi = k
		return true
	}
	tw.index()
	n := len(tw.rows)
	tw.rows[k] = p
	if len(tw.rows) == n {
		return false
	}
	tw.keys = append(tw.keys, k)
	tw.pending = append(tw.pending, p)
	tw.indexed = len(tw.keys)
	// NB: k is at most hi here.
	tw.lo = min(tw.lo, k)
	return true
}

// mayHave reports whether k may be a key of tw: false only when it is
// outside the bounds of every key touched.
func (tw *tableWrites) mayHave(k string) bool {
	return tw.bounded && k >= tw.lo && k <= tw.hi
}

// get returns the pending row of key k (nil: not touched).
func (tw *tableWrites) get(k string) *pendingRow {
	if tail := tw.keys[tw.indexed:]; len(tail) > 0 && k >= tail[0] {
		// NB: every indexed key is below the tail's first.
		if i, ok := slices.BinarySearch(tail, k); ok {
			return tw.pending[tw.indexed+i]
		}
		return nil
	}
	return tw.rows[k]
}

// index adds the tail's keys to the map, before a key that would not keep
// the tail ascending is added.
func (tw *tableWrites) index() {
	if tw.indexed == len(tw.keys) {
		return
	}
	if len(tw.rows) == 0 {
		tw.rows = make(map[string]*pendingRow, len(tw.keys)-tw.indexed)
	}
	for i := tw.indexed; i < len(tw.keys); i++ {
		tw.rows[tw.keys[i]] = tw.pending[i]
	}
	tw.indexed = len(tw.keys)
}

// relist makes tw.pending from index from on list the map's entries again
// after touch reported a key touched twice (tail entries are never stale:
// a key joins the tail only the first time it is touched).
func (tw *tableWrites) relist(from int) {
	for i := from; i < tw.indexed; i++ {
		tw.pending[i] = tw.rows[tw.keys[i]]
	}
}

// writable returns the pending row under key k of tw for changing it,
// saving its current state first if a savepoint may need it back.
func (t *txn) writable(tw *tableWrites, k string) *pendingRow {
	return t.writablePending(tw, k, tw.get(k))
}

// writablePending is writable for p, the pending row of key k.
func (t *txn) writablePending(tw *tableWrites, k string, p *pendingRow) *pendingRow {
	if p == nil || len(t.marks) == 0 || p.gen == t.gen {
		return p
	}
	t.undo = append(t.undo, undoEntry{table: tw.rel.ID, key: k, old: *p})
	p.gen = t.gen
	return p
}

// rollbackTo restores the state at savepoint depth (1 = oldest) and keeps
// that savepoint, as ROLLBACK TO SAVEPOINT does.
func (t *txn) rollbackTo(depth int) {
	m := t.marks[depth-1]
	for i := len(t.undo) - 1; i >= m.undo; i-- {
		e := t.undo[i]
		if tw := t.tables[e.table]; tw != nil {
			// NB: in place, so tw.pending still lists the map's entry.
			if p := tw.get(e.key); p != nil {
				*p = e.old
			} else {
				old := e.old
				tw.index()
				tw.rows[e.key] = &old
			}
		}
	}
	t.undo = t.undo[:m.undo]
	for _, id := range t.order[m.order:] {
		delete(t.tables, id)
	}
	t.order = t.order[:m.order]
	for _, id := range t.order {
		tw, tm := t.tables[id], m.tables[id]
		if tm.keys < len(tw.keys) {
			if tm.keys < tw.indexed {
				for _, k := range tw.keys[tm.keys:tw.indexed] {
					delete(tw.rows, k)
				}
				tw.indexed = tm.keys
			}
			tw.keys, tw.pending = tw.keys[:tm.keys], tw.pending[:tm.keys]
		}
		if tm.appended < len(tw.appended) {
			tw.appended = tw.appended[:tm.appended]
		}
		if tm.removed < len(tw.removed) {
			tw.removed = tw.removed[:tm.removed]
		}
	}
	t.count = m.count
	t.marks = t.marks[:depth]
	t.gen++
}

// release drops savepoint depth and every later one; their changes stay.
func (t *txn) release(depth int) {
	t.marks = t.marks[:depth-1]
	if len(t.marks) == 0 {
		t.undo = nil
	}
}
