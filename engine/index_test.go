package engine_test

import (
	"strings"
	"testing"

	"github.com/rockstream/rockstream/correctness/harness"
	"github.com/rockstream/rockstream/internal/enginetest"
)

// indexScript exercises CREATE INDEX and DROP INDEX; every statement's
// outcome (rows, or SQLSTATE and message) must equal PostgreSQL 15's.
// What is compared is the DDL's acceptance, naming and errors (uniqueindex_test.go
// covers what an index does).
var indexScript = []string{
	`CREATE TABLE t (id int PRIMARY KEY, a int, b text)`,
	`INSERT INTO t VALUES (1, 10, 'x'), (2, 20, 'y')`,
	`CREATE INDEX t_a_idx ON t (a)`,
	`CREATE INDEX t_a_idx ON t (b)`,
	`CREATE INDEX IF NOT EXISTS t_a_idx ON t (b)`,
	`CREATE INDEX ON t (a, b)`,
	`CREATE INDEX ON t (a)`,
	`CREATE INDEX ON t (a, b, id, a, b, id, a, b, id, a, b, id, a, b, id, a, b, id, a, b, id, a, b, id, a, b, id, a, b, id)`,
	`CREATE INDEX ON t (a, b, id, a, b, id, a, b, id, a, b, id, a, b, id, a, b, id, a, b, id, a, b, id, a, b, id, a, b, id)`,
	`SELECT relname FROM pg_class WHERE relname LIKE 't_a_b_id_a%' ORDER BY 1`,
	`CREATE INDEX CONCURRENTLY IF NOT EXISTS t_b_idx ON t USING btree (b DESC NULLS LAST, a)`,
	`CREATE INDEX t_b_like ON t (b text_pattern_ops)`,
	`CREATE INDEX x ON missing (a)`,
	`CREATE INDEX IF NOT EXISTS t_a_idx ON missing (a)`,
	`CREATE INDEX x ON t (nope)`,
	`CREATE INDEX t ON t (a)`,
	`CREATE INDEX t_pkey ON t (a)`,
	`CREATE TABLE t_a_idx (x int)`,
	`CREATE TABLE t_pkey (x int)`,
	`CREATE TABLE IF NOT EXISTS t_pkey (x int)`,
	`CREATE INDEX u_pkey ON t (a)`,
	`CREATE TABLE u (id int PRIMARY KEY)`,
	`CREATE TABLE u (id int)`,
	`SELECT indexname, replace(indexdef, current_schema() || '.', 'public.') FROM pg_indexes WHERE indexname LIKE 'u\_%' ORDER BY 1`,
	`SELECT conname FROM pg_constraint WHERE conname LIKE 'u\_%'`,
	`DROP TABLE u`,
	`DROP INDEX u_pkey`,
	`CREATE UNIQUE INDEX t_id_key ON t (id)`,
	`CREATE UNIQUE INDEX ON t (id DESC)`,
	`SELECT * FROM t_a_idx`,
	`INSERT INTO t_a_idx VALUES (1)`,
	`SELECT * FROM t ORDER BY id`,
	`SELECT relname FROM pg_class WHERE relname IN ('t_a_idx', 't_a_idx1', 't_a_b_idx', 't_b_idx', 't_b_like', 't_id_key', 't_id_idx', 't_pkey') ORDER BY 1`,
	`ALTER INDEX t_b_like RENAME TO t_b_pattern`,
	`ALTER INDEX t_b_like RENAME TO t_b_pattern`,
	`ALTER INDEX t_b_pattern RENAME TO t_pkey`,
	`ALTER TABLE t RENAME TO t_b_pattern`,
	`DROP INDEX t_a_idx`,
	`DROP INDEX t_a_idx`,
	`DROP INDEX IF EXISTS t_a_idx`,
	`DROP INDEX t_pkey`,
	`DROP INDEX t`,
	`DROP TABLE t_a_b_idx`,
	`DROP INDEX CONCURRENTLY t_a_idx1`,
	`DROP INDEX t_b_idx CASCADE`,
	`BEGIN`,
	`CREATE INDEX CONCURRENTLY t_c ON t (a)`,
	`ROLLBACK`,
	`BEGIN`,
	`DROP INDEX CONCURRENTLY IF EXISTS t_c`,
	`ROLLBACK`,
	`CREATE MATERIALIZED VIEW mv AS SELECT a, count(*) AS n FROM t GROUP BY a`,
	`CREATE INDEX ON mv (a)`,
	`SELECT relname FROM pg_class WHERE relname = 'mv_a_idx'`,
	`DROP MATERIALIZED VIEW mv`,
	`SELECT relname FROM pg_class WHERE relname = 'mv_a_idx'`,
	`CREATE VIEW v AS SELECT a FROM t`,
	`CREATE INDEX ON v (a)`,
	`CREATE TABLE t_a_idx (x int)`,
	`DROP TABLE t_a_idx`,
	// Dropping a table drops its indexes.
	`DROP TABLE t CASCADE`,
	`SELECT count(*) FROM pg_class WHERE relname LIKE 't\_%'`,
	`CREATE TABLE t (id int PRIMARY KEY, a int)`,
	`CREATE INDEX t_a_b_idx ON t (a)`,
	`DROP TABLE t`,
}

// TestIndexesMatchPostgres runs indexScript on RockStream and on
// PostgreSQL 15 and compares every statement's outcome.
func TestIndexesMatchPostgres(t *testing.T) {
	srv := enginetest.StartServer(t, t.TempDir())
	rs := harness.ConnectRS(t, srv)
	pg := harness.ConnectPG(t)
	checkScriptMatchesPostgres(t, rs, pg, indexScript)
}

// TestIndexRefusals: what an index could not honour (a unique one on a
// table without a primary key, which keeps no index structure) is refused
// at DDL time, naming the construct (PostgreSQL accepts
// all of these).
func TestIndexRefusals(t *testing.T) {
	srv := enginetest.StartServer(t, t.TempDir())
	rs := harness.ConnectRS(t, srv)
	for _, stmt := range []string{`CREATE TABLE t (id int PRIMARY KEY, a int, b text)`, `CREATE TABLE k (a int, b int)`} {
		if _, err := rs.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ stmt, want string }{
		{`CREATE UNIQUE INDEX k_a_key ON k (a)`, "RS-2115"},
		{`CREATE UNIQUE INDEX k_a_key ON k (a)`, "CREATE UNIQUE INDEX on (a)"},
		{`CREATE INDEX ON t (lower(b))`, "expression indexes"},
		{`CREATE INDEX ON t (a) WHERE a > 0`, "partial indexes"},
		{`CREATE INDEX ON t (a) INCLUDE (b)`, "INCLUDE"},
		{`CREATE INDEX ON t USING hash (a)`, "index access method hash"},
		{`CREATE INDEX ON t USING gin (b)`, "index access method gin"},
		{`CREATE INDEX ON t (a) WITH (fillfactor = 70)`, "storage parameters"},
		{`CREATE INDEX ON t (b COLLATE "C")`, "COLLATE"},
		{`CREATE INDEX ON t (b int4_minmax_ops)`, "operator class int4_minmax_ops"},
	} {
		_, err := rs.Exec(c.stmt)
		if err == nil {
			t.Errorf("%s: accepted", c.stmt)
			continue
		}
		if msg := harness.ErrorText(err); !strings.Contains(msg, "0A000") || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %s, want 0A000 and %q", c.stmt, msg, c.want)
		}
	}
	// Nothing was created by the refused statements.
	if n := scalarInt(t, rs, `SELECT count(*) FROM pg_class WHERE relkind = 'i' AND relname <> 't_pkey'`); n != 0 {
		t.Fatalf("%d indexes after refusals", n)
	}
}

// TestIndexesSurviveRestart: an index is a durable catalog object: after a
// restart it still takes its name, and DROP INDEX finds it.
func TestIndexesSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	srv := enginetest.StartServer(t, dir)
	rs := harness.ConnectRS(t, srv)
	for _, stmt := range []string{`CREATE TABLE t (id int PRIMARY KEY, a int)`, `CREATE INDEX t_a_idx ON t (a DESC NULLS LAST, id)`} {
		if _, err := rs.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	srv.Stop()
	srv = enginetest.StartServer(t, dir)
	rs = harness.ConnectRS(t, srv)
	res, err := rs.Exec(`SELECT indexdef FROM pg_indexes WHERE indexname = 't_a_idx'`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(harness.Lines(res.Rows), "; "), "CREATE INDEX t_a_idx ON public.t USING btree (a DESC NULLS LAST, id)"; got != want {
		t.Fatalf("after a restart pg_indexes shows %q, want %q", got, want)
	}
	if _, err := rs.Exec(`CREATE INDEX t_a_idx ON t (a)`); err == nil || !strings.Contains(harness.ErrorText(err), "42P07") {
		t.Fatalf("re-creating the index after a restart: %v, want 42P07", err)
	}
	if _, err := rs.Exec(`DROP INDEX t_a_idx`); err != nil {
		t.Fatalf("DROP INDEX after a restart: %v", err)
	}
	if _, err := rs.Exec(`CREATE INDEX t_a_idx ON t (a)`); err != nil {
		t.Fatal(err)
	}
}

// indexCatalogScript: indexes as the catalog shows them (pg_indexes,
// pg_class, pg_index, pg_attribute, pg_get_indexdef), compared with
// PostgreSQL 15 (oids replaced by names).
var indexCatalogScript = []string{
	`CREATE TABLE ct (id int PRIMARY KEY, a int, "B c" text, d varchar(20))`,
	`CREATE TABLE cn (x int, y int)`,
	`CREATE INDEX ct_a_idx ON ct (a)`,
	`CREATE INDEX ON ct (a DESC, "B c" NULLS FIRST)`,
	`CREATE INDEX ct_d ON ct (d varchar_pattern_ops DESC NULLS LAST)`,
	`CREATE UNIQUE INDEX ct_id ON ct (id)`,
	`CREATE INDEX "Odd Name" ON cn (y, x)`,
	`SELECT schemaname = current_schema(), tablename, indexname, tablespace, replace(indexdef, current_schema() || '.', 'public.') FROM pg_indexes WHERE tablename IN ('ct', 'cn') ORDER BY indexname`,
	`SELECT c.relname, c.relkind, c.relnatts, c.relhasindex, am.amname FROM pg_class c LEFT JOIN pg_am am ON am.oid = c.relam WHERE c.relname LIKE 'ct%' OR c.relname IN ('cn', 'Odd Name') ORDER BY 1`,
	`SELECT i.relname, t.relname, x.indnatts, x.indnkeyatts, x.indisunique, x.indisprimary, x.indisvalid, array_to_string(x.indkey::int2[], ' '), array_to_string(x.indoption::int2[], ' '), x.indexprs, x.indpred FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid WHERE t.relname IN ('ct', 'cn') ORDER BY 1`,
	`SELECT c.relname, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid WHERE c.relkind = 'i' AND c.relname IN ('ct_a_idx', 'ct_a_B c_idx', 'ct_d', 'Odd Name') ORDER BY 1, 2`,
	`SELECT i.relname, replace(pg_get_indexdef(i.oid), current_schema() || '.', 'public.'), pg_get_indexdef(i.oid, 1, true), pg_get_indexdef(i.oid, 2, true) FROM pg_class i WHERE i.relkind = 'i' AND i.relname IN ('ct_a_idx', 'ct_a_B c_idx', 'ct_d', 'ct_id', 'Odd Name', 'ct_pkey') ORDER BY 1`,
	`SELECT tablename, hasindexes FROM pg_tables WHERE tablename IN ('ct', 'cn') ORDER BY 1`,
	`SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'ct%' ORDER BY 1`,
	`ALTER TABLE ct RENAME TO ct2`,
	`SELECT tablename, indexname, replace(indexdef, current_schema() || '.', 'public.') FROM pg_indexes WHERE tablename = 'ct2' ORDER BY indexname`,
	`DROP INDEX ct_a_idx`,
	`SELECT indexname FROM pg_indexes WHERE tablename = 'ct2' ORDER BY indexname`,
	`DROP TABLE ct2`,
	`DROP TABLE cn`,
	`SELECT count(*) FROM pg_indexes WHERE tablename IN ('ct2', 'cn')`,
}

// TestIndexCatalogMatchesPostgres runs indexCatalogScript on RockStream and
// on PostgreSQL 15 and compares every statement's outcome.
func TestIndexCatalogMatchesPostgres(t *testing.T) {
	srv := enginetest.StartServer(t, t.TempDir())
	rs := harness.ConnectRS(t, srv)
	pg := harness.ConnectPG(t)
	checkScriptMatchesPostgres(t, rs, pg, indexCatalogScript)
}
