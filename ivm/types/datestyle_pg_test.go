package types

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/internal/pgtest"
)

// pgSet runs a SET on PostgreSQL or fails the test.
func pgSet(t *testing.T, conn *pgx.Conn, sql string) {
	t.Helper()
	if _, _, _, err := pgtest.QueryText(context.Background(), conn, sql); err != nil {
		t.Fatal(err)
	}
}

// TestDateStyleOutputMatchesPostgres prints dates, timestamps and
// timestamptz values (BC, infinity, fractional seconds, several zones)
// under every DateStyle output style and field order, compares the text
// with PostgreSQL's, and reads PostgreSQL's text back under the same
// settings (PostgreSQL reads its own output in every style).
func TestDateStyleOutputMatchesPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	ctx := context.Background()
	values := []struct {
		typ string
		t   Type
		in  string
	}{
		{"date", TDate, "2024-01-02"}, {"date", TDate, "2024-12-31"}, {"date", TDate, "0044-03-15 BC"}, {"date", TDate, "4713-11-24 BC"},
		{"date", TDate, "infinity"}, {"date", TDate, "-infinity"}, {"date", TDate, "2000-02-29"}, {"date", TDate, "12345-06-07"},
		{"timestamp", TTimestamp, "2024-01-02 03:04:05"}, {"timestamp", TTimestamp, "2024-01-02 03:04:05.123456"},
		{"timestamp", TTimestamp, "1999-12-31 23:59:59.5"}, {"timestamp", TTimestamp, "0044-03-15 12:00:00.25 BC"},
		{"timestamp", TTimestamp, "infinity"}, {"timestamp", TTimestamp, "-infinity"}, {"timestamp", TTimestamp, "2024-02-29 00:00:00"},
		{"timestamptz", TTimestampTZ, "2024-01-02 03:04:05+00"}, {"timestamptz", TTimestampTZ, "2024-07-02 03:04:05.000001+00"},
		{"timestamptz", TTimestampTZ, "0044-03-15 12:00:00+00 BC"}, {"timestamptz", TTimestampTZ, "infinity"},
		{"timestamptz", TTimestampTZ, "-infinity"}, {"timestamptz", TTimestampTZ, "2024-03-10 07:30:00.5+00"},
		{"time", TTime, "10:11:12.5"}, {"time", TTime, "00:00:00"},
	}
	zones := []string{"UTC", "America/New_York", "Asia/Kolkata", "Europe/Berlin"}
	styles := []DateStyle{DateStyleISO, DateStyleSQL, DateStylePostgres, DateStyleGerman}
	orders := []DateOrder{DateOrderMDY, DateOrderDMY, DateOrderYMD}
	cases := 0
	for _, zone := range zones {
		loc, err := LoadZone(zone)
		if err != nil {
			t.Fatal(err)
		}
		pgSet(t, conn, "SET TimeZone = "+sqlQuote(zone))
		for _, style := range styles {
			for _, order := range orders {
				setting := DateStyleSetting(style, order)
				pgSet(t, conn, "SET DateStyle = "+sqlQuote(setting))
				in := InputStyle{Loc: loc, DateOrder: order}
				out := OutputStyle{Loc: loc, ExtraFloatDigits: 1, DateStyle: style, DateOrder: order}
				for _, v := range values {
					if v.t.Kind != KindTimestampTZ && zone != "UTC" {
						continue
					}
					cases++
					sql := fmt.Sprintf("SELECT %s::%s", sqlQuote(v.in), v.typ)
					want, _, _, err := pgtest.QueryText(ctx, conn, sql)
					if err != nil {
						t.Fatalf("%s: %v", sql, err)
					}
					d, err := ParseStyle(v.t, v.in, in)
					if err != nil {
						t.Errorf("%s under %s in %s: %v", v.in, setting, zone, err)
						continue
					}
					if got := FormatStyle(v.t, d, out); got != want {
						t.Errorf("%s under DateStyle %s in %s: PostgreSQL %q, we %q", sql, setting, zone, want, got)
					}
					// PostgreSQL does not read all of its own output back
					// (SQL, YMD; zone abbreviations like LMT): read it as
					// it does.
					if v.t.Kind == KindTime {
						continue
					}
					compareInput(t, ctx, conn, v.typ, v.t, want, in, "DateStyle "+setting+" in "+zone)
				}
			}
		}
	}
	pgSet(t, conn, "RESET DateStyle")
	pgSet(t, conn, "RESET TimeZone")
	t.Logf("%d cases", cases)
}

// TestIntervalStyleMatchesPostgres prints intervals (negative, mixed
// signs, months+days+time, fractions) in every IntervalStyle, compares
// with PostgreSQL, and reads every style's text back under every style
// as PostgreSQL does.
func TestIntervalStyleMatchesPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	ctx := context.Background()
	values := []string{
		"0", "1 day", "-1 day", "1 year 2 mons 3 days 04:05:06.789", "-1 year -2 mons -3 days -04:05:06.789",
		"-1 year -2 mons +3 days -04:05:06", "-1 days +02:00:00", "1 day -00:00:01", "3 mons", "-3 mons", "1 year", "-14 mons",
		"04:05:06", "-04:05:06", "-00:00:00.5", "00:00:01", "00:00:01.5", "-00:00:01", "1 mon 00:00:01", "1 mon -1 days",
		"@ 1 min ago", "2 years 00:00:00.000001", "-178000000 years", "2562047788:00:54.775807",
		"1 day 25:00:00", "-1 mons +1 days -00:00:01",
	}
	styles := []IntervalStyle{IntervalStylePostgres, IntervalStylePostgresVerbose, IntervalStyleSQLStandard, IntervalStyleISO8601}
	texts := map[IntervalStyle][]string{}
	cases := 0
	for _, style := range styles {
		pgSet(t, conn, "SET IntervalStyle = "+style.String())
		for _, in := range values {
			cases++
			sql := fmt.Sprintf("SELECT %s::interval", sqlQuote(in))
			want, _, _, err := pgtest.QueryText(ctx, conn, sql)
			if err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
			texts[style] = append(texts[style], want)
			d, err := ParseIntervalStyle(in, style)
			if err != nil {
				t.Errorf("%s under %s: %v", in, style, err)
				continue
			}
			if got := FormatStyle(TInterval, d, OutputStyle{ExtraFloatDigits: 1, IntervalStyle: style}); got != want {
				t.Errorf("%s under IntervalStyle %s: PostgreSQL %q, we %q", sql, style, want, got)
			}
		}
	}
	// Every style's output read under every style.
	for _, readStyle := range styles {
		pgSet(t, conn, "SET IntervalStyle = "+readStyle.String())
		for _, printStyle := range styles {
			for _, text := range texts[printStyle] {
				cases++
				compareInput(t, ctx, conn, "interval", TInterval, text, InputStyle{IntervalStyle: readStyle}, "IntervalStyle "+readStyle.String())
			}
		}
	}
	pgSet(t, conn, "RESET IntervalStyle")
	t.Logf("%d cases", cases)
}

// compareInput reads text as typ on PostgreSQL (under the settings the
// caller has SET there) and with ParseStyle under in, and compares the
// value (printed in ISO / postgres style) or the SQLSTATE.
func compareInput(t *testing.T, ctx context.Context, c *pgx.Conn, typ string, ty Type, text string, in InputStyle, setting string) {
	t.Helper()
	sql := fmt.Sprintf("SELECT %s::%s", sqlQuote(text), typ)
	if ty.Kind != KindInterval {
		// Print PostgreSQL's result in ISO whatever the order, as
		// Format does.
		value := fmt.Sprintf("%s::%s", sqlQuote(text), typ)
		if ty.Kind == KindTimestampTZ {
			value = "(" + value + " AT TIME ZONE 'UTC')"
		}
		sql = fmt.Sprintf("SELECT to_char(%s, 'YYYY-MM-DD HH24:MI:SS.US BC')", value)
	} else {
		sql = fmt.Sprintf("SELECT (extract(year from v)*12 + extract(month from v))::int || ' ' || extract(day from v)::int || ' ' || "+
			"(extract(hour from v)*3600000000 + extract(minute from v)*60000000 + extract(microseconds from v))::bigint FROM (SELECT %s::interval v) s", sqlQuote(text))
	}
	want, _, wantState, wantErr := pgtest.QueryText(ctx, c, sql)
	d, err := ParseStyle(ty, text, in)
	var got, gotState string
	if err != nil {
		e, ok := errcode.As(err)
		if !ok {
			t.Errorf("%s under %s: non-errcode error %v", text, setting, err)
			return
		}
		gotState = e.State()
	} else if ty.Kind == KindInterval {
		iv := d.(Interval)
		got = fmt.Sprintf("%d %d %d", iv.Months, iv.Days, iv.Micros)
	} else {
		got = toCharISO(ty, d)
	}
	switch {
	case wantErr != nil && err == nil:
		t.Errorf("%q::%s under %s: PostgreSQL fails (%s: %v), we read %q", text, typ, setting, wantState, wantErr, got)
	case wantErr == nil && err != nil:
		t.Errorf("%q::%s under %s: PostgreSQL reads %q, we fail: %v", text, typ, setting, want, err)
	case wantErr != nil && gotState != wantState:
		t.Errorf("%q::%s under %s: PostgreSQL SQLSTATE %s (%v), we %s (%v)", text, typ, setting, wantState, wantErr, gotState, err)
	case wantErr == nil && got != want:
		t.Errorf("%q::%s under %s: PostgreSQL reads %q, we %q", text, typ, setting, want, got)
	}
}

// toCharISO prints a date or timestamp as the to_char pattern
// 'YYYY-MM-DD HH24:MI:SS.US BC' does, in UTC.
func toCharISO(t Type, d Datum) string {
	var us int64
	switch v := d.(type) {
	case Date:
		if !v.IsFinite() {
			return ""
		}
		us = int64(v) * MicrosPerDay
	case Timestamp:
		if !v.IsFinite() {
			return ""
		}
		us = int64(v)
	case TimestampTZ:
		if !v.IsFinite() {
			return ""
		}
		us = int64(v)
	}
	f := Fields(us)
	y, era := f.Year, "AD"
	if y <= 0 {
		y, era = 1-y, "BC"
	}
	return fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d.%06d %s", y, f.Month, f.Day, f.Hour, f.Minute, f.Second, f.Micros, era)
}

// TestDateOrderInputMatchesPostgres reads ambiguous and unambiguous
// dates and timestamps under MDY, DMY and YMD: the value, or the error's
// SQLSTATE, must be PostgreSQL's.
func TestDateOrderInputMatchesPostgres(t *testing.T) {
	ctx := context.Background()
	conn := pgtest.Connect(t)
	inputs := []string{
		"01/02/2024", "1/2/24", "01/02/03", "2024/01/02", "13/01/2024", "01/13/2024", "24-01-02", "02.01.2024", "2.1.24",
		"Jan 2 2024", "2 Jan 2024", "2024 Jan 2", "02-Jan-2024", "Jan-02-2024", "2024-Jan-02", "02-Jan-24", "24-Jan-02",
		"1 2 2024", "2024 1 2", "31/12/99", "12/31/99", "00/01/02", "01/02/00", "1/2/0", "01/02/24 BC", "32/01/2024",
		"2024-02-30", "02/30/2024", "30/02/2024", "2024-13-01", "2024-00-10", "Tue Jan 02 10:00:00 2024", "Tue 02 Jan 10:00:00 2024 UTC",
		"01/02/2024 10:00:00 UTC", "02.01.2024 10:00:00.5", "2024.01.02", "1/2", "01/02/2024/05", "99999999999/1/1",
		"January 8, 1999", "8 January 1999", "1999-01-08", "19990108", "1/8/1999", "08-Jan-1999", "Jan 8 99", "99 Jan 08",
		"2024-01-02T10:00:00", "12/31/1999 23:59:59.999999", "31.12.1999 23:59:59 BC", "Sat Jan 01 00:00:00 2000 EST",
		"infinity", "-infinity", "epoch", "Jan 2024", "2024 2", "1-2-3-4", "0/0/0",
	}
	types := []struct {
		name string
		t    Type
	}{{"date", TDate}, {"timestamp", TTimestamp}, {"timestamptz", TTimestampTZ}}
	cases := 0
	for _, order := range []DateOrder{DateOrderMDY, DateOrderDMY, DateOrderYMD} {
		setting := DateStyleSetting(DateStyleISO, order)
		pgSet(t, conn, "SET DateStyle = "+sqlQuote(setting))
		for _, ty := range types {
			for _, in := range inputs {
				cases++
				compareInput(t, ctx, conn, ty.name, ty.t, in, InputStyle{Loc: time.UTC, DateOrder: order}, "DateStyle "+setting)
			}
		}
	}
	pgSet(t, conn, "RESET DateStyle")
	t.Logf("%d cases", cases)
}

// TestIntervalSQLStandardInputMatchesPostgres reads intervals whose
// meaning depends on IntervalStyle (a leading minus under sql_standard).
func TestIntervalSQLStandardInputMatchesPostgres(t *testing.T) {
	ctx := context.Background()
	conn := pgtest.Connect(t)
	inputs := []string{"-1 2:03:04", "-1 +2:03:04", "-1-2 3 4:05:06", "-1 day 2 hours", "-2:03:04", "1 -2:03:04", "-1-2", "-1 2",
		"-1.5 2:00:00", "-1 day 2 hours ago", "@ -1 day 2 hours", "-P1D", "P-1DT2H", "-1 year 2 mons 3 days 04:05:06.7"}
	for _, style := range []IntervalStyle{IntervalStylePostgres, IntervalStyleSQLStandard, IntervalStyleISO8601, IntervalStylePostgresVerbose} {
		pgSet(t, conn, "SET IntervalStyle = "+style.String())
		for _, in := range inputs {
			compareInput(t, ctx, conn, "interval", TInterval, in, InputStyle{IntervalStyle: style}, "IntervalStyle "+style.String())
		}
	}
	pgSet(t, conn, "RESET IntervalStyle")
}

// TestParseDateStyleSetting checks DateStyle's value parsing against
// PostgreSQL's SET: the resulting SHOW value, or the refusal.
func TestParseDateStyleSetting(t *testing.T) {
	ctx := context.Background()
	conn := pgtest.Connect(t)
	values := []string{"ISO", "SQL", "Postgres", "German", "DMY", "ymd", "sql, dmy", "German, MDY", "MDY, German", "euro", "US",
		"european, postgres", "noneuropean", "DEFAULT", "SQL, DEFAULT", "ISO, SQL", "DMY, MDY", "iso, iso", "foo", "ISO DMY", "", "ISO,", "nonEuro, iso"}
	for _, start := range []string{"ISO, MDY", "German, DMY", "SQL, YMD"} {
		for _, v := range values {
			pgSet(t, conn, "SET DateStyle = "+sqlQuote(start))
			curStyle, curOrder, err := ParseDateStyle(start, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, _, wantState, wantErr := pgtest.QueryText(ctx, conn, "SET DateStyle = "+sqlQuote(v))
			want, _, _, _ := pgtest.QueryText(ctx, conn, "SHOW DateStyle")
			style, order, err := ParseDateStyle(v, curStyle, curOrder)
			switch {
			case wantErr != nil && err == nil:
				t.Errorf("SET DateStyle = %q from %s: PostgreSQL refuses (%s: %v), we set %q", v, start, wantState, wantErr, DateStyleSetting(style, order))
			case wantErr == nil && err != nil:
				t.Errorf("SET DateStyle = %q from %s: PostgreSQL sets %q, we refuse: %v", v, start, want, err)
			case wantErr == nil && DateStyleSetting(style, order) != want:
				t.Errorf("SET DateStyle = %q from %s: PostgreSQL %q, we %q", v, start, want, DateStyleSetting(style, order))
			}
		}
	}
	pgSet(t, conn, "RESET DateStyle")
}
