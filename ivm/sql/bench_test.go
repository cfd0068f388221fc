package sql_test

import (
	"testing"

	"github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/sqltest"
	"github.com/rockstream/rockstream/ivm/types"
)

// BenchmarkCompileQuery measures parse + bind + optimize of a join with
// grouping and a correlated EXISTS (the per-statement compile cost a
// session pays without a prepared-statement cache).
func BenchmarkCompileQuery(b *testing.B) {
	e := newEngine()
	if _, err := e.exec(coverageSchema); err != nil {
		b.Fatal(err)
	}
	const q = "SELECT t.b, count(*), sum(u.v) FROM t JOIN u ON t.b = u.k WHERE t.c = $1 AND EXISTS (SELECT 1 FROM u u2 WHERE u2.v = t.a) GROUP BY t.b ORDER BY 2 DESC LIMIT 10"
	for b.Loop() {
		if _, err := sql.CompileQuery(e.cat, q, sql.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunQuery measures an ad-hoc point query end to end (compile,
// build the circuit, run once over a 1000-row table).
func BenchmarkRunQuery(b *testing.B) {
	e := newEngine()
	if _, err := e.exec(coverageSchema); err != nil {
		b.Fatal(err)
	}
	rel, _ := e.cat.LookupRelation([]string{"t"})
	var rows []types.Row
	for i := 0; i < 1000; i++ {
		rows = append(rows, types.Row{int64(i), int64(i % 7), "x"})
	}
	store := sqltest.NewStore()
	if _, err := store.Insert(rel, rows); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		q, err := sql.CompileQuery(e.cat, "SELECT b, count(*) FROM t WHERE a > 10 GROUP BY b", sql.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := sql.RunQuery(q, store, env()); err != nil {
			b.Fatal(err)
		}
	}
}
