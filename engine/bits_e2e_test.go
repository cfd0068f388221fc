package engine_test

import "testing"

// TestBitAggregatesMatchPostgres: bit_and, bit_or and bit_xor over int2,
// int4 and int8 (negative values, NULLs, DISTINCT, FILTER) in views through
// updates and deletes, and ad hoc, equal PostgreSQL 15's. They were
// refused ("does not exist" / unsupported).
func TestBitAggregatesMatchPostgres(t *testing.T) {
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	o := newOracle(t, rs)
	o.both("CREATE TABLE bt (id int PRIMARY KEY, g text, s int2, i int4, l int8)")
	const calls = "bit_and(s) AS ands, bit_or(i) AS ori, bit_xor(l) AS xorl, bit_and(l) AS andl, bit_or(s) AS ors, bit_xor(DISTINCT i) AS xordi, bit_xor(i) FILTER (WHERE id > 2) AS xorf"
	o.view("bt_by_g", "SELECT g, count(*) AS n, "+calls+" FROM bt GROUP BY g")
	o.view("bt_total", "SELECT "+calls+" FROM bt")
	adhoc := []string{"SELECT " + calls + " FROM bt", "SELECT g, " + calls + " FROM bt GROUP BY g ORDER BY g"}
	check := func(when string) { t.Helper(); o.checkWith(when, adhoc) }
	check("empty")
	o.both("INSERT INTO bt VALUES (1, 'x', 5, 5, 5), (2, 'x', 3, 3, 3), (3, 'y', NULL, NULL, NULL)")
	check("first rows")
	o.both("INSERT INTO bt VALUES (4, 'x', -2, -7, -9223372036854775808), (5, 'y', 32767, 2147483647, 9223372036854775807), (6, 'x', 3, 3, 3), (7, 'y', 12, -1, 12)")
	check("extremes and repeats")
	o.both("UPDATE bt SET s = 12, i = -1 WHERE id = 2")
	check("updated")
	o.both("DELETE FROM bt WHERE id IN (1, 4)")
	check("deleted")
}
