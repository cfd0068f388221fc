package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/enginetest"
	"github.com/rockstream/rockstream/internal/pgtest"
)

// TestPgPreparedStatementsMatchesPostgres: pg_prepared_statements lists a
// session's named statements, prepared with Parse (a driver's named
// statement) or SQL PREPARE, with PostgreSQL 15's columns and types, and
// the same rows: the creating message's text, parameter types as regtype
// names, from_sql, and the executions of parameterless statements as
// generic plans. The unnamed statement is not listed; DEALLOCATE removes
// a row; other sessions' statements are not shown.
func TestPgPreparedStatementsMatchesPostgres(t *testing.T) {
	ctx := context.Background()
	srv := enginetest.StartServer(t, t.TempDir())
	results := map[string][]string{}
	for _, target := range []struct{ name, url string }{{"rockstream", srv.URL}, {"postgresql", pgtest.Start(t)}} {
		c, err := pgconn.Connect(ctx, target.url)
		if err != nil {
			t.Fatal(err)
		}
		other, err := pgconn.Connect(ctx, target.url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close(ctx); _ = other.Close(ctx) })
		run := func(conn *pgconn.PgConn, sql string) string {
			res, err := conn.Exec(ctx, sql).ReadAll()
			if err != nil {
				return "ERROR " + err.Error()
			}
			var lines []string
			for _, r := range res {
				for _, row := range r.Rows {
					parts := make([]string, len(row))
					for i, v := range row {
						parts[i] = string(v)
					}
					lines = append(lines, strings.Join(parts, "|"))
				}
			}
			return strings.Join(lines, "\n")
		}
		if _, err := other.Prepare(ctx, "others", "SELECT 1", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Prepare(ctx, "drv_sel", "SELECT $1::int + 1, $2::text", nil); err != nil {
			t.Fatalf("%s: %v", target.name, err)
		}
		if _, err := c.Prepare(ctx, "drv_noparam", "SELECT 42", nil); err != nil {
			t.Fatalf("%s: %v", target.name, err)
		}
		if _, err := c.Prepare(ctx, "", "SELECT 7", nil); err != nil {
			t.Fatalf("%s: %v", target.name, err)
		}
		for i := 0; i < 3; i++ {
			if _, err := c.ExecPrepared(ctx, "drv_noparam", nil, nil, nil).Close(); err != nil {
				t.Fatal(err)
			}
		}
		got := []string{
			run(c, `PREPARE sql_a (int, text) AS SELECT $1, $2; PREPARE sql_b AS SELECT 1`),
			run(c, `EXECUTE sql_b`),
			run(c, `SELECT name, statement, parameter_types, from_sql, generic_plans, custom_plans,
				prepare_time <= now(), prepare_time > now() - interval '1 hour'
				FROM pg_prepared_statements ORDER BY name`),
			run(c, `DEALLOCATE sql_a`),
			run(c, `SELECT name FROM pg_prepared_statements ORDER BY name`),
			run(c, `SELECT count(*) FROM pg_prepared_statements WHERE name = 'others'`),
		}
		// The columns' names and types.
		rr := c.ExecParams(ctx, `SELECT * FROM pg_prepared_statements WHERE false`, nil, nil, nil, nil)
		var cols []string
		for _, f := range rr.FieldDescriptions() {
			cols = append(cols, fmt.Sprintf("%s:%d", f.Name, f.DataTypeOID))
		}
		if _, err := rr.Close(); err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Join(cols, " "))
		results[target.name] = got
	}
	rs, pg := results["rockstream"], results["postgresql"]
	if !strings.Contains(pg[len(pg)-1], "parameter_types:2211") {
		t.Fatalf("PostgreSQL's columns not read: %q", pg[len(pg)-1])
	}
	for i := range pg {
		if rs[i] != pg[i] {
			t.Errorf("check %d:\n  rockstream: %s\n  postgresql: %s", i, rs[i], pg[i])
		}
	}
}
