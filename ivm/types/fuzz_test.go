package types

import (
	"testing"
	"time"
)

// FuzzParseFormatRoundTrip: for every kind, Parse never panics, and a value
// that parses prints to text that parses back to an equal value which
// prints identically (output is a fixed point of input).
func FuzzParseFormatRoundTrip(f *testing.F) {
	for _, s := range []string{"1", "-32768", "1.50", "1e5", "NaN", "-Infinity", "t", "2024-01-31", "2024-01-31 10:11:12.5+02",
		"1 day 02:00:00", "P1Y2M", "-1 days +02:00:00", "\\x0a", "{1,2,NULL}", "{\"a b\",c}", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
		"0044-03-15 BC", "infinity", "10:11:12", "@ 1 hour ago", "1.5 months", " 12 ", "1e-400", "{\"a\": [1, 2.50]}"} {
		f.Add(s)
	}
	kinds := []Type{TBool, TInt2, TInt4, TInt8, TFloat4, TFloat8, TNumeric, {Kind: KindNumeric, Typmod: MakeNumericTypmod(6, 2)},
		TText, {Kind: KindVarchar, Typmod: 8}, {Kind: KindChar, Typmod: 6}, TBytea, TDate, TTime, TTimestamp, TTimestampTZ, TInterval,
		TUUID, TJSONB, ArrayOf(TInt4), ArrayOf(TText), ArrayOf(TNumeric)}
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, typ := range kinds {
			v, err := Parse(typ, s, loc)
			if err != nil {
				continue
			}
			out := FormatTZ(typ, v, loc)
			v2, err := Parse(typ, out, loc)
			if err != nil {
				t.Fatalf("%s: %q parsed, printed %q, which fails: %v", typ, s, out, err)
			}
			if !Equal(typ, v, v2) {
				t.Fatalf("%s: %q -> %q -> not equal", typ, s, out)
			}
			if out2 := FormatTZ(typ, v2, loc); out2 != out {
				t.Fatalf("%s: %q -> %q -> %q", typ, s, out, out2)
			}
			if Hash(typ, v) != Hash(typ, v2) {
				t.Fatalf("%s: %q: equal values hash differently", typ, s)
			}
		}
	})
}
