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

// TestBackfillColumnsMatchRows: a view backfilled from tables decoded
// straight into columns (the default, for a view whose circuit steps
// columns) holds exactly the rows the row decoding gives (backfillRows),
// and the rows its query returns, for random tables with NULLs, text,
// floats, dates, timestamps, booleans, a numeric column (its table is
// decoded into rows either way), a column added by ALTER TABLE with a
// default (rows stored before it are padded), and filter, projection,
// GROUP BY and join views; on one shard and on three, where GROUP BY views
// are spread over the view shards and each part keeps its share of the
// rows.
func TestBackfillColumnsMatchRows(t *testing.T) {
	for _, shards := range []int{1, 3} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			ctx := context.Background()
			cols := openQuiet(t, Config{Store: objstore.NewMemory(), Shards: shards})
			defer cols.Close(ctx)
			rows := openQuiet(t, Config{Store: objstore.NewMemory(), Shards: shards, backfillRows: true})
			defer rows.Close(ctx)
			both := func(sql string) {
				t.Helper()
				mustSQL(t, cols, sql)
				mustSQL(t, rows, sql)
			}
			r := rand.New(rand.NewPCG(uint64(shards), 7))
			both(`CREATE TABLE t (k bigint PRIMARY KEY, a int, b text, c double precision, d boolean, e date, f timestamp)`)
			both(`CREATE TABLE u (id int PRIMARY KEY, name text)`)
			both(`CREATE TABLE w (k int PRIMARY KEY, n numeric, s text)`)
			null := func(p float64, v string) string {
				if r.Float64() < p {
					return "NULL"
				}
				return v
			}
			insertT := func(from, to int) {
				var vals []string
				for k := from; k < to; k++ {
					vals = append(vals, fmt.Sprintf("(%d, %s, %s, %s, %s, %s, %s)", k,
						null(0.1, fmt.Sprint(r.IntN(21)-10)),
						null(0.1, fmt.Sprintf("'s%d%s'", r.IntN(7), strings.Repeat("x", r.IntN(3)))),
						null(0.1, fmt.Sprintf("%g", float64(r.IntN(2000))/1000-1)),
						null(0.1, fmt.Sprint(r.IntN(2) == 0)),
						null(0.1, fmt.Sprintf("'2024-01-%02d'", 1+r.IntN(28))),
						null(0.1, fmt.Sprintf("'2024-01-01 %02d:%02d:00'", r.IntN(24), r.IntN(60)))))
				}
				both(`INSERT INTO t VALUES ` + strings.Join(vals, ", "))
			}
			insertT(0, 400)
			// Rows stored before the ALTER read z as its default.
			both(`ALTER TABLE t ADD COLUMN z int DEFAULT 7`)
			insertT(400, 600)
			both(`UPDATE t SET z = k % 4 WHERE k % 3 = 0`)
			both(`DELETE FROM t WHERE k % 11 = 0`)
			var vals []string
			for id := -10; id <= 10; id++ {
				vals = append(vals, fmt.Sprintf("(%d, %s)", id, null(0.2, fmt.Sprintf("'u%d'", id))))
			}
			both(`INSERT INTO u VALUES ` + strings.Join(vals, ", "))
			vals = nil
			for k := range 300 {
				vals = append(vals, fmt.Sprintf("(%d, %s, %s)", k, null(0.1, fmt.Sprintf("%d.%02d", r.IntN(100)-50, r.IntN(100))), null(0.1, fmt.Sprintf("'g%d'", r.IntN(5)))))
			}
			both(`INSERT INTO w VALUES ` + strings.Join(vals, ", "))
			views := []string{
				`SELECT * FROM t`,
				`SELECT k, a * 2 AS a2, b, z FROM t WHERE a > 0`,
				`SELECT k, b || '-' || coalesce(z, -1) AS bz, e FROM t WHERE e IS NULL OR f > '2024-01-01 12:00:00'`,
				`SELECT b, count(*) AS n, sum(a) AS s, min(c) AS lo, max(z) AS hi FROM t GROUP BY b`,
				`SELECT a % 3 AS g, d, count(*) AS n, sum(c) AS s FROM t WHERE c > -0.5 GROUP BY a % 3, d`,
				`SELECT t.k, t.b, u.name FROM t JOIN u ON t.a = u.id WHERE t.c > 0`,
				`SELECT s, sum(n) AS total, count(*) AS n FROM w GROUP BY s`,
			}
			for i, q := range views {
				both(fmt.Sprintf(`CREATE MATERIALIZED VIEW v%d AS %s`, i, q))
			}
			st, err := cols.Status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.BackfillColumnarRows == 0 {
				t.Fatal("no view was backfilled from columns")
			}
			if st, err := rows.Status(ctx); err != nil || st.BackfillColumnarRows != 0 {
				t.Fatalf("backfillRows decoded %d rows into columns (%v)", st.BackfillColumnarRows, err)
			}
			sorted := func(e *Engine, sql string) []string {
				t.Helper()
				out := strings.Split(mustSQL(t, e, sql), "; ")
				slices.Sort(out)
				return out
			}
			for i, q := range views {
				got := sorted(cols, fmt.Sprintf(`SELECT * FROM v%d`, i))
				if want := sorted(rows, fmt.Sprintf(`SELECT * FROM v%d`, i)); !slices.Equal(got, want) {
					t.Errorf("view %s backfilled from columns:\n%s\nfrom rows:\n%s", q, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				if want := sorted(cols, q); !slices.Equal(got, want) {
					t.Errorf("view %s backfilled from columns:\n%s\nits query:\n%s", q, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				if len(got) < 2 {
					t.Errorf("view %s holds %d rows: the data exercise too little", q, len(got))
				}
			}
		})
	}
}
