package session

import (
	"fmt"
	"maps"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// TestSavepointUndoMatchesModel drives a transaction buffer with random
// writes (as dml.go makes them: look up, then change through writable),
// appends, savepoints, releases and rollbacks over two tables with tiny
// key domains, and checks after every step that what the transaction
// reads (overlay) equals a model that copies the whole state at every
// savepoint.
func TestSavepointUndoMatchesModel(t *testing.T) {
	keyed := &catalog.Relation{ID: catalog.ID{Object: catalog.ObjectID{1}}, Name: "k", Kind: catalog.KindTable, PrimaryKey: []int{0},
		Columns: []catalog.Column{{Name: "k", Type: types.TInt8}, {Name: "v", Type: types.TInt8}}}
	appendOnly := &catalog.Relation{ID: catalog.ID{Object: catalog.ObjectID{2}}, Name: "a", Kind: catalog.KindTable, InsertOnly: true,
		Columns: []catalog.Column{{Name: "v", Type: types.TInt8}}}
	type state struct {
		rows     map[int64]int64 // key → value (absent: deleted or never written)
		appended []int64
	}
	clone := func(s state) state {
		return state{rows: maps.Clone(s.rows), appended: append([]int64(nil), s.appended...)}
	}
	rapid.Check(t, func(t *rapid.T) {
		txn := newTxn(Begin{})
		cur := state{rows: map[int64]int64{}}
		var marks []state
		for step := range rapid.IntRange(1, 40).Draw(t, "steps") {
			switch op := rapid.IntRange(0, 5).Draw(t, "op"); {
			case op <= 1: // write or delete a key
				k := rapid.Int64Range(0, 3).Draw(t, "key")
				tw := txn.table(*keyed)
				enc := EncodeKey(keyed, types.Row{k})
				if tw.get(enc) == nil {
					txn.touch(tw, enc, &pendingRow{key: types.Row{k}})
				}
				p := txn.writable(tw, enc)
				if op == 0 {
					v := rapid.Int64Range(0, 9).Draw(t, "value")
					p.row, cur.rows[k] = types.Row{k, v}, v
				} else {
					p.row = nil
					delete(cur.rows, k)
				}
				p.changed = true
				txn.count++
			case op == 2:
				v := rapid.Int64Range(0, 9).Draw(t, "appended")
				tw := txn.table(*appendOnly)
				tw.appended = append(tw.appended, types.Row{v})
				cur.appended = append(cur.appended, v)
				txn.count++
			case op == 3:
				txn.mark()
				marks = append(marks, clone(cur))
			case op == 4 && len(marks) > 0:
				d := rapid.IntRange(1, len(marks)).Draw(t, "rollbackTo")
				txn.rollbackTo(d)
				cur, marks = clone(marks[d-1]), marks[:d]
			case op == 5 && len(marks) > 0:
				d := rapid.IntRange(1, len(marks)).Draw(t, "release")
				txn.release(d)
				marks = marks[:d-1]
			}
			if tw := txn.tables[keyed.ID]; tw != nil {
				if len(tw.pending) != len(tw.keys) || len(tw.rows) != tw.indexed {
					t.Fatalf("step %d: %d keys, %d pending, %d map entries, %d indexed", step, len(tw.keys), len(tw.pending), len(tw.rows), tw.indexed)
				}
				for i, k := range tw.keys {
					if tw.pending[i] != tw.get(k) {
						t.Fatalf("step %d: pending entry %d is not the one get finds", step, i)
					}
					if i > tw.indexed && k <= tw.keys[i-1] {
						t.Fatalf("step %d: tail key %d not above the one before", step, i)
					}
				}
			}
			want := zset.Batch{}
			for k, v := range cur.rows { //lint:maprange zset.Batch.Equal ignores order
				want.Add(types.Row{k, v}, 1)
			}
			got := txn.overlay(keyed.ID, zset.Batch{})
			if !sameRows(got, want) {
				t.Fatalf("step %d: keyed rows %v, model %v", step, got.Rows, want.Rows)
			}
			gotA := txn.overlay(appendOnly.ID, zset.Batch{})
			if fmt.Sprint(gotA.Rows) != fmt.Sprint(rowsOf(cur.appended)) {
				t.Fatalf("step %d: appended %v, model %v", step, gotA.Rows, cur.appended)
			}
		}
	})
}

// TestSavepointNewKeysNeedNoUndo: rows first touched after the newest
// savepoint (a COPY's rows after its statement's savepoint) are changed
// without saving their state, and rolling back still drops them; a row
// touched before the savepoint is saved once.
func TestSavepointNewKeysNeedNoUndo(t *testing.T) {
	keyed := &catalog.Relation{ID: catalog.ID{Object: catalog.ObjectID{1}}, Name: "k", Kind: catalog.KindTable, PrimaryKey: []int{0},
		Columns: []catalog.Column{{Name: "k", Type: types.TInt8}, {Name: "v", Type: types.TInt8}}}
	txn := newTxn(Begin{})
	tw := txn.table(*keyed)
	write := func(k, v int64) {
		enc := EncodeKey(keyed, types.Row{k})
		if tw.get(enc) == nil {
			txn.touch(tw, enc, &pendingRow{key: types.Row{k}})
		}
		p := txn.writable(tw, enc)
		p.row, p.changed = types.Row{k, v}, true
		txn.count++
	}
	write(0, 0)
	txn.mark()
	for k := range int64(1000) {
		write(k+1, k)
		write(k+1, k+1)
	}
	if len(txn.undo) != 0 {
		t.Fatalf("%d undo entries for rows first touched after the savepoint, want 0", len(txn.undo))
	}
	write(0, 1)
	write(0, 2)
	if len(txn.undo) != 1 {
		t.Fatalf("%d undo entries after changing a row touched before the savepoint twice, want 1", len(txn.undo))
	}
	txn.mark()
	write(5, 50)
	if len(txn.undo) != 2 {
		t.Fatalf("%d undo entries after changing an older row after a second savepoint, want 2", len(txn.undo))
	}
	txn.rollbackTo(1)
	got := txn.overlay(keyed.ID, zset.Batch{})
	if len(got.Rows) != 1 || fmt.Sprint(got.Rows[0]) != fmt.Sprint(types.Row{int64(0), int64(0)}) {
		t.Fatalf("after rolling back to the first savepoint: %v, want [[0 0]]", got.Rows)
	}
}

func rowsOf(vs []int64) []types.Row {
	out := []types.Row{}
	for _, v := range vs {
		out = append(out, types.Row{v})
	}
	return out
}

// sameRows compares two batches as multisets of rows.
func sameRows(a, b zset.Batch) bool {
	count := map[string]int64{}
	for i, r := range a.Rows {
		count[fmt.Sprint(r)] += a.Weights[i]
	}
	for i, r := range b.Rows {
		count[fmt.Sprint(r)] -= b.Weights[i]
	}
	for _, n := range count { //lint:maprange checking every entry is zero
		if n != 0 {
			return false
		}
	}
	return true
}
