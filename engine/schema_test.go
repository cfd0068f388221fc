package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/correctness/harness"
	"github.com/rockstream/rockstream/internal/enginetest"
	"github.com/rockstream/rockstream/internal/pgtest"
)

// schemaScript: CREATE / DROP SCHEMA, search_path (per session, SHOW,
// current_schema(s)), schema-qualified names in DDL and DML, the catalog
// relations clients read, and views binding the relations they resolved at
// CREATE. Every outcome (rows, or SQLSTATE and message) must equal
// PostgreSQL 15's, run in a fresh database on both sides.
var schemaScript = []string{
	`CREATE SCHEMA sa`,
	`CREATE SCHEMA sa`,
	`CREATE SCHEMA IF NOT EXISTS sa`,
	`CREATE SCHEMA pg_nope`,
	`CREATE SCHEMA public`,
	`SELECT nspname FROM pg_namespace WHERE nspname IN ('sa', 'public') ORDER BY 1`,
	`SELECT schema_name FROM information_schema.schemata WHERE schema_name IN ('sa', 'public') ORDER BY 1`,
	`CREATE TABLE sa.t (id int PRIMARY KEY, v text)`,
	`CREATE TABLE t (id int PRIMARY KEY, w int)`,
	`CREATE TABLE public.t (id int)`,
	`CREATE TABLE sa.t (id int)`,
	`CREATE TABLE IF NOT EXISTS sa.t (id int)`,
	`INSERT INTO sa.t VALUES (1, 'a'), (2, 'b'), (4, 'd')`,
	`INSERT INTO public.t VALUES (1, 10), (2, 20), (3, 30)`,
	`SELECT * FROM t ORDER BY id`,
	`SELECT * FROM sa.t ORDER BY id`,
	`SELECT t.id, sa.t.v FROM public.t JOIN sa.t USING (id) ORDER BY 1`,
	`SELECT public.t.id, sa.t.v FROM public.t JOIN sa.t ON public.t.id = sa.t.id ORDER BY 1`,
	`SELECT sa.t.* FROM public.t, sa.t WHERE public.t.id = sa.t.id ORDER BY 1`,
	`SELECT t.* FROM public.t, sa.t`,
	`SELECT * FROM sa.t, sa.t`,
	`SELECT * FROM t, public.t`,
	`SHOW search_path`,
	`SELECT current_schema(), current_schemas(false), current_schemas(true)`,
	`SET search_path TO sa, public`,
	`SHOW search_path`,
	`SELECT current_schema(), current_schemas(false), current_schemas(true)`,
	`SELECT * FROM t ORDER BY id`,
	`PREPARE cnt AS SELECT count(*) FROM t WHERE id = 4`,
	`EXECUTE cnt`,
	`SET search_path TO public`,
	`EXECUTE cnt`,
	`SET search_path TO sa, public`,
	`EXECUTE cnt`,
	`DEALLOCATE cnt`,
	`UPDATE t SET v = 'bb' WHERE id = 2 RETURNING *`,
	`DELETE FROM public.t WHERE id = 3`,
	`UPDATE public.t SET w = w + 1 FROM sa.t WHERE public.t.id = sa.t.id RETURNING public.t.*`,
	`CREATE TABLE u (x int, y serial)`,
	`INSERT INTO u (x) VALUES (7), (8)`,
	`SELECT * FROM sa.u ORDER BY x`,
	`SELECT * FROM public.u`,
	`SELECT pg_get_serial_sequence('u', 'y'), pg_get_serial_sequence('sa.u', 'y')`,
	`CREATE SEQUENCE sq2`,
	`SELECT nextval('sq2'), nextval('sa.sq2'), currval('sq2')`,
	`SELECT nextval('public.sq2')`,
	`SELECT column_default FROM information_schema.columns WHERE table_schema = 'sa' AND table_name = 'u' AND column_name = 'y'`,
	`SELECT table_schema, table_name, table_type FROM information_schema.tables WHERE table_schema IN ('public', 'sa') ORDER BY 1, 2`,
	`SELECT n.nspname, c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname IN ('sa', 'public') ORDER BY 1, 2`,
	`SELECT schemaname, tablename FROM pg_tables WHERE schemaname IN ('sa', 'public') ORDER BY 1, 2`,
	`SELECT schemaname, tablename, indexname FROM pg_indexes WHERE schemaname IN ('sa', 'public') ORDER BY 1, 2`,
	`SELECT 'sa.t'::regclass::text, 't'::regclass::text, 'public.t'::regclass::text`,
	`CREATE MATERIALIZED VIEW sa.mv AS SELECT a.id, a.v, b.w FROM sa.t a JOIN public.t b ON a.id = b.id`,
	`SELECT * FROM sa.mv ORDER BY id`,
	`CREATE VIEW v AS SELECT id, v FROM t`,
	`CREATE MATERIALIZED VIEW pmv AS SELECT count(*) AS n FROM t`,
	`SELECT table_schema, table_name FROM information_schema.views WHERE table_schema IN ('public', 'sa') AND table_name = 'v'`,
	`SET search_path TO public`,
	`SELECT * FROM sa.v ORDER BY id`,
	`SELECT * FROM v`,
	`SELECT * FROM sa.pmv`,
	`SELECT 'sa.t'::regclass::text, 't'::regclass::text`,
	`SELECT * FROM nosuch.t`,
	`INSERT INTO nosuch.t VALUES (1)`,
	`CREATE TABLE nosuch.t (a int)`,
	`CREATE VIEW nosuch.v AS SELECT 1`,
	`DROP TABLE nosuch.t`,
	`DROP TABLE IF EXISTS nosuch.t`,
	`INSERT INTO sa.t VALUES (3, 'c')`,
	`REFRESH MATERIALIZED VIEW sa.mv`,
	`REFRESH MATERIALIZED VIEW sa.pmv`,
	`SELECT * FROM sa.mv ORDER BY id`,
	`SELECT * FROM sa.pmv`,
	`ALTER TABLE sa.t ADD COLUMN z int`,
	`SELECT * FROM sa.t ORDER BY id`,
	`ALTER TABLE sa.u RENAME TO u2`,
	`SELECT x FROM sa.u2 ORDER BY x`,
	`CREATE INDEX ON sa.u2 (x)`,
	`SELECT schemaname, tablename, indexname FROM pg_indexes WHERE schemaname = 'sa' ORDER BY 3`,
	`CREATE SEQUENCE sa.seq`,
	`SELECT nextval('sa.seq')`,
	`ALTER SEQUENCE sa.seq RESTART WITH 5`,
	`SELECT nextval('sa.seq'), currval('sa.seq')`,
	`SELECT sequencename, schemaname FROM pg_sequences WHERE schemaname = 'sa' ORDER BY 1`,
	`TRUNCATE sa.u2`,
	`SELECT count(*) FROM sa.u2`,
	`ALTER INDEX sa.u2_x_idx RENAME TO u2_x`,
	`SELECT indexname FROM pg_indexes WHERE schemaname = 'sa' ORDER BY 1`,
	`DROP INDEX sa.u2_x`,
	`COPY sa.t (id, v) TO STDOUT`,
	`DROP SCHEMA sa`,
	`DROP SCHEMA sa RESTRICT`,
	`DROP TABLE sa.u2`,
	`DROP TABLE u2`,
	`DROP SCHEMA nosuch`,
	`DROP SCHEMA IF EXISTS nosuch`,
	`CREATE SCHEMA sb`,
	`CREATE TABLE sb.only (a int)`,
	`CREATE SEQUENCE sb.q`,
	`CREATE TABLE pt (a int, b bigint DEFAULT nextval('sb.q'))`,
	`INSERT INTO pt (a) VALUES (1)`,
	`CREATE VIEW pv AS SELECT a FROM sb.only`,
	`SELECT column_default FROM information_schema.columns WHERE table_name = 'pt' AND column_name = 'b'`,
	`DROP SCHEMA sb`,
	`DROP SCHEMA sb CASCADE`,
	`INSERT INTO pt (a) VALUES (2)`,
	`SELECT * FROM pt ORDER BY a`,
	`SELECT column_default FROM information_schema.columns WHERE table_name = 'pt' AND column_name = 'b'`,
	`SELECT * FROM pv`,
	`DROP TABLE pt`,
	`DROP SCHEMA sa CASCADE`,
	`SELECT nspname FROM pg_namespace WHERE nspname IN ('sa', 'sb')`,
	`SELECT * FROM t ORDER BY id`,
	`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`,
	`SET search_path TO nosuch, public`,
	`SELECT current_schema(), current_schemas(false)`,
	`SET search_path TO nosuch`,
	`SELECT current_schema(), current_schemas(false)`,
	`CREATE TABLE x (a int)`,
	`SELECT * FROM t`,
	`SELECT count(*) FROM pg_class WHERE relname = 'pg_class'`,
	`SET search_path TO "$user", public`,
	`CREATE SCHEMA "Mixed"`,
	`CREATE TABLE "Mixed"."T" (a int)`,
	`INSERT INTO "Mixed"."T" VALUES (5)`,
	`SET search_path = '"Mixed"'`,
	`SELECT current_schema(), a FROM "T"`,
	`SET search_path TO "Mixed"`,
	`SELECT current_schema(), a FROM "T"`,
	`SELECT * FROM "Mixed"."T"`,
	`SET search_path TO public`,
	`DROP SCHEMA "Mixed" CASCADE`,
	`DROP TABLE t`,
}

func TestSchemasMatchPostgres(t *testing.T) {
	srv := enginetest.StartServer(t, t.TempDir())
	rs := harness.ConnectRS(t, srv)
	url, _ := pgtest.Database(t)
	pg := harness.Dial(t, "postgresql", url)
	for _, stmt := range schemaScript {
		if strings.HasPrefix(stmt, "REFRESH ") {
			// PostgreSQL's materialized views are refreshed by hand;
			// RockStream's are maintained.
			if _, err := pg.Exec(stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
			continue
		}
		want, got := outcome(pg, stmt), outcome(rs, stmt)
		if got != want {
			t.Errorf("%s\n  rockstream: %s\n  postgresql: %s", stmt, got, want)
		}
	}
}

// TestSchemasSurviveRestart: schemas, the relations in them (rows COPYed
// into a qualified name included) and views over them, bound to what
// their names resolved to at CREATE, are read back from the control DB
// after a restart and keep being maintained.
func TestSchemasSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	srv := enginetest.StartServer(t, dir)
	rs := harness.ConnectRS(t, srv)
	for _, stmt := range []string{
		`CREATE SCHEMA s`,
		`CREATE TABLE s.t (id serial PRIMARY KEY, k int)`,
		`CREATE TABLE public.u (k int PRIMARY KEY, label text)`,
		`INSERT INTO u VALUES (1, 'one'), (2, 'two')`,
		`SET search_path TO s, public`,
		`CREATE MATERIALIZED VIEW mv AS SELECT label, count(*) AS n FROM t JOIN u USING (k) GROUP BY label`,
		`CREATE VIEW v AS SELECT id, k FROM t`,
	} {
		if _, err := rs.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	n, err := conn.CopyFrom(ctx, pgx.Identifier{"s", "t"}, []string{"k"}, pgx.CopyFromRows([][]any{{int32(1)}, {int32(1)}, {int32(2)}}))
	if err != nil || n != 3 {
		t.Fatalf("COPY s.t: %d rows, %v", n, err)
	}
	_ = conn.Close(ctx)
	check := func(when string) {
		t.Helper()
		for stmt, want := range map[string]string{
			`SELECT label, n FROM s.mv ORDER BY label`:             "one|2; two|1",
			`SELECT count(*) FROM s.v`:                             "3",
			`SELECT nspname FROM pg_namespace WHERE nspname = 's'`: "s",
			`SELECT schemaname, matviewname FROM pg_matviews`:      "s|mv",
			`SELECT table_schema, table_name FROM information_schema.tables WHERE table_name IN ('t', 'u', 'v') ORDER BY 1, 2`: "public|u; s|t; s|v",
		} {
			if got := outcome(rs, stmt); got != want {
				t.Errorf("%s: %s: got %s, want %s", when, stmt, got, want)
			}
		}
	}
	check("before the restart")
	srv.Stop()
	srv = enginetest.StartServer(t, dir)
	rs = harness.ConnectRS(t, srv)
	check("after the restart")
	// The views keep reading s.t: a public.t created since does not
	// take their name, whatever the search_path.
	for _, stmt := range []string{
		`CREATE TABLE t (id int, k int)`,
		`INSERT INTO t VALUES (9, 1)`,
		`INSERT INTO s.t (k) VALUES (2)`,
	} {
		if _, err := rs.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if got := outcome(rs, `SELECT label, n FROM s.mv ORDER BY label`); got != "one|2; two|2" {
		t.Errorf("s.mv after the restart: %s", got)
	}
	if got := outcome(rs, `SELECT count(*) FROM s.v`); got != "4" {
		t.Errorf("s.v after the restart: %s", got)
	}
	if got := outcome(rs, `SELECT max(id) > 3 FROM s.t`); got != "t" {
		t.Errorf("s.t's serial after the restart: %s", got)
	}
	// pg_get_viewdef (psql's \d+) qualifies a name only where the
	// session's search_path would resolve it elsewhere, as PostgreSQL.
	for _, c := range []struct{ path, want string }{
		{"public", "SELECT id, k FROM s.t"},
		{"s, public", "SELECT id, k FROM t"},
	} {
		if _, err := rs.Exec("SET search_path TO " + c.path); err != nil {
			t.Fatal(err)
		}
		if got := outcome(rs, `SELECT pg_get_viewdef('s.v'::regclass)`); got != c.want {
			t.Errorf("search_path %s: pg_get_viewdef(s.v) = %q, want %q", c.path, got, c.want)
		}
		if got := outcome(rs, `SELECT definition FROM pg_views WHERE schemaname = 's'`); got != c.want {
			t.Errorf("search_path %s: pg_views.definition = %q, want %q", c.path, got, c.want)
		}
	}
}
