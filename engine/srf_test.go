package engine_test

import (
	"testing"

	"github.com/rockstream/rockstream/correctness/harness"
	"github.com/rockstream/rockstream/internal/enginetest"
)

// srfScript exercises set-returning functions in the SELECT list (ad-hoc
// queries) and their rejection elsewhere; every outcome must equal
// PostgreSQL 15's (views: RockStream rejects them, naming the construct).
var srfScript = []string{
	`CREATE TABLE a (k int PRIMARY KEY, arr int[], n int)`,
	`INSERT INTO a VALUES (1, '{10,20,30}', 2), (2, '{}', 0), (3, NULL, 3), (4, '{7}', 1)`,
	`SELECT generate_series(1, 3)`,
	`SELECT generate_series(1, 3) AS g, 'row' || generate_series(1, 3) AS label ORDER BY 1`,
	`SELECT k, generate_series(1, n) FROM a ORDER BY 1, 2`,
	`SELECT k, unnest(arr) AS v FROM a ORDER BY k, v`,
	`SELECT k, unnest(arr) AS v, generate_subscripts(arr, 1) AS i FROM a ORDER BY k, i`,
	// Different lengths: the shorter result is padded with NULLs.
	`SELECT k, generate_series(1, n) AS g, unnest(arr) AS v FROM a ORDER BY k, g NULLS LAST, v NULLS LAST`,
	`SELECT k, generate_series(1, 2) * 10 + k AS x FROM a WHERE k < 3 ORDER BY x`,
	`SELECT (information_schema._pg_expandarray(arr)).x, (information_schema._pg_expandarray(arr)).n FROM a WHERE k = 1 ORDER BY 2`,
	`SELECT (information_schema._pg_expandarray(arr)).nope FROM a`,
	// A record-valued column of a subquery, read by field (pgjdbc's
	// getPrimaryKeys).
	`SELECT r.k, (r.e).x, (r.e).n, r.seq FROM (SELECT k, information_schema._pg_expandarray(arr) AS e, (information_schema._pg_expandarray(arr)).n AS seq FROM a) r WHERE (r.e).x > 10 ORDER BY r.k, r.seq`,
	`SELECT (r.e).nope FROM (SELECT information_schema._pg_expandarray(arr) AS e FROM a) r`,
	`SELECT count(*) FROM (SELECT information_schema._pg_expandarray(arr) AS e FROM a) r`,
	`SELECT DISTINCT unnest(arr) % 2 AS parity FROM a ORDER BY 1`,
	`SELECT count(*) FROM (SELECT unnest(arr) FROM a) s`,
	`SELECT s.v FROM (SELECT k, unnest(arr) AS v FROM a) s WHERE s.v > 10 ORDER BY 1`,
	`SELECT k FROM a WHERE k IN (SELECT generate_series(1, 2)) ORDER BY 1`,
	`INSERT INTO a (k, n) SELECT generate_series(10, 12), 0`,
	`SELECT k FROM a WHERE k >= 10 ORDER BY 1`,
	`SELECT k FROM a WHERE generate_series(1, 2) = k`,
	`SELECT sum(generate_series(1, 3))`,
	// text || anynonarray converts the other side with its output function.
	`SELECT 'x' || 1, 1.5 || 'y'::text, 'd' || '2024-01-02'::date, 'n' || NULL::int, true || 'b'`,
	`SELECT 1 || 2`,
	`SELECT a.attname, k.ord FROM (SELECT unnest(ARRAY[2, 1]) AS attnum, generate_subscripts(ARRAY[2, 1], 1) AS ord) k JOIN (VALUES (1, 'one'), (2, 'two')) AS a(attnum, attname) ON a.attnum = k.attnum ORDER BY k.ord`,
}

// TestSelectListSRFsMatchPostgres runs srfScript on RockStream and on
// PostgreSQL 15 and compares every statement's outcome.
func TestSelectListSRFsMatchPostgres(t *testing.T) {
	srv := enginetest.StartServer(t, t.TempDir())
	rs := harness.ConnectRS(t, srv)
	pg := harness.ConnectPG(t)
	checkScriptMatchesPostgres(t, rs, pg, srfScript)
}

// TestSelectListSRFsRejectedInViews: a materialized view cannot maintain a
// set-returning function of its SELECT list; it is rejected with RS-2001
// naming the construct, never silently mis-maintained.
func TestSelectListSRFsRejectedInViews(t *testing.T) {
	srv := enginetest.StartServer(t, t.TempDir())
	rs := harness.ConnectRS(t, srv)
	if _, err := rs.Exec(`CREATE TABLE a (k int PRIMARY KEY, arr int[])`); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{
		`CREATE MATERIALIZED VIEW mv AS SELECT k, unnest(arr) FROM a`,
		`CREATE MATERIALIZED VIEW mv AS SELECT k, generate_series(1, k) FROM a`,
		`CREATE MATERIALIZED VIEW mv AS SELECT (information_schema._pg_expandarray(arr)).x FROM a`,
	} {
		_, err := rs.Exec(v)
		msg := harness.ErrorText(err)
		if err == nil || !contains(msg, "RS-2001") || !contains(msg, "set-returning functions in the SELECT list") {
			t.Errorf("%s: got %v, want RS-2001 naming set-returning functions in the SELECT list", v, msg)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
