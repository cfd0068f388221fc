package engine

import (
	"fmt"

	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/types"
)

// Tables declared without a PRIMARY KEY (as pgbench creates its tables
// before ALTER TABLE ... ADD PRIMARY KEY) behave as in PostgreSQL: rows may
// repeat, and UPDATE and DELETE change the rows they match. RockStream
// stores such rows under hidden row ids and matches them by value: rows
// with equal values cannot be told apart in SQL (there is no ctid), so
// removing any one copy is what PostgreSQL's result looks like. A
// transaction's changes to such a table are a Z-set delta (appended +1,
// removed −1, txn.go); the shard applies each removal to one stored row
// equal to it, in one scan of the table per commit, and fails with RS-2008
// when the row is gone (another transaction changed it first).

// removeKeyless records the removal of one row matched by a statement.
func (w *writer) removeKeyless(row types.Row) error {
	w.removed = append(w.removed, row)
	return nil
}

// appendKeyless records one new row.
func (w *writer) appendKeyless(row types.Row) error {
	w.appended = append(w.appended, row)
	w.written = append(w.written, row)
	return nil
}

// updateKeyless is UPDATE on a table without a primary key: pairs hold
// the old row then the new one.
func (w *writer) updateKeyless(pairs []types.Row, width int, env *expr.Env, ret *returning) (gateway.Cursor, error) {
	for _, p := range pairs {
		newRow := append(types.Row{}, p[width:2*width]...)
		if err := w.checkNotNull(newRow); err != nil {
			return nil, err
		}
		if err := w.removeKeyless(p[:width]); err != nil {
			return nil, err
		}
		if err := w.appendKeyless(newRow); err != nil {
			return nil, err
		}
		if err := ret.add(env, withSources(newRow, p[2*width:])); err != nil {
			return nil, err
		}
	}
	if err := w.verifyChecks(env); err != nil {
		return nil, err
	}
	return ret.cursor(fmt.Sprintf("UPDATE %d", len(pairs))), nil
}

// deleteKeyless is DELETE on a table without a primary key.
func (w *writer) deleteKeyless(rows []types.Row, width int, env *expr.Env, ret *returning) (gateway.Cursor, error) {
	for _, r := range rows {
		if err := w.removeKeyless(r[:width]); err != nil {
			return nil, err
		}
		if err := ret.add(env, r); err != nil {
			return nil, err
		}
	}
	return ret.cursor(fmt.Sprintf("DELETE %d", len(rows))), nil
}
