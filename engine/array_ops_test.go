package engine_test

import (
	"context"
	"strings"
	"testing"
)

// TestArraySubscriptsAndFunctions: views over int[] and text[] columns
// using subscripts, slices, array_append/prepend/cat/length/position,
// cardinality and @> <@ && match PostgreSQL through inserts, updates and
// deletes (NULL arrays, NULL elements, empty arrays, out-of-range and NULL
// subscripts), as do the same expressions ad hoc.
func TestArraySubscriptsAndFunctions(t *testing.T) {
	srv := startServer(t, t.TempDir())
	o := newOracle(t, connect(t, srv.url()))
	o.both("CREATE TABLE ar (id int PRIMARY KEY, xs int[], ts text[], n int)")
	o.view("ar_sub", "SELECT id, xs[1] AS first, xs[n] AS nth, xs[2:3] AS mid, xs[n:] AS tail, xs[:n] AS head, ts[cardinality(ts)] AS last_t, xs[0] AS zero FROM ar")
	o.view("ar_fn", "SELECT id, array_append(xs, n) AS ap, array_prepend(n, xs) AS pp, array_cat(xs, ARRAY[n, 0]) AS ca, array_length(xs, 1) AS len, cardinality(ts) AS card, array_position(xs, n) AS pos, array_position(ts, 'b', 2) AS tpos FROM ar")
	o.view("ar_ops", "SELECT id, xs @> ARRAY[n] AS has_n, xs <@ ARRAY[1, 2, 3] AS small, ts && ARRAY['a', 'z'] AS az, ARRAY[n] <@ xs AS n_in FROM ar")
	o.view("ar_grp", "SELECT n, count(*) AS c, (array_agg(id ORDER BY id))[1] AS min_id, (array_agg(xs[1] ORDER BY id))[2:] AS firsts FROM ar GROUP BY n")
	adhoc := []string{
		"SELECT id, xs[n + 1], ts[1:1], array_append(ts, NULL) FROM ar ORDER BY id",
		"SELECT id FROM ar WHERE xs && ARRAY[2] ORDER BY id",
	}
	o.checkWith("empty", adhoc)
	o.both("INSERT INTO ar VALUES (1, '{1,2,3}', '{a,b,b}', 2), (2, '{}', '{}', 1), (3, NULL, NULL, NULL), (4, '{3,NULL,2}', '{z,NULL}', 3), (5, '{2,2}', '{b}', 0)")
	o.checkWith("inserted", adhoc)
	o.both("UPDATE ar SET xs = array_append(xs, 9), n = 4 WHERE id = 1")
	o.both("UPDATE ar SET ts = '{a}', xs = '{5}' WHERE id = 3")
	o.checkWith("updated", adhoc)
	o.both("DELETE FROM ar WHERE id IN (2, 4)")
	o.checkWith("deleted", adhoc)
	o.both("DELETE FROM ar")
	o.checkWith("empty again", adhoc)

	// int2vector and oidvector catalog columns are 0-based in PostgreSQL
	// but served as arrays: their subscripts are refused, never off by one.
	_, err := o.rs.Exec(context.Background(), "SELECT i.indkey[0] FROM pg_catalog.pg_index i")
	if sqlState(err) != "0A000" || !strings.Contains(message(err), "pg_index.indkey is 0-based") {
		t.Fatalf("indkey[0]: %v, want 0A000 naming pg_index.indkey", err)
	}
}
