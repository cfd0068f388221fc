package types

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// sqlQuote quotes a string literal for PostgreSQL.
func sqlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

type inputCase struct {
	typ   string // SQL type name as written in a cast
	t     Type
	input string
}

func ty(k Kind) Type { return Type{Kind: k, Typmod: -1} }

// inputCases are text inputs fed both to PostgreSQL ('input'::type) and to
// Parse+Format; output text or SQLSTATE must match.
func inputCases() []inputCase {
	var cs []inputCase
	add := func(typ string, t Type, inputs ...string) {
		for _, in := range inputs {
			cs = append(cs, inputCase{typ, t, in})
		}
	}
	add("bool", TBool, "t", "true", " TRUE ", "yes", "y", "on", "1", "f", "false", "no", "off", "0", "of", "o", "tr", "x", "", "2", "truex")
	add("int2", TInt2, "0", "-32768", "32767", "32768", "-32769", " 12 ", "+5", "1.5", "abc", "", "-", "1e3", "0x10", "1_000")
	add("int4", TInt4, "0", "2147483647", "-2147483648", "2147483648", "-2147483649", "  -7  ", "99999999999999999999999", "12a")
	add("int8", TInt8, "9223372036854775807", "-9223372036854775808", "9223372036854775808", "-9223372036854775809", "42", "4 2")
	add("float8", TFloat8, "0", "-0", "0.1", "1e20", "1e15", "1e14", "123456789012345", "1234567890123456", "1.5e-7", "0.0001", "0.00001",
		"NaN", "nan", "Infinity", "-Infinity", "inf", "-INF", "1e308", "1e309", "1e-400", "4.9e-324", "2.2250738585072014e-308", "3.141592653589793",
		" 2.5 ", "abc", "", "1e", ".5", "5.", "-.5e3", "100", "1e+2", "12345678901234567890", "0.30000000000000004", "1.7976931348623157e308")
	add("float4", TFloat4, "0.1", "1e6", "123456", "1234567", "3.4028235e38", "3.5e38", "1e-46", "1.4e-45", "NaN", "-Infinity", "0.3", "16777217", "1.1")
	add("numeric", TNumeric, "0", "1.50", "-1.50", "1e5", "1.5e-3", "1.50e1", "007.50", "NaN", "nan", "Infinity", "-inf", "0.000", "-0.00", ".5", "5.",
		" 3.14 ", "abc", "", "1e1001", "1e1000", "1.2.3", "+12", "123456789012345678901234567890.123456789", "-0", "1e-5", "1E+3")
	add("numeric(5,2)", Type{Kind: KindNumeric, Typmod: MakeNumericTypmod(5, 2)}, "123.456", "123.455", "-123.455", "999.995", "999.994", "1000", "0.001", "NaN", "Infinity", "12")
	add("numeric(3,0)", Type{Kind: KindNumeric, Typmod: MakeNumericTypmod(3, 0)}, "999.4", "999.5", "-0.5", "0.4")
	add("numeric(2,2)", Type{Kind: KindNumeric, Typmod: MakeNumericTypmod(2, 2)}, "0.99", "0.995", "1")
	add("text", TText, "hello", "", " spaced ", "ünïcode")
	add("varchar(3)", Type{Kind: KindVarchar, Typmod: 7}, "abc", "abcd", "ab   ", "abc  d", "äöü", "äöüx")
	add("char(3)", Type{Kind: KindChar, Typmod: 7}, "a", "abc", "abcd", "ab  ")
	add("bytea", TBytea, "\\x", "\\x0aFF", "\\x0a ff", "\\x0", "\\xzz", "abc", "a\\\\b", "\\001\\377", "\\9", "\\x12 3")
	add("uuid", TUUID, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", "{a0eebc999c0b4ef8bb6d6bb9bd380a11}",
		"a0eebc999c0b4ef8bb6d6bb9bd380a11", "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1", "xyz", " a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
	add("date", TDate, "2024-01-31", "2024-02-29", "2023-02-29", "2024-13-01", "1/31/2024", "01/02/03", "20240131", "Jan 31 2024", "31 January 2024",
		"2024-01-31 10:00:00", "0001-01-01", "0001-01-01 BC", "4713-01-01 BC", "4714-11-24 BC", "5874897-12-31", "5874898-01-01", "infinity", "-infinity", "epoch",
		"garbage", "", "2024-1-5", "99-01-05", "13/01/2024", "1999-01-08", "2024-01-31T10:00:00Z", "January 8, 1999", "Sat Jan 8 1999")
	add("timestamp", TTimestamp, "2024-01-31 10:11:12", "2024-01-31 10:11:12.5", "2024-01-31 10:11:12.123456", "2024-01-31 10:11:12.1234567",
		"2024-01-31T10:11:12", "2024-01-31 10:11:12+05", "2024-01-31", "2024-01-31 24:00:00", "2024-01-31 24:00:01", "2024-01-31 25:00:00",
		"2024-01-31 10:60:00", "2024-01-31 10:11:60", "infinity", "-infinity", "epoch", "2024-01-31 10:11", "2024-01-31 1:02:03 PM", "2024-01-31 12:00 AM",
		"0044-03-15 12:00:00 BC", "294276-12-31 23:59:59.999999", "294277-01-01 00:00:00", "x", "2024-01-31 10:11:12.999999999")
	add("timestamptz", TTimestampTZ, "2024-01-31 10:11:12", "2024-01-31 10:11:12+05", "2024-01-31 10:11:12-08:00", "2024-01-31T10:11:12Z",
		"2024-01-31 10:11:12 UTC", "2024-01-31 10:11:12.25+05:30", "2024-07-01 12:00:00 America/New_York", "2024-01-01 12:00:00 Europe/Berlin",
		"infinity", "-infinity", "2024-01-31 10:11:12 +0530", "1999-01-08 04:05:06 PST", "2024-01-31 10:11:12+16")
	add("time", TTime, "10:11:12", "10:11:12.5", "24:00:00", "00:00", "allballs", "1:02:03 PM", "25:00:00", "x")
	add("interval", TInterval, "1 day", "1 day 02:00:00", "3 hours", "P1D", "PT1H", "P1Y2M3DT4H5M6S", "P1W", "1 year 2 mons 3 days 04:05:06.7",
		"-1 days +02:00:00", "@ 1 day ago", "1.5 days", "1.5 months", "1.5 years", "90", "1:30", "-1:30", "10 seconds", "0", "1 mon -1 days",
		"2 weeks", "1 decade", "1 century", "1 millennium", "100 ms", "7 us", "1day", "3h", "garbage", "", "1 day -01:00:00", "-00:00:01",
		"1 year ago", "25:00:00", "1 week 2 days", "1.25 hours", "0.5 minutes", "PT0.5S", "P1.5D")
	// Right-to-left typing of bare numbers, "Y-M", "D H:M" (DecodeInterval).
	add("interval", TInterval, "1 2 hour", "1 2:03", "-1 2:03", "1 -2:03", "1-2", "-1-2", "+1-2", "1-2 3 4:05", "1 1", "1 2 minute", "1 2 day",
		"1 2 hours 3", "3 1 day", "4 5:06", "4 5:06 7", "1-2 3", "1.5 2:00", "1 week 2", "@ 1 day 2 hours ago", "2 hours 30", "day", "1-2-3")
	// SQL-standard field restrictions: a bare number in the last field, then cut.
	itm := func(mask, precision int64) Type {
		tm, ok := IntervalTypmod(mask, precision)
		if !ok {
			panic("bad interval typmod")
		}
		return Type{Kind: KindInterval, Typmod: tm}
	}
	full := int64(IntervalFullPrecision)
	add("interval year", itm(IntervalMaskYear, full), "1", "1.5", "1 year 2 months 3 days", "-1 year -5 months", "-1.5")
	add("interval month", itm(IntervalMaskMonth, full), "3", "1.5", "1 year 2 months 3 days", "1-2")
	add("interval day", itm(IntervalMaskDay, full), "90", "-1", "1.5", "1 day 02:03:04.5", "1 2", "1-2", "P1D")
	add("interval hour", itm(IntervalMaskHour, full), "1 day 2", "1 2", "1 2:00", "1.5", "-1.5 hours", "1 day 3 hours", "P1DT5H7M")
	add("interval minute", itm(IntervalMaskMinute, full), "1", "1.5", "1:30", "1 year", "1 year 2")
	add("interval second", itm(IntervalMaskSecond, full), "5", "1 2:03:04", "-2.5")
	add("interval year to month", itm(IntervalMaskYear|IntervalMaskMonth, full), "1-2", "1", "+1-2", "1-2 3", "1 2")
	add("interval day to hour", itm(IntervalMaskDay|IntervalMaskHour, full), "1", "1 2", "5 2:03")
	add("interval day to minute", itm(IntervalMaskDay|IntervalMaskHour|IntervalMaskMinute, full), "1 2:03", "1 2")
	add("interval day to second", itm(IntervalMaskDay|IntervalMaskHour|IntervalMaskMinute|IntervalMaskSecond, full), "7", "1 2:03:04.5", "1 2")
	add("interval hour to minute", itm(IntervalMaskHour|IntervalMaskMinute, full), "2", "10:20", "2 1:30", "1 day 02:03:04.5", "2 3")
	add("interval hour to second", itm(IntervalMaskHour|IntervalMaskMinute|IntervalMaskSecond, full), "100", "1:02:03.25")
	add("interval minute to second", itm(IntervalMaskMinute|IntervalMaskSecond, full), "10:20", "-10:20", "1:30:40.5", "90")
	add("interval second(3)", itm(IntervalMaskSecond, 3), "1.23456", "-1.2345", "1.0005")
	add("interval second(0)", itm(IntervalMaskSecond, 0), "-2.5", "2.5")
	add("interval(2)", itm(IntervalFullRange, 2), "1.23456 second", "1 day 00:00:00.125")
	add("interval day to second(2)", itm(IntervalMaskDay|IntervalMaskHour|IntervalMaskMinute|IntervalMaskSecond, 2), "1 2:03:04.567")
	add("json", Type{Kind: KindJSON, Typmod: -1}, `{"b": 1,  "a":[1,2]}`, `[1, 2`, `"x"`, ` 1.50 `, `nul`)
	add("jsonb", TJSONB, `{"b": 1,  "a":[1,2], "aa": {"z":null,"y":true}}`, `{"a":1,"a":2}`, `[1.50, 1e2, -0, "\n\u0001é"]`,
		`{"bbb":1,"a":2,"cc":3,"b":4}`, `[1, 2`, `"x"`, `  true `, `{}`, `[]`, `12345678901234567890.5`)
	add("int4[]", ArrayOf(TInt4), "{1,2,NULL}", "{}", "{ 1 , 2 }", "{1,x}", "1,2", "{null,NULL}")
	add("text[]", ArrayOf(TText), "{a,b}", "{\"a b\",\"c,d\",\"\",\"NULL\"}", "{\"x\\\"y\",z}", "{a\\,b}")
	add("numeric[]", ArrayOf(TNumeric), "{1.50,NaN}")
	add("bool[]", ArrayOf(TBool), "{t,f,yes}")
	return cs
}

func TestParseFormatMatchesPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	ctx := context.Background()
	failures := 0
	for _, c := range inputCases() {
		sql := fmt.Sprintf("SELECT %s::%s", sqlQuote(c.input), c.typ)
		if strings.HasPrefix(c.typ, "varchar(") || strings.HasPrefix(c.typ, "char(") {
			// Parse has assignment semantics (INSERT), not explicit-cast ones.
			table := "assign_" + strings.NewReplacer("(", "_", ")", "").Replace(c.typ)
			if _, _, _, err := pgtest.QueryText(ctx, conn, fmt.Sprintf("CREATE TEMP TABLE IF NOT EXISTS %s (v %s)", table, c.typ)); err != nil {
				t.Fatal(err)
			}
			sql = fmt.Sprintf("INSERT INTO %s VALUES (%s) RETURNING v", table, sqlQuote(c.input))
		}
		want, _, wantState, wantErr := pgtest.QueryText(ctx, conn, sql)
		got, err := Parse(c.t, c.input, time.UTC)
		var gotText, gotState string
		if err != nil {
			e, ok := errcode.As(err)
			if !ok {
				t.Errorf("%s: non-errcode error %v", sql, err)
				continue
			}
			gotState = e.State()
		} else {
			gotText = Format(c.t, got)
		}
		switch {
		case wantErr != nil && err == nil:
			t.Errorf("%s: PostgreSQL fails (%s: %v), we return %q", sql, wantState, wantErr, gotText)
		case wantErr == nil && err != nil:
			t.Errorf("%s: PostgreSQL returns %q, we fail: %v", sql, want, err)
		case wantErr != nil && gotState != wantState:
			t.Errorf("%s: SQLSTATE %s (%v), we %s (%v)", sql, wantState, wantErr, gotState, err)
		case wantErr == nil && gotText != want:
			t.Errorf("%s: PostgreSQL %q, we %q", sql, want, gotText)
		default:
			continue
		}
		failures++
	}
	t.Logf("%d cases, %d failures", len(inputCases()), failures)
}

// TestFormatTZMatchesPostgres prints timestamptz values in several zones.
func TestFormatTZMatchesPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	ctx := context.Background()
	zones := []string{"UTC", "America/New_York", "Asia/Kolkata", "Europe/Berlin", "Australia/Lord_Howe", "America/St_Johns"}
	inputs := []string{"2024-01-31 10:11:12+00", "2024-07-01 00:00:00.5+00", "1800-01-01 00:00:00+00", "2024-03-10 07:30:00+00",
		"2024-11-03 06:30:00+00", "0044-03-15 12:00:00+00 BC", "2100-06-01 00:00:00+00"}
	for _, zone := range zones {
		if _, _, _, err := pgtest.QueryText(ctx, conn, "SET TimeZone = "+sqlQuote(zone)); err != nil {
			t.Fatal(err)
		}
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range inputs {
			want, _, _, err := pgtest.QueryText(ctx, conn, "SELECT "+sqlQuote(in)+"::timestamptz")
			if err != nil {
				t.Fatal(err)
			}
			v, perr := Parse(TTimestampTZ, in, loc)
			if perr != nil {
				t.Errorf("%s in %s: %v", in, zone, perr)
				continue
			}
			if got := FormatTZ(TTimestampTZ, v, loc); got != want {
				t.Errorf("%s in %s: PostgreSQL %q, we %q", in, zone, want, got)
			}
		}
		// Local wall-clock input, including DST gaps and overlaps.
		for _, in := range []string{"2024-03-10 02:30:00", "2024-11-03 01:30:00", "2024-06-01 12:00:00", "2024-10-27 02:30:00", "2024-03-31 02:30:00"} {
			want, _, _, err := pgtest.QueryText(ctx, conn, "SELECT "+sqlQuote(in)+"::timestamptz")
			if err != nil {
				t.Fatal(err)
			}
			v, perr := Parse(TTimestampTZ, in, loc)
			if perr != nil {
				t.Errorf("%s in %s: %v", in, zone, perr)
				continue
			}
			if got := FormatTZ(TTimestampTZ, v, loc); got != want {
				t.Errorf("local %s in %s: PostgreSQL %q, we %q", in, zone, want, got)
			}
		}
	}
	if _, _, _, err := pgtest.QueryText(ctx, conn, "SET TimeZone = 'UTC'"); err != nil {
		t.Fatal(err)
	}
}

// orderCases lists literal values per type; PostgreSQL ranks them and
// Compare must agree on every pair.
func orderCases() map[string][]string {
	return map[string][]string{
		"float8":    {"'NaN'", "'Infinity'", "'-Infinity'", "0", "'-0'", "1e300", "-1e300", "0.1", "0.2", "-0.1", "'4.9e-324'", "'-4.9e-324'", "1", "2", "'NaN'"},
		"float4":    {"'NaN'", "'Infinity'", "'-Infinity'", "0", "'-0'", "0.1", "1"},
		"numeric":   {"'NaN'", "'Infinity'", "'-Infinity'", "0", "0.00", "1.0", "1.00", "1", "-1", "0.1", "0.10", "100", "99.999", "1e-20", "-1e-20", "123456789012345678901234567890"},
		"text":      {"''", "'a'", "'A'", "'ab'", "'b'", "'B'", "'é'", "'e'", "' '", "'a '", "'\\'"},
		"bytea":     {"'\\x'", "'\\x00'", "'\\x0000'", "'\\x01'", "'\\xff'", "'\\xff00'"},
		"interval":  {"'1 mon'", "'30 days'", "'29 days 24:00:00'", "'1 day'", "'24:00:00'", "'-1 day'", "'0'", "'1 year'", "'360 days'", "'-1 mon 30 days'", "'1 day -00:00:01'", "'00:00:00.000001'", "'-00:00:00.000001'", "'178956970 years'", "'-178956970 years'"},
		"date":      {"'infinity'", "'-infinity'", "'2000-01-01'", "'1999-12-31'", "'0001-01-01 BC'", "'5874897-12-31'"},
		"timestamp": {"'infinity'", "'-infinity'", "'2000-01-01'", "'1999-12-31 23:59:59.999999'", "'4713-01-01 BC'"},
		"bool":      {"true", "false"},
		"uuid":      {"'00000000-0000-0000-0000-000000000000'", "'ffffffff-ffff-ffff-ffff-ffffffffffff'", "'10000000-0000-0000-0000-000000000000'", "'00000000-0000-0000-0000-000000000001'"},
		"char(3)":   {"'a'", "'a '", "'ab'", "''"},
		"int4[]":    {"'{}'", "'{1}'", "'{1,2}'", "'{1,NULL}'", "'{NULL}'", "'{2}'", "'{1,2,3}'"},
	}
}

func typeByName(t *testing.T, name string) Type {
	switch name {
	case "float8":
		return TFloat8
	case "float4":
		return TFloat4
	case "numeric":
		return TNumeric
	case "text":
		return TText
	case "bytea":
		return TBytea
	case "interval":
		return TInterval
	case "date":
		return TDate
	case "timestamp":
		return TTimestamp
	case "bool":
		return TBool
	case "uuid":
		return TUUID
	case "char(3)":
		return Type{Kind: KindChar, Typmod: 7}
	case "int4[]":
		return ArrayOf(TInt4)
	}
	t.Fatalf("unknown type %s", name)
	return Type{}
}

func TestCompareMatchesPostgresOrder(t *testing.T) {
	conn := pgtest.Connect(t)
	ctx := context.Background()
	cases := orderCases()
	names := make([]string, 0, len(cases))
	for name := range cases { //lint:maprange sorted below
		names = append(names, name)
	}
	sortStrings(names)
	for _, name := range names {
		lits := cases[name]
		typ := typeByName(t, name)
		var values []string
		for i, l := range lits {
			values = append(values, fmt.Sprintf("(%d, %s::%s)", i, l, name))
		}
		sql := fmt.Sprintf("SELECT string_agg(i::text || ':' || r::text || ':' || v::text, '|' ORDER BY i) FROM "+
			"(SELECT i, v, dense_rank() OVER (ORDER BY v) AS r FROM (VALUES %s) AS t(i, v)) s", strings.Join(values, ","))
		out, _, _, err := pgtest.QueryText(ctx, conn, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		type entry struct {
			rank int
			v    Datum
		}
		var entries []entry
		for _, part := range strings.SplitN(out, "|", len(lits)) {
			fields := strings.SplitN(part, ":", 3)
			rank, _ := strconv.Atoi(fields[1])
			v, err := Parse(typ, fields[2], time.UTC)
			if err != nil {
				t.Fatalf("%s: parse PostgreSQL output %q: %v", name, fields[2], err)
			}
			if got := Format(typ, v); got != fields[2] && name != "bool" && name != "char(3)" {
				t.Errorf("%s: round trip %q -> %q", name, fields[2], got)
			}
			entries = append(entries, entry{rank, v})
		}
		for i := range entries {
			for j := range entries {
				want := cmpInt(int64(entries[i].rank), int64(entries[j].rank))
				if got := Compare(typ, entries[i].v, entries[j].v); got != want {
					t.Errorf("%s: Compare(%s, %s) = %d, PostgreSQL %d", name, Format(typ, entries[i].v), Format(typ, entries[j].v), got, want)
				}
				if want == 0 && Hash(typ, entries[i].v) != Hash(typ, entries[j].v) {
					t.Errorf("%s: equal values %s, %s hash differently", name, Format(typ, entries[i].v), Format(typ, entries[j].v))
				}
			}
		}
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
