package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestErrorDetailsFollowSessionStyles: the values in the DETAIL of
// unique, check, not-null and ADD PRIMARY KEY violations print in the
// session's DateStyle, IntervalStyle and TimeZone, as PostgreSQL prints
// them.
func TestErrorDetailsFollowSessionStyles(t *testing.T) {
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	o := newOracle(t, rs)
	o.both(`CREATE TABLE ek (d date PRIMARY KEY, ts timestamp, tz timestamptz, iv interval CHECK (iv > interval '0'), n int NOT NULL)`)
	o.both(`CREATE UNIQUE INDEX ek_tz ON ek (tz)`)
	o.both(`CREATE TABLE ep (d date, iv interval)`)
	o.both(`INSERT INTO ep VALUES ('2003-02-01', '1 day 02:00:00'), ('2003-02-01', '1 day 02:00:00')`)
	o.both(`INSERT INTO ek VALUES ('2003-02-01', '2003-02-01 04:05:06', '2003-02-01 04:05:06+00', '1 year 2 days 03:04:05', 1)`)
	statements := []string{
		`INSERT INTO ek VALUES ('2003-02-01', NULL, NULL, NULL, 2)`,
		`INSERT INTO ek VALUES ('2004-02-01', NULL, '2003-02-01 04:05:06+00', NULL, 2)`,
		`INSERT INTO ek VALUES ('2004-02-01', '2003-02-01 04:05:06.5', '2003-02-01 05:05:06+00', '-1 days +02:00:00', 2)`,
		`INSERT INTO ek VALUES ('2004-02-01', '2003-02-01 04:05:06.5', '2004-02-01 05:05:06+00', '1 day', NULL)`,
		`ALTER TABLE ep ADD PRIMARY KEY (d, iv)`,
	}
	for _, settings := range []string{
		"SET DateStyle = 'SQL, DMY'; SET IntervalStyle = sql_standard; SET TimeZone = 'America/New_York'",
		"SET DateStyle = 'German'; SET IntervalStyle = iso_8601; SET TimeZone = 'Asia/Kolkata'",
		"SET DateStyle = 'Postgres, MDY'; SET IntervalStyle = postgres_verbose; SET TimeZone = 'UTC'",
	} {
		o.both(settings)
		for _, s := range statements {
			var got, want *pgconn.PgError
			if !errors.As(execErr(o.rs, s), &got) || !errors.As(execErr(o.pg, s), &want) {
				t.Fatalf("%s: %s: want both to fail", settings, s)
			}
			// RockStream's detail starts with the RS code: "RS-2200 ...: Key ...".
			if got.Code != want.Code || !strings.HasSuffix(got.Detail, ": "+want.Detail) {
				t.Errorf("%s: %s\n got: %s %q\nwant: %s %q", settings, s, got.Code, got.Detail, want.Code, want.Detail)
			}
		}
	}
}
