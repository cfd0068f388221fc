package keyenc

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/jackc/pgx/v5"
	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/ivm/types"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// typeCase is a SQL type with literals PostgreSQL orders for us.
type typeCase struct {
	sql  string
	t    types.Type
	lits []string
}

func typeCases() []typeCase {
	return []typeCase{
		{"bool", types.TBool, []string{"true", "false"}},
		{"int2", types.TInt2, []string{"-32768", "32767", "0", "-1", "1", "255", "256", "-256"}},
		{"int4", types.TInt4, []string{"-2147483648", "2147483647", "0", "-1", "1", "65536", "-65536"}},
		{"int8", types.TInt8, []string{"-9223372036854775808", "9223372036854775807", "0", "-1", "1", "4294967296"}},
		{"float4", types.TFloat4, []string{"'NaN'", "'Infinity'", "'-Infinity'", "0", "'-0'", "0.1", "-0.1", "3.4e38", "-3.4e38", "1e-45", "1"}},
		{"float8", types.TFloat8, []string{"'NaN'", "'Infinity'", "'-Infinity'", "0", "'-0'", "1e300", "-1e300", "0.1", "0.2", "-0.1", "'4.9e-324'", "'-4.9e-324'", "1", "2", "-2", "1.5"}},
		{"numeric", types.TNumeric, []string{"'NaN'", "'Infinity'", "'-Infinity'", "0", "0.00", "1.0", "1.00", "1", "-1", "0.1", "0.10", "100", "99.999", "1e-20",
			"-1e-20", "123456789012345678901234567890", "-123456789012345678901234567890", "10", "9", "11", "1.05", "-1.05", "0.01", "-0.01", "1e100", "-1e100", "12345.6789", "12345.67891"}},
		{"text", types.TText, []string{"''", "'a'", "'A'", "'ab'", "'b'", "'B'", "'é'", "'e'", "' '", "'a '", "'\\'", "'aa'", "'a'||chr(1)", "'~'", "'ÿ'"}},
		{"varchar(10)", types.Type{Kind: types.KindVarchar, Typmod: 14}, []string{"''", "'x'", "'xy'", "'y'"}},
		{"char(3)", types.Type{Kind: types.KindChar, Typmod: 7}, []string{"'a'", "'a '", "'ab'", "''", "'b'"}},
		{"bytea", types.TBytea, []string{"'\\x'", "'\\x00'", "'\\x0000'", "'\\x01'", "'\\xff'", "'\\xff00'", "'\\x00ff'", "'\\x0001'"}},
		{"date", types.TDate, []string{"'infinity'", "'-infinity'", "'2000-01-01'", "'1999-12-31'", "'0001-01-01 BC'", "'5874897-12-31'", "'4713-01-01 BC'", "'2024-02-29'"}},
		{"time", types.TTime, []string{"'00:00'", "'24:00'", "'12:00'", "'00:00:00.000001'", "'23:59:59.999999'"}},
		{"timestamp", types.TTimestamp, []string{"'infinity'", "'-infinity'", "'2000-01-01'", "'1999-12-31 23:59:59.999999'", "'4713-01-01 BC'", "'294276-12-31 23:59:59'"}},
		{"timestamptz", types.TTimestampTZ, []string{"'infinity'", "'-infinity'", "'2000-01-01 00:00+00'", "'2000-01-01 00:00+01'", "'1999-12-31 23:59:59.999999+00'"}},
		{"interval", types.TInterval, []string{"'1 mon'", "'30 days'", "'29 days 24:00:00'", "'1 day'", "'24:00:00'", "'-1 day'", "'0'", "'1 year'", "'360 days'",
			"'-1 mon 30 days'", "'1 day -00:00:01'", "'00:00:00.000001'", "'-00:00:00.000001'", "'178956970 years'", "'-178956970 years'", "'-2147483648 days'", "'2147483647 days 23:59:59'"}},
		{"uuid", types.TUUID, []string{"'00000000-0000-0000-0000-000000000000'", "'ffffffff-ffff-ffff-ffff-ffffffffffff'", "'10000000-0000-0000-0000-000000000000'", "'00000000-0000-0000-0000-000000000001'"}},
		{"int4[]", types.ArrayOf(types.TInt4), []string{"'{}'", "'{1}'", "'{1,2}'", "'{1,NULL}'", "'{NULL}'", "'{2}'", "'{1,2,3}'", "'{-1}'"}},
		{"text[]", types.ArrayOf(types.TText), []string{"'{}'", "'{a}'", "'{a,b}'", "'{\"\"}'", "'{ab}'", "'{NULL}'"}},
		// jsonb's btree order: kinds null < string < number < boolean <
		// array < object, containers by size first, an empty top-level
		// array below every scalar, numbers numerically.
		{"jsonb", types.TJSONB, []string{`'null'`, `'"a"'`, `'""'`, `'"b"'`, `'"ab"'`, `'1'`, `'1.0'`, `'1.50'`, `'1.5'`, `'-2'`, `'1e2'`, `'100'`,
			`'true'`, `'false'`, `'[]'`, `'[1]'`, `'[null]'`, `'[[]]'`, `'[1,2]'`, `'[2]'`, `'["a"]'`, `'[true]'`, `'[{}]'`, `'{}'`,
			`'{"a":1}'`, `'{"b":0}'`, `'{"a":1.0}'`, `'{"a":"x"}'`, `'{"a":[1]}'`, `'{"aa":1}'`, `'{"a":1,"b":2}'`, `'{"b":1,"a":2}'`,
			`'{"a":{"b":null}}'`, `'{"a":{}}'`, `'{"a":[]}'`, `'[{"a":1}, 2]'`, `'[[1],[2,3]]'`, `'"\u0001"'`, `'"é"'`}},
	}
}

type ranked struct {
	rank int
	v    types.Datum
}

// pgOrder asks PostgreSQL for each literal's dense rank under ORDER BY v
// <dir> and its text form (NULL is always included).
func pgOrder(t *testing.T, conn *pgx.Conn, tc typeCase, order string) []ranked {
	t.Helper()
	var values []string
	lits := append(append([]string{}, tc.lits...), "NULL")
	for i, l := range lits {
		values = append(values, fmt.Sprintf("(%d, (%s)::%s)", i, l, tc.sql))
	}
	sql := fmt.Sprintf("SELECT string_agg(i::text || ':' || r::text || ':' || coalesce(v::text, '<NULL>'), '|' ORDER BY i) FROM "+
		"(SELECT i, v, dense_rank() OVER (ORDER BY v %s) AS r FROM (VALUES %s) AS t(i, v)) s", order, strings.Join(values, ","))
	out, _, _, err := pgtest.QueryText(context.Background(), conn, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var res []ranked
	for _, part := range strings.SplitN(out, "|", len(lits)) {
		fields := strings.SplitN(part, ":", 3)
		rank, _ := strconv.Atoi(fields[1])
		if fields[2] == "<NULL>" {
			res = append(res, ranked{rank, nil})
			continue
		}
		text := fields[2]
		if tc.t.Kind == types.KindBool {
			text = text[:1]
		}
		v, err := types.Parse(tc.t, text, time.UTC)
		if err != nil {
			t.Fatalf("%s: parse PostgreSQL output %q: %v", tc.sql, fields[2], err)
		}
		res = append(res, ranked{rank, v})
	}
	return res
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// TestKeyOrderMatchesPostgres checks, for every type, every direction and
// NULL placement, that bytewise key order is PostgreSQL's ORDER BY order and
// that keys decode to equal values.
func TestKeyOrderMatchesPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	dirs := []struct {
		order string
		dir   Direction
	}{
		{"ASC", Asc},
		{"DESC", Desc},
		{"ASC NULLS FIRST", Direction{NullsFirst: true}},
		{"DESC NULLS LAST", Direction{Descending: true}},
	}
	for _, tc := range typeCases() {
		for _, d := range dirs {
			vals := pgOrder(t, conn, tc, d.order)
			keys := make([][]byte, len(vals))
			for i, v := range vals {
				keys[i] = EncodeColumn(nil, tc.t, v.v, d.dir)
				got, rest, err := DecodeColumn(keys[i], tc.t, d.dir)
				if err != nil || len(rest) != 0 {
					t.Fatalf("%s %s: decode %x: %v (rest %x)", tc.sql, d.order, keys[i], err, rest)
				}
				if !types.Equal(tc.t, got, v.v) {
					t.Errorf("%s %s: round trip %v -> %v", tc.sql, d.order, v.v, got)
				}
			}
			for i := range vals {
				for j := range vals {
					want := sign(vals[i].rank - vals[j].rank)
					if vals[i].v != nil && vals[j].v != nil && !d.dir.Descending {
						if got := types.Compare(tc.t, vals[i].v, vals[j].v); got != want {
							t.Errorf("%s: Compare(%s, %s) = %d, PostgreSQL %d", tc.sql, show(tc.t, vals[i].v), show(tc.t, vals[j].v), got, want)
						}
						if want == 0 && types.Hash(tc.t, vals[i].v) != types.Hash(tc.t, vals[j].v) {
							t.Errorf("%s: equal %s and %s hash differently", tc.sql, show(tc.t, vals[i].v), show(tc.t, vals[j].v))
						}
					}
					if got := bytes.Compare(keys[i], keys[j]); got != want {
						t.Errorf("%s %s: key order of %s vs %s = %d, PostgreSQL %d", tc.sql, d.order,
							show(tc.t, vals[i].v), show(tc.t, vals[j].v), got, want)
					}
				}
			}
		}
	}
}

func show(t types.Type, d types.Datum) string {
	if d == nil {
		return "NULL"
	}
	return types.Format(t, d)
}

// genDatum draws values of a type from a small domain mixed with wide
// values, so both ties and extremes are common.
func genDatum(t types.Type) *rapid.Generator[types.Datum] {
	return rapid.Custom(func(r *rapid.T) types.Datum {
		if rapid.IntRange(0, 9).Draw(r, "null") == 0 {
			return nil
		}
		small := rapid.Bool().Draw(r, "small")
		switch t.Kind {
		case types.KindBool:
			return rapid.Bool().Draw(r, "b")
		case types.KindInt2:
			if small {
				return rapid.Int64Range(-2, 2).Draw(r, "i")
			}
			return rapid.Int64Range(math.MinInt16, math.MaxInt16).Draw(r, "i")
		case types.KindInt4:
			if small {
				return rapid.Int64Range(-2, 2).Draw(r, "i")
			}
			return rapid.Int64Range(math.MinInt32, math.MaxInt32).Draw(r, "i")
		case types.KindInt8:
			if small {
				return rapid.Int64Range(-2, 2).Draw(r, "i")
			}
			return rapid.Int64().Draw(r, "i")
		case types.KindFloat8, types.KindFloat4:
			if small {
				return rapid.SampledFrom([]float64{0, math.Copysign(0, -1), 1, -1, 0.5, math.NaN(), math.Inf(1), math.Inf(-1), 5e-324, -5e-324}).Draw(r, "f")
			}
			return math.Float64frombits(rapid.Uint64().Draw(r, "bits"))
		case types.KindNumeric:
			switch rapid.IntRange(0, 9).Draw(r, "form") {
			case 0:
				return &apd.Decimal{Form: apd.NaN}
			case 1:
				return &apd.Decimal{Form: apd.Infinite, Negative: rapid.Bool().Draw(r, "neg")}
			}
			if small {
				return types.NormalizeNumeric(apd.New(rapid.Int64Range(-20, 20).Draw(r, "c"), -rapid.Int32Range(0, 2).Draw(r, "s")))
			}
			digits := rapid.StringMatching(`[1-9][0-9]{0,40}`).Draw(r, "digits")
			d := new(apd.Decimal)
			d.Coeff.SetString(digits, 10)
			d.Exponent = rapid.Int32Range(-60, 30).Draw(r, "e")
			d.Negative = rapid.Bool().Draw(r, "neg")
			return types.NormalizeNumeric(d)
		case types.KindText, types.KindVarchar:
			if small {
				return rapid.SampledFrom([]string{"", "a", "b", "ab", "a\x00", "a\x00b", "\x00", "\xff"}).Draw(r, "s")
			}
			return rapid.String().Draw(r, "s")
		case types.KindChar:
			return rapid.SampledFrom([]string{"a  ", "ab ", "   ", "b  "}).Draw(r, "s")
		case types.KindBytea:
			return rapid.SliceOfN(rapid.SampledFrom([]byte{0, 1, 0xfe, 0xff}), 0, 4).Draw(r, "b")
		case types.KindDate:
			if small {
				return types.Date(rapid.Int32Range(-2, 2).Draw(r, "d"))
			}
			return types.Date(rapid.Int32().Draw(r, "d"))
		case types.KindTime:
			return types.TimeOfDay(rapid.Int64Range(0, types.MicrosPerDay).Draw(r, "t"))
		case types.KindTimestamp:
			return types.Timestamp(rapid.Int64().Draw(r, "ts"))
		case types.KindTimestampTZ:
			return types.TimestampTZ(rapid.Int64Range(-2, 2).Draw(r, "ts"))
		case types.KindInterval:
			if small {
				return types.Interval{
					Months: rapid.Int32Range(-1, 1).Draw(r, "m"),
					Days:   rapid.Int32Range(-30, 30).Draw(r, "d") / 15 * 15,
					Micros: rapid.Int64Range(-1, 1).Draw(r, "us") * types.MicrosPerDay,
				}
			}
			return types.Interval{Months: rapid.Int32().Draw(r, "m"), Days: rapid.Int32().Draw(r, "d"), Micros: rapid.Int64().Draw(r, "us")}
		case types.KindUUID:
			var u types.UUID
			u[0] = rapid.Byte().Draw(r, "u0")
			u[15] = rapid.Byte().Draw(r, "u15")
			return u
		case types.KindArray:
			n := rapid.IntRange(0, 3).Draw(r, "n")
			a := types.Array{Elem: *t.Elem, Values: []types.Datum{}}
			for i := 0; i < n; i++ {
				a.Values = append(a.Values, genDatum(*t.Elem).Draw(r, "e"))
			}
			return a
		}
		panic("unsupported " + t.String())
	})
}

func allTypes() []types.Type {
	return []types.Type{types.TBool, types.TInt2, types.TInt4, types.TInt8, types.TFloat4, types.TFloat8, types.TNumeric,
		types.TText, types.TVarchar, {Kind: types.KindChar, Typmod: 7}, types.TBytea, types.TDate, types.TTime, types.TTimestamp,
		types.TTimestampTZ, types.TInterval, types.TUUID, types.ArrayOf(types.TInt4), types.ArrayOf(types.TText)}
}

// TestKeyOrderEqualsCompare: for random pairs of each type and random
// directions, bytes.Compare of keys equals types.Compare (NULL placement
// applied), and keys round-trip.
func TestKeyOrderEqualsCompare(t *testing.T) {
	for _, typ := range allTypes() {
		t.Run(typ.String(), func(t *testing.T) {
			rapid.Check(t, func(r *rapid.T) {
				a := genDatum(typ).Draw(r, "a")
				b := genDatum(typ).Draw(r, "b")
				dir := Direction{Descending: rapid.Bool().Draw(r, "desc"), NullsFirst: rapid.Bool().Draw(r, "nf")}
				want := 0
				if dir.NullsFirst {
					want = types.CompareNullsFirst(typ, a, b)
					if dir.Descending && a != nil && b != nil {
						want = -want
					}
				} else {
					want = types.CompareNullsLast(typ, a, b)
					if dir.Descending && a != nil && b != nil {
						want = -want
					}
				}
				ka := EncodeColumn(nil, typ, a, dir)
				kb := EncodeColumn(nil, typ, b, dir)
				if got := bytes.Compare(ka, kb); got != sign(want) {
					r.Fatalf("%v vs %v (%+v): key order %d, Compare %d", a, b, dir, got, want)
				}
				da, rest, err := DecodeColumn(ka, typ, dir)
				if err != nil || len(rest) != 0 || !types.Equal(typ, da, a) {
					r.Fatalf("round trip %v -> %v (%v, rest %x)", a, da, err, rest)
				}
			})
		})
	}
}

// TestMultiColumnKey checks a composite key orders lexicographically by
// column, with mixed directions, and decodes.
func TestMultiColumnKey(t *testing.T) {
	ts := []types.Type{types.TText, types.TInt4, types.TNumeric}
	dirs := []Direction{Asc, Desc, Asc}
	rapid.Check(t, func(r *rapid.T) {
		row := func(name string) types.Row {
			return types.Row{genDatum(ts[0]).Draw(r, name+"0"), genDatum(ts[1]).Draw(r, name+"1"), genDatum(ts[2]).Draw(r, name+"2")}
		}
		a, b := row("a"), row("b")
		want := 0
		for i := range ts {
			var c int
			if dirs[i].NullsFirst {
				c = types.CompareNullsFirst(ts[i], a[i], b[i])
			} else {
				c = types.CompareNullsLast(ts[i], a[i], b[i])
			}
			if dirs[i].Descending && a[i] != nil && b[i] != nil {
				c = -c
			}
			if c != 0 {
				want = c
				break
			}
		}
		ka, kb := EncodeKey(nil, ts, a, dirs), EncodeKey(nil, ts, b, dirs)
		if got := bytes.Compare(ka, kb); got != sign(want) {
			r.Fatalf("%v vs %v: %d, want %d", a, b, got, want)
		}
		back, rest, err := DecodeKey(ka, ts, dirs, nil)
		if err != nil || len(rest) != 0 || !types.EqualRows(ts, back, a) {
			r.Fatalf("round trip %v -> %v (%v)", a, back, err)
		}
	})
}

// TestRowRoundTrip: EncodeRow/DecodeRow are exact (same text output,
// numeric scale and interval fields kept).
func TestRowRoundTrip(t *testing.T) {
	ts := allTypes()
	rapid.Check(t, func(r *rapid.T) {
		row := make(types.Row, len(ts))
		for i, typ := range ts {
			row[i] = genDatum(typ).Draw(r, typ.String())
		}
		enc := EncodeRow(nil, ts, row)
		back, err := DecodeRow(enc, ts, nil)
		if err != nil {
			r.Fatal(err)
		}
		for i, typ := range ts {
			if show(typ, row[i]) != show(typ, back[i]) {
				r.Fatalf("%s: %s -> %s", typ, show(typ, row[i]), show(typ, back[i]))
			}
			if typ.Kind == types.KindFloat8 && row[i] != nil && math.Float64bits(row[i].(float64)) != math.Float64bits(back[i].(float64)) {
				r.Fatalf("float bits changed")
			}
		}
		// Truncations are detected, never silently accepted.
		if len(enc) > 1 {
			if _, err := DecodeRow(enc[:len(enc)-1], ts, nil); err == nil {
				r.Fatalf("truncated row decoded without error")
			}
		}
	})
}

func BenchmarkEncodeKeyInt8Text(b *testing.B) {
	ts := []types.Type{types.TInt8, types.TText}
	row := types.Row{int64(123456), "hello world"}
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = EncodeKey(buf[:0], ts, row, nil)
	}
}

func BenchmarkEncodeDecodeRow(b *testing.B) {
	ts := []types.Type{types.TInt8, types.TText, types.TFloat8, types.TNumeric}
	row := types.Row{int64(123456), "hello world", 1.5, apd.New(12345, -2)}
	buf := make([]byte, 0, 64)
	out := make(types.Row, 0, 4)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = EncodeRow(buf[:0], ts, row)
		var err error
		out, err = DecodeRow(buf, ts, out)
		if err != nil {
			b.Fatal(err)
		}
	}
}
