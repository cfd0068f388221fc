package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/slate/objstore"
)

// TestIndexReadsOnlyItsRows: a SELECT, UPDATE and DELETE filtered on an
// indexed column read only the rows the index names from the store (the
// shard's ReadRows), answer as a read of the whole table would, and
// EXPLAIN names the index.
func TestIndexReadsOnlyItsRows(t *testing.T) {
	e := openQuiet(t, Config{Store: objstore.NewMemory()})
	defer e.Close(context.Background())
	s := newRangeSession(t, e)
	s.run(`CREATE TABLE t (id int PRIMARY KEY, a int, v int, b text)`)
	var sb strings.Builder
	sb.WriteString("INSERT INTO t VALUES ")
	for i := 1; i <= 2000; i++ {
		if i > 1 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "(%d, %d, %d, 'b%d')", i, i*7, i%10, i%100)
	}
	s.run(sb.String())
	s.run(`CREATE UNIQUE INDEX t_a_key ON t (a)`)
	s.run(`CREATE INDEX t_b_v_idx ON t (b, v)`)
	for _, tc := range []struct {
		sql  string
		want string
		read uint64
	}{
		{`SELECT id, v FROM t WHERE a = 70`, "(10,0)", 1},
		{`SELECT id FROM t WHERE a = 71`, "", 0},
		{`SELECT count(*) FROM t WHERE a IN (7, 14, 15)`, "(2)", 2},
		{`SELECT count(*) FROM t WHERE a > 13930`, "(10)", 10},
		{`SELECT count(*) FROM t WHERE b = 'b5'`, "(20)", 20},
		{`SELECT count(*) FROM t WHERE b = 'b5' AND v = 5`, "(20)", 20},
		{`SELECT count(*) FROM t WHERE b = 'b5' AND v = 4`, "(0)", 0},
		{`SELECT count(*) FROM t WHERE id = 3 AND a = 21`, "(1)", 0}, // a point read by the primary key, counted apart
		{`SELECT count(*) FROM t WHERE v = 3`, "(200)", 2000},        // no index leads with v
	} {
		before := readRows(t, e)
		if got := strings.Join(s.run(tc.sql), "; "); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.sql, got, tc.want)
		}
		if n := readRows(t, e) - before; n != tc.read {
			t.Errorf("%s read %d rows from the store, want %d", tc.sql, n, tc.read)
		}
	}
	before := readRows(t, e)
	s.run(`UPDATE t SET v = 100 WHERE a = 700`)
	s.run(`DELETE FROM t WHERE a = 1400`)
	if n := readRows(t, e) - before; n > 4 {
		t.Errorf("UPDATE and DELETE by the index read %d rows from the store, want at most 4", n)
	}
	if got := strings.Join(s.run(`SELECT id, v FROM t WHERE id IN (100, 200)`), "; "); got != "(100,100)" {
		t.Errorf("after UPDATE and DELETE by the index: %s", got)
	}
	// The transaction's own writes show in an index read.
	if err := s.gs.Begin(context.Background(), gateway.TxOptions{}); err != nil {
		t.Fatal(err)
	}
	s.inTxn = true
	s.run(`UPDATE t SET a = 5 WHERE id = 1`)
	s.run(`INSERT INTO t VALUES (0, 7, 0, 'x')`)
	if got := strings.Join(s.run(`SELECT id FROM t WHERE a = 7 OR a = 5`), "; "); got != "(0); (1)" {
		t.Errorf("index read in a transaction: %s", got)
	}
	if err := s.gs.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.inTxn = false
	plan := strings.Join(s.runOrdered(`EXPLAIN SELECT * FROM t WHERE a = 7`), "\n")
	if !strings.Contains(plan, "Index Scan using t_a_key on t") {
		t.Errorf("EXPLAIN does not name the index:\n%s", plan)
	}
	if plan := strings.Join(s.runOrdered(`EXPLAIN SELECT * FROM t WHERE v = 7`), "\n"); strings.Contains(plan, "Index Scan") {
		t.Errorf("EXPLAIN names an index for an unindexed column:\n%s", plan)
	}
	// DROP INDEX: the column is read whole again.
	s.run(`DROP INDEX t_a_key`)
	before = readRows(t, e)
	if got := strings.Join(s.run(`SELECT id FROM t WHERE a = 70`), "; "); got != "(10)" {
		t.Errorf("after DROP INDEX: %s", got)
	}
	if n := readRows(t, e) - before; n != 1999 {
		t.Errorf("after DROP INDEX a read by a read %d rows, want the whole table (1999)", n)
	}
}

// TestUniqueIndexCheckedAtCommit: two transactions each insert the same
// value; the first to commit wins and the second's COMMIT fails with
// 23505, the shard checking the index in the commit itself.
func TestUniqueIndexCheckedAtCommit(t *testing.T) {
	e := openQuiet(t, Config{Store: objstore.NewMemory()})
	defer e.Close(context.Background())
	s1, s2 := newRangeSession(t, e), newRangeSession(t, e)
	s1.run(`CREATE TABLE t (id int PRIMARY KEY, a int)`)
	s1.run(`CREATE UNIQUE INDEX t_a_key ON t (a)`)
	ctx := context.Background()
	for _, s := range []*rangeSession{s1, s2} {
		if err := s.gs.Begin(ctx, gateway.TxOptions{}); err != nil {
			t.Fatal(err)
		}
		s.inTxn = true
	}
	s1.run(`INSERT INTO t VALUES (1, 5)`)
	s2.run(`INSERT INTO t VALUES (2, 5)`)
	if err := s1.gs.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	err := s2.gs.Commit(ctx)
	if e, ok := errcode.As(err); !ok || e.State() != "23505" || !strings.Contains(e.Error(), `"t_a_key"`) {
		t.Fatalf("second COMMIT: %v, want 23505 on t_a_key", err)
	}
	s1.inTxn = false
	if got := strings.Join(s1.run(`SELECT * FROM t`), "; "); got != "(1,5)" {
		t.Fatalf("after the failed commit: %s", got)
	}
}
