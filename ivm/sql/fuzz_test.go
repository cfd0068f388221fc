package sql_test

import (
	"testing"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql"
)

// compileSeeds are statements of every shape the compiler handles.
//
//lint:immutable a constant seed corpus.
var compileSeeds = []string{
	"SELECT a, b + 1, c || 'x' FROM t WHERE b > 1 ORDER BY a LIMIT 2",
	"SELECT b, count(*), sum(a) FROM t GROUP BY b HAVING count(*) > 1",
	"SELECT * FROM t JOIN u ON t.b = u.k LEFT JOIN u u2 USING (k)",
	"SELECT a FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.k = t.b) OR a IN (SELECT v FROM u)",
	"SELECT a, (SELECT max(v) FROM u WHERE u.k = t.a) FROM t",
	"WITH x AS (SELECT * FROM t) SELECT * FROM x NATURAL JOIN x y",
	"SELECT DISTINCT ON (b) * FROM t ORDER BY b, a",
	"VALUES (1, 'a'), (2, NULL) UNION SELECT a, c FROM t",
	"INSERT INTO t VALUES ($1, $2, $3) ON CONFLICT (a) DO UPDATE SET b = excluded.b RETURNING *",
	"UPDATE t SET b = b + 1 WHERE a IN (SELECT k FROM u) RETURNING a",
	"DELETE FROM t WHERE a = $1",
	"CREATE TABLE z (a int PRIMARY KEY, b numeric(10,2) DEFAULT 1.5, c varchar(3) NOT NULL)",
	"CREATE MATERIALIZED VIEW mv AS SELECT b, count(*) FROM t GROUP BY b",
	"EXPLAIN INCREMENTAL SELECT * FROM t",
	"SELECT CASE a WHEN 1 THEN 'x' END, coalesce(b, a), nullif(a, b), greatest(a, b, 3) FROM t",
	"SELECT a::text::int, CAST(b AS float8) / 2, -a, a % 2 FROM t",
}

// FuzzCompile feeds arbitrary text to the whole compiler: it must return
// statements or a coded error, never panic.
func FuzzCompile(f *testing.F) {
	for _, s := range compileSeeds {
		f.Add(s)
	}
	e := newEngine()
	if _, err := e.exec(`CREATE TABLE t (a int PRIMARY KEY, b int, c text); CREATE TABLE u (k int PRIMARY KEY, v int, g text)`); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		stmts, err := sql.Compile(e.cat, s, sql.Options{})
		if err != nil {
			if _, ok := errcode.As(err); !ok {
				t.Fatalf("%q: untyped error %v", s, err)
			}
			return
		}
		for _, st := range stmts {
			if q, ok := st.(*sql.Query); ok {
				_ = sql.ExplainQuery(q)
			}
		}
	})
}
