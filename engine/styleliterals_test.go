package engine_test

import (
	"strings"
	"testing"
)

// TestDefaultAndCheckLiteralsReadAtCreate: ambiguous date, timestamp,
// timestamptz and interval literals in DEFAULT and CHECK expressions are
// read once, in the settings of the session that runs CREATE TABLE (or
// ALTER TABLE ... ADD COLUMN), as PostgreSQL folds them into constants:
// inserts from sessions with other DateStyle, IntervalStyle and TimeZone
// get the creator's values, and a literal the creator cannot read fails
// the CREATE.
func TestDefaultAndCheckLiteralsReadAtCreate(t *testing.T) {
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	o := newOracle(t, rs)
	o.both("SET DateStyle = 'ISO, DMY'; SET IntervalStyle = sql_standard; SET TimeZone = 'Asia/Kolkata'")
	o.both(`CREATE TABLE lit (k int PRIMARY KEY,
		d date DEFAULT '01/02/03',
		d2 date DEFAULT '01/02/03'::date + 1,
		ts timestamp DEFAULT '01/02/2003 04:05',
		tz timestamptz DEFAULT '2003-02-01 04:05',
		iv interval DEFAULT '-1 2:00:00',
		iv2 interval DEFAULT interval '-1 2:00:00' * 2,
		c date CHECK (c > '01/02/03' AND c IN ('05/02/03', '06/02/03', '10/12/2003')),
		c2 date CHECK (c2 BETWEEN '01/02/03' AND '28/02/03'),
		ci interval CHECK (ci <> '-1 2:00:00'::interval))`)
	o.both("RESET DateStyle; RESET IntervalStyle; RESET TimeZone")
	o.both(`ALTER TABLE lit ADD COLUMN late date DEFAULT '03/04/05'`)
	o.both("SET DateStyle = 'SQL, MDY'; SET IntervalStyle = postgres; SET TimeZone = 'America/New_York'")
	o.both(`INSERT INTO lit (k, c) VALUES (1, '02/06/2003')`)
	o.both(`INSERT INTO lit (k, c, c2) VALUES (2, '12/10/2003', '02/28/2003')`)
	exec(t, o.rs, "SET DateStyle = 'ISO, YMD'; SET IntervalStyle = iso_8601; SET TimeZone = 'UTC'")
	exec(t, o.pg, "SET DateStyle = 'ISO, YMD'; SET IntervalStyle = iso_8601; SET TimeZone = 'UTC'")
	o.both(`INSERT INTO lit (k) VALUES (3)`)
	const q = "SELECT k, d, d2, ts, tz, iv, iv2, c, c2, late FROM lit ORDER BY k"
	if got, want := rowsText(t, o.rs, q), rowsText(t, o.pg, q); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s\n got: %q\nwant: %q", q, got, want)
	}
	for _, bad := range []string{
		`INSERT INTO lit (k, c) VALUES (4, '2003-02-01')`,
		`INSERT INTO lit (k, c2) VALUES (4, '2003-03-01')`,
		`INSERT INTO lit (k, ci) VALUES (4, '-1 days -02:00:00')`,
	} {
		if gotErr, wantErr := execErr(o.rs, bad), execErr(o.pg, bad); sqlState(gotErr) != sqlState(wantErr) {
			t.Errorf("%s: got %v, PostgreSQL %v", bad, gotErr, wantErr)
		}
	}
	// A literal the creator's DateStyle cannot read fails CREATE TABLE.
	o.both("SET DateStyle = 'ISO, MDY'")
	const bad = `CREATE TABLE lit_bad (k int PRIMARY KEY, d date DEFAULT '13/01/2024')`
	if gotErr, wantErr := execErr(o.rs, bad), execErr(o.pg, bad); wantErr == nil || sqlState(gotErr) != sqlState(wantErr) {
		t.Errorf("%s: got %v, PostgreSQL %v", bad, gotErr, wantErr)
	}
}
