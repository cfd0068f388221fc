package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// timeZoneSpellings are SET TIME ZONE arguments: a number or an INTERVAL
// is an offset east of Greenwich, a string that is not a number is a tz
// database name or a POSIX zone, whose offset counts west.
//
//lint:immutable test table.
var timeZoneSpellings = []string{
	"'+05:30'", "'-05:30'", "'+5:30'", "'+05:30:00'", "'-3'", "'3'", "'+05'", "' 5'", "'5.5'", "'0.5'", "'1e1'", "'0'",
	"'+24'", "'-15'", "'+168'", "'+0530'", "'UTC+5'", "'GMT-2'", "'<+03>-3'", "'<+0530>-5:30'", "'<ab>5'", "'ab5'",
	"'FOO+3BAR'", "'EST5EDT'", "'EST5EDT,M3.2.0,M11.1.0'", "'AAA3BBB,M3.2.0/2,M11.1.0/2'", "'AAA3BBB,M13.2.0,M11.1.0'",
	"'<+05:30:15>-05:30:15'", "'-05:30:15'", "'Etc/GMT+5'", "'America/New_York'", "'UTC'", "'utc'", "LOCAL", "DEFAULT",
	"5", "-3", "5.5", "INTERVAL '+05:30' HOUR TO MINUTE", "INTERVAL '-03:00' HOUR TO MINUTE", "INTERVAL '5' HOUR",
	"INTERVAL '5' HOUR TO MINUTE", "INTERVAL '05:30:15'", "INTERVAL '1 day'", "'XYZ'",
}

// TestTimeZoneSpellingsMatchPostgres: every SET TIME ZONE spelling gives
// PostgreSQL's TimeZone (SHOW), timestamptz text and extract(timezone),
// in winter and summer; AT TIME ZONE with a string reads it as a POSIX
// zone ('5' and '+05:30' are behind UTC).
func TestTimeZoneSpellingsMatchPostgres(t *testing.T) {
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	o := newOracle(t, rs)
	const q = "SELECT '2024-01-01 12:00+00'::timestamptz::text, '2024-07-01 12:00+00'::timestamptz::text, " +
		"extract(timezone FROM '2024-01-01 12:00+00'::timestamptz), '2024-07-01 12:00'::timestamp::timestamptz::text"
	ctx := context.Background()
	try := func(c *pgx.Conn, sql string) string {
		if _, err := c.PgConn().Exec(ctx, sql).ReadAll(); err != nil {
			return "ERROR " + sqlState(err)
		}
		return "ok"
	}
	for _, z := range timeZoneSpellings {
		o.both("SET TimeZone = 'Etc/UTC'")
		set := "SET TIME ZONE " + z
		gotSet, wantSet := try(o.rs, set), try(o.pg, set)
		if gotSet != wantSet {
			t.Errorf("%s: got %s, PostgreSQL %s", set, gotSet, wantSet)
			continue
		}
		// The test server boots in 'UTC', RockStream in 'Etc/UTC'.
		got, want := rowsText(t, o.rs, "SHOW TimeZone"), rowsText(t, o.pg, "SHOW TimeZone")
		if z == "LOCAL" || z == "DEFAULT" {
			want = []string{"Etc/UTC"}
		}
		if strings.Join(got, "") != strings.Join(want, "") {
			t.Errorf("%s: SHOW TimeZone got %q, want %q", set, got, want)
		}
		if got, want := rowsText(t, o.rs, q), rowsText(t, o.pg, q); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: %s\n got: %q\nwant: %q", set, q, got, want)
		}
		if strings.HasPrefix(z, "'") {
			at := "SELECT ('2024-01-01 12:00+00'::timestamptz AT TIME ZONE " + z + ")::text, ('2024-07-01 12:00'::timestamp AT TIME ZONE " + z + ")::text"
			exec(t, o.pg, "RESET TimeZone")
			exec(t, o.rs, "RESET TimeZone")
			gotAt, wantAt := try(o.rs, at), try(o.pg, at)
			if gotAt != wantAt {
				t.Errorf("%s: got %s, PostgreSQL %s", at, gotAt, wantAt)
			} else if gotAt == "ok" {
				if got, want := rowsText(t, o.rs, at), rowsText(t, o.pg, at); strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("%s\n got: %q\nwant: %q", at, got, want)
				}
			}
		}
	}
}
