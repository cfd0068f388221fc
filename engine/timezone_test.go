package engine_test

import (
	"testing"
)

// TestViewKeepsItsCreatorsTimeZone: a materialized view is maintained in
// the TimeZone of the session that created it, as PostgreSQL evaluates
// CREATE MATERIALIZED VIEW's query in that session: casts of timestamptz,
// date_trunc, extract, to_char and concat give the creator's local
// values, also for rows written later from a session in another zone and
// after a restart.
func TestViewKeepsItsCreatorsTimeZone(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, dir)
	rs := connect(t, srv.url())
	o := newOracle(t, rs)
	o.both("SET TimeZone = 'America/New_York'")
	o.both("CREATE TABLE ev (k int PRIMARY KEY, ts timestamptz, n text)")
	o.both(`INSERT INTO ev VALUES (1, '2024-01-01 04:59:59+00', 'a'), (2, '2024-01-01 05:00:00+00', 'b'),
		(3, '2024-03-10 06:30:00+00', 'c'), (4, '2024-11-03 05:30:00+00', 'd')`)
	o.view("tz_casts", "SELECT k, ts::date AS d, ts::timestamp AS local, ts::text AS s FROM ev")
	o.view("tz_days", "SELECT date_trunc('day', ts)::text AS day, count(*) AS n FROM ev GROUP BY 1")
	o.view("tz_parts", "SELECT k, extract(hour FROM ts) AS h, date_part('dow', ts) AS dow, to_char(ts, 'YYYY-MM-DD HH24:MI') AS c FROM ev")
	o.view("tz_text", "SELECT k, concat(n, '@', ts) AS c, concat_ws('|', n, ts) AS w FROM ev")
	o.check("after CREATE in America/New_York")
	o.both("INSERT INTO ev VALUES (5, '2024-07-04 03:59:00+00', 'e')")
	o.both("UPDATE ev SET ts = ts + interval '1 hour' WHERE k = 1")
	o.check("after changes in America/New_York")

	// Restart, then change rows from a session in UTC: the views still
	// compute New York's values (PostgreSQL's oracle session stays there).
	srv.Stop()
	srv = startServer(t, dir)
	o.rs = connect(t, srv.url())
	o.both("INSERT INTO ev VALUES (6, '2024-12-31 23:30:00+00', 'f')")
	o.both("DELETE FROM ev WHERE k = 2")
	o.check("after a restart, changed from a UTC session")
}
