package types

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/internal/pgtest"
)

// randomInput builds text inputs for date/time/interval/numeric types from
// random components (valid and invalid), to compare Parse+Format with
// PostgreSQL's input and output functions.
func randomInput(r *rand.Rand) (string, Type, string) {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	num := func(lo, hi int) string { return fmt.Sprint(lo + r.IntN(hi-lo+1)) }
	switch r.IntN(5) {
	case 0:
		var parts []string
		for n := 1 + r.IntN(3); n > 0; n-- {
			v := pick("1", "2", "-3", "0", "1.5", "-0.25", "100", "+7", "2.75")
			parts = append(parts, v+" "+pick("year", "years", "mon", "months", "week", "day", "days", "hour", "hours", "min", "minutes", "sec", "seconds", "ms", "microseconds", "decade", "century"))
		}
		if r.IntN(3) == 0 {
			parts = append(parts, pick("", "-", "+")+num(0, 30)+":"+fmt.Sprintf("%02d", r.IntN(60))+pick("", ":"+fmt.Sprintf("%02d", r.IntN(60)), ":07.5"))
		}
		if r.IntN(6) == 0 {
			parts = append(parts, "ago")
		}
		return strings.Join(parts, " "), TInterval, "interval"
	case 1:
		s := "P"
		for _, u := range []string{"Y", "M", "W", "D"} {
			if r.IntN(2) == 0 {
				s += pick("1", "2", "0", "1.5", "-1") + u
			}
		}
		if r.IntN(2) == 0 {
			s += "T"
			for _, u := range []string{"H", "M", "S"} {
				if r.IntN(2) == 0 {
					s += pick("1", "30", "0.5", "-2") + u
				}
			}
		}
		return s, TInterval, "interval"
	case 2:
		y := pick("2024", "2023", "1999", "0001", "2000", "10000", "99")
		m := pick("01", "02", "12", "13", "1", "00")
		d := pick("01", "28", "29", "30", "31", "32", "1")
		s := y + "-" + m + "-" + d
		if r.IntN(2) == 0 {
			s += pick(" ", "T") + num(0, 24) + ":" + pick("00", "59", "60", "5") + pick("", ":00", ":59.999999", ":60", ":30.1234567")
			s += pick("", "", "+05", "-08:00", "Z", " UTC", "+0530", " BC")
		} else if r.IntN(4) == 0 {
			s += " BC"
		}
		t, name := pick3(r, TDate, TTimestamp, TTimestampTZ)
		return s, t, name
	case 3:
		s := pick("", "-", "+") + pick("0", "1", "12", "123456789", "99999") + pick("", ".", ".5", ".05", ".123456789", ".000") + pick("", "e3", "e-2", "E+1")
		return s, Type{Kind: KindNumeric, Typmod: MakeNumericTypmod(8, 3)}, "numeric(8,3)"
	}
	s := pick("", "-", "+") + pick("0", "1", "12", "1234567", "16777217", "1e38", "1e39", "3.5e-45", "1e-50", "0.1", "nan", "inf")
	return s, TFloat4, "float4"
}

func pick3(r *rand.Rand, a, b, c Type) (Type, string) {
	switch r.IntN(3) {
	case 0:
		return a, "date"
	case 1:
		return b, "timestamp"
	}
	return c, "timestamptz"
}

var inputSeed = flag.Uint64("types.seed", 7, "seed for TestRandomInputsMatchPostgres")

// TestRandomInputsMatchPostgres feeds random text inputs to PostgreSQL and
// Parse; reproduce with -types.seed=N.
func TestRandomInputsMatchPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(*inputSeed, 11))
	mismatches := 0
	for i := 0; i < 1500 && mismatches < 25; i++ {
		in, typ, name := randomInput(r)
		want, _, wantState, wantErr := pgtest.QueryText(ctx, conn, "SELECT "+sqlQuote(in)+"::"+name)
		v, err := Parse(typ, in, time.UTC)
		var got, gotState string
		if err != nil {
			if e, ok := errcode.As(err); ok {
				gotState = e.State()
			}
		} else {
			got = Format(typ, v)
		}
		if (wantErr == nil) != (err == nil) || wantState != gotState || want != got {
			mismatches++
			t.Errorf("seed %d: %q::%s: PostgreSQL %q/%s/%v, we %q/%s/%v", *inputSeed, in, name, want, wantState, wantErr, got, gotState, err)
		}
	}
}
