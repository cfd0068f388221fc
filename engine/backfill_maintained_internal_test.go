package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/slate/objstore"
)

// TestBackfillMatchesMaintained: a view backfilled from rows already in
// its tables (its state held in memory while the rows are fed, then
// written sorted; the join's sides arranged a row at a time from chunks
// of table rows) holds the same rows as the same view created before the
// rows and maintained through their commits, and as its query, for
// joins (inner, LEFT, a side projected to duplicate rows, an aggregate
// over an outer join), GROUP BY and a filter, with NULL and dangling
// join keys; and both stay equal as updates and deletes then change
// rows each of them arranged. On one shard and on three.
func TestBackfillMatchesMaintained(t *testing.T) {
	for _, shards := range []int{1, 3} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			ctx := context.Background()
			e := openQuiet(t, Config{Store: objstore.NewMemory(), Shards: shards})
			defer e.Close(ctx)
			r := rand.New(rand.NewPCG(uint64(shards), 11))
			mustSQL(t, e, `CREATE TABLE t (k bigint PRIMARY KEY, a int, b text)`)
			mustSQL(t, e, `CREATE TABLE u (id int PRIMARY KEY, name text)`)
			views := []string{
				`SELECT t.k, t.b, u.name FROM t JOIN u ON t.a = u.id`,
				`SELECT x.a, x.b, u.name FROM (SELECT a, b FROM t) x JOIN u ON x.a = u.id`,
				`SELECT t.k, t.a, u.name FROM t LEFT JOIN u ON t.a = u.id`,
				`SELECT u.id, count(t.k) AS n, sum(t.k) AS s FROM u LEFT JOIN t ON t.a = u.id GROUP BY u.id`,
				`SELECT a, count(*) AS n, sum(k) AS s, max(b) AS hi FROM t GROUP BY a`,
				`SELECT k, a * 2 AS a2, b FROM t WHERE k % 3 = 1`,
			}
			for i, q := range views {
				mustSQL(t, e, fmt.Sprintf(`CREATE MATERIALIZED VIEW m%d AS %s`, i, q))
			}
			null := func(p float64, v string) string {
				if r.Float64() < p {
					return "NULL"
				}
				return v
			}
			insertT := func(from, to int) {
				var vals []string
				for k := from; k < to; k++ {
					vals = append(vals, fmt.Sprintf("(%d, %s, %s)", k, null(0.05, fmt.Sprint(r.IntN(70)-5)), null(0.05, fmt.Sprintf("'b%d'", r.IntN(4)))))
				}
				mustSQL(t, e, `INSERT INTO t VALUES `+strings.Join(vals, ", "))
			}
			for from := 0; from < 3000; from += 500 {
				insertT(from, from+500)
			}
			var vals []string
			for id := range 60 {
				vals = append(vals, fmt.Sprintf("(%d, %s)", id, null(0.1, fmt.Sprintf("'u%d'", id))))
			}
			mustSQL(t, e, `INSERT INTO u VALUES `+strings.Join(vals, ", "))
			for i, q := range views {
				mustSQL(t, e, fmt.Sprintf(`CREATE MATERIALIZED VIEW b%d AS %s`, i, q))
			}
			sorted := func(sql string) []string {
				t.Helper()
				out := strings.Split(mustSQL(t, e, sql), "; ")
				slices.Sort(out)
				return out
			}
			check := func(when string) {
				t.Helper()
				for i, q := range views {
					got := sorted(fmt.Sprintf(`SELECT * FROM b%d`, i))
					if want := sorted(fmt.Sprintf(`SELECT * FROM m%d`, i)); !slices.Equal(got, want) {
						t.Fatalf("%s: view %s backfilled holds %d rows, maintained %d:\n%s\nmaintained:\n%s", when, q, len(got), len(want), strings.Join(got, "\n"), strings.Join(want, "\n"))
					}
					if want := sorted(q); !slices.Equal(got, want) {
						t.Fatalf("%s: view %s backfilled holds %d rows, its query %d", when, q, len(got), len(want))
					}
					if len(got) < 10 {
						t.Fatalf("%s: view %s holds %d rows: the data exercise too little", when, q, len(got))
					}
				}
			}
			check("after the backfill")
			mustSQL(t, e, `UPDATE t SET a = a + 1 WHERE k % 7 = 0`)
			mustSQL(t, e, `UPDATE t SET b = 'b9' WHERE k % 11 = 0`)
			mustSQL(t, e, `DELETE FROM t WHERE k % 5 = 0`)
			mustSQL(t, e, `DELETE FROM u WHERE id % 4 = 0`)
			insertT(3000, 3400)
			check("after updates and deletes")
		})
	}
}
