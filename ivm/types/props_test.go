package types

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"
	"pgregory.net/rapid"
)

// GenDatum draws a small-domain value of a type, so equal values (and the
// tricky equivalents: -0/0, 1.0/1.00, 1 mon/30 days) are common.
func genDatum(t Type) *rapid.Generator[Datum] {
	return rapid.Custom(func(r *rapid.T) Datum {
		switch t.Kind {
		case KindFloat8:
			return rapid.SampledFrom([]float64{0, math.Copysign(0, -1), 1, -1, 0.5, math.NaN(), math.Inf(1), math.Inf(-1), 1e300}).Draw(r, "f")
		case KindNumeric:
			coeff := rapid.Int64Range(-3, 3).Draw(r, "c")
			scale := rapid.Int32Range(0, 2).Draw(r, "s")
			var pow int64 = 1
			for i := int32(0); i < scale; i++ {
				pow *= 10
			}
			form := rapid.IntRange(0, 9).Draw(r, "form")
			switch form {
			case 0:
				return &apd.Decimal{Form: apd.NaN}
			case 1:
				return &apd.Decimal{Form: apd.Infinite, Negative: rapid.Bool().Draw(r, "neg")}
			}
			return NormalizeNumeric(apd.New(coeff*pow, -scale))
		case KindInterval:
			return Interval{
				Months: rapid.Int32Range(-1, 1).Draw(r, "m"),
				Days:   rapid.Int32Range(-30, 30).Draw(r, "d") / 15 * 15,
				Micros: rapid.Int64Range(-1, 1).Draw(r, "us") * MicrosPerDay,
			}
		case KindText:
			return rapid.SampledFrom([]string{"", "a", "b", "ab", "é"}).Draw(r, "s")
		case KindChar:
			return rapid.SampledFrom([]string{"a", "a ", "a  ", "b"}).Draw(r, "s")
		case KindInt8:
			return rapid.Int64Range(-2, 2).Draw(r, "i")
		}
		panic("unsupported")
	})
}

func TestCompareIsTotalOrderAndHashConsistent(t *testing.T) {
	for _, typ := range []Type{TFloat8, TNumeric, TInterval, TText, {Kind: KindChar, Typmod: 7}, TInt8} {
		t.Run(typ.String(), func(t *testing.T) {
			rapid.Check(t, func(r *rapid.T) {
				a := genDatum(typ).Draw(r, "a")
				b := genDatum(typ).Draw(r, "b")
				c := genDatum(typ).Draw(r, "c")
				ab, ba := Compare(typ, a, b), Compare(typ, b, a)
				if ab != -ba {
					r.Fatalf("antisymmetry: %v %v -> %d %d", a, b, ab, ba)
				}
				if Compare(typ, a, a) != 0 {
					r.Fatalf("reflexivity: %v", a)
				}
				if ab <= 0 && Compare(typ, b, c) <= 0 && Compare(typ, a, c) > 0 {
					r.Fatalf("transitivity: %v %v %v", a, b, c)
				}
				if (ab == 0) != Equal(typ, a, b) {
					r.Fatalf("Equal disagrees with Compare: %v %v", a, b)
				}
				if ab == 0 && Hash(typ, a) != Hash(typ, b) {
					r.Fatalf("equal values hash differently: %v %v", a, b)
				}
			})
		})
	}
}

func TestRowHelpers(t *testing.T) {
	ts := []Type{TInt8, TText}
	a := Row{int64(1), nil}
	b := Row{int64(1), "x"}
	if CompareRows(ts, a, b) != 1 || CompareRows(ts, b, a) != -1 {
		t.Fatal("NULL must sort last")
	}
	if !EqualRows(ts, a, Row{int64(1), nil}) || EqualRows(ts, a, b) {
		t.Fatal("EqualRows")
	}
	if HashRow(ts, a) == HashRow(ts, b) {
		t.Fatal("HashRow collision on a trivial pair")
	}
	if HashRow(ts, a) != HashRow(ts, Row{int64(1), nil}) {
		t.Fatal("HashRow not deterministic")
	}
	// Big-coefficient numerics reduce to the same hash as small ones.
	big, _, _ := apd.NewFromString("1.000000000000000000000000000000")
	if Hash(TNumeric, big) != Hash(TNumeric, apd.New(1, 0)) || !Equal(TNumeric, big, apd.New(1, 0)) {
		t.Fatal("1.000...0 and 1 must be equal and hash equal")
	}
}

func TestParseAtRelativeWords(t *testing.T) {
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	// 2024-03-10 04:30 UTC is 2024-03-09 23:30 in New York (EST).
	now, err := Parse(TTimestampTZ, "2024-03-10 04:30:00+00", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		t    Type
		in   string
		want string
	}{
		{TDate, "today", "2024-03-09"},
		{TDate, "tomorrow", "2024-03-10"},
		{TDate, " Yesterday ", "2024-03-08"},
		{TTimestamp, "now", "2024-03-09 23:30:00"},
		{TTimestamp, "today", "2024-03-09 00:00:00"},
		{TTimestampTZ, "now", "2024-03-09 23:30:00-05"},
		{TTimestampTZ, "tomorrow", "2024-03-10 00:00:00-05"},
		{TTime, "now", "23:30:00"},
		{TDate, "2024-01-01", "2024-01-01"},
	}
	for _, c := range cases {
		v, err := ParseAt(c.t, c.in, loc, now.(TimestampTZ))
		if err != nil {
			t.Errorf("%s %q: %v", c.t, c.in, err)
			continue
		}
		if got := FormatTZ(c.t, v, loc); got != c.want {
			t.Errorf("%s %q = %q, want %q", c.t, c.in, got, c.want)
		}
	}
	if _, err := Parse(TDate, "today", loc); err == nil {
		t.Error("Parse without a clock must reject 'today'")
	}
}

// TestNumericHashIgnoresTrailingZeros: a value and the same value with
// extra trailing zeros (crossing the 18/19-digit boundary and the int64
// range) hash and compare equal.
func TestNumericHashIgnoresTrailingZeros(t *testing.T) {
	rapid.Check(t, func(r *rapid.T) {
		digits := rapid.StringMatching(`[1-9][0-9]{0,22}[1-9]`).Draw(r, "digits")
		zeros := rapid.IntRange(0, 25).Draw(r, "zeros")
		exp := rapid.Int32Range(-30, 0).Draw(r, "exp")
		neg := rapid.Bool().Draw(r, "neg")
		a := new(apd.Decimal)
		a.Coeff.SetString(digits, 10)
		a.Exponent, a.Negative = exp, neg
		b := new(apd.Decimal)
		b.Coeff.SetString(digits+strings.Repeat("0", zeros), 10)
		b.Exponent, b.Negative = exp-int32(zeros), neg
		if Compare(TNumeric, a, b) != 0 || Hash(TNumeric, a) != Hash(TNumeric, b) {
			r.Fatalf("%s vs %s: compare %d, hashes %x %x", a, b, Compare(TNumeric, a, b), Hash(TNumeric, a), Hash(TNumeric, b))
		}
	})
}
