package zset

import (
	"math"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/types"
)

func dec(s string) *apd.Decimal {
	d, _, err := apd.NewFromString(s)
	if err != nil {
		panic(err)
	}
	return d
}

// sampleSchema and sampleRows cover every Arrow-mapped type with NULLs.
var sampleSchema = types.Schema{
	{Name: "b", Type: types.TBool}, {Name: "i2", Type: types.TInt2}, {Name: "i4", Type: types.TInt4},
	{Name: "i8", Type: types.TInt8}, {Name: "f4", Type: types.TFloat4}, {Name: "f8", Type: types.TFloat8},
	{Name: "n", Type: types.TNumeric}, {Name: "t", Type: types.TText}, {Name: "by", Type: types.TBytea},
	{Name: "d", Type: types.TDate}, {Name: "tm", Type: types.TTime}, {Name: "ts", Type: types.TTimestamp},
	{Name: "tz", Type: types.TTimestampTZ}, {Name: "iv", Type: types.TInterval}, {Name: "u", Type: types.TUUID},
}

func sampleRow(t *rapid.T) types.Row {
	row := make(types.Row, len(sampleSchema))
	gens := []func() types.Datum{
		func() types.Datum { return rapid.Bool().Draw(t, "b") },
		func() types.Datum { return int64(rapid.Int16().Draw(t, "i2")) },
		func() types.Datum { return int64(rapid.Int32().Draw(t, "i4")) },
		func() types.Datum { return rapid.Int64().Draw(t, "i8") },
		func() types.Datum { return float64(rapid.Float32().Draw(t, "f4")) },
		func() types.Datum { return rapid.SampledFrom([]float64{0, 1.5, -2, math.Inf(1)}).Draw(t, "f8") },
		func() types.Datum {
			return dec(rapid.SampledFrom([]string{"0", "1.50", "-3", "12345678901234567890.123"}).Draw(t, "n"))
		},
		func() types.Datum { return rapid.SampledFrom([]string{"", "a", "é"}).Draw(t, "t") },
		func() types.Datum { return []byte(rapid.SampledFrom([]string{"", "\x00\xff"}).Draw(t, "by")) },
		func() types.Datum { return types.Date(rapid.Int32Range(-100000, 100000).Draw(t, "d")) },
		func() types.Datum { return types.TimeOfDay(rapid.Int64Range(0, 86400e6-1).Draw(t, "tm")) },
		func() types.Datum { return types.Timestamp(rapid.Int64Range(-1e15, 1e15).Draw(t, "ts")) },
		func() types.Datum { return types.TimestampTZ(rapid.Int64Range(-1e15, 1e15).Draw(t, "tz")) },
		func() types.Datum {
			return types.Interval{Months: rapid.Int32Range(-20, 20).Draw(t, "m"), Days: rapid.Int32Range(-40, 40).Draw(t, "dd"), Micros: rapid.Int64Range(-1e12, 1e12).Draw(t, "us")}
		},
		func() types.Datum { return types.UUID{byte(rapid.IntRange(0, 3).Draw(t, "u")), 1, 2} },
	}
	for i, g := range gens {
		if rapid.IntRange(0, 4).Draw(t, "null") == 0 {
			continue
		}
		row[i] = g()
	}
	return row
}

func TestRowCodecRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		row := sampleRow(t)
		enc := EncodeRow([]byte("prefix"), row)
		got, rest, err := DecodeRow(enc[len("prefix"):])
		if err != nil || len(rest) != 0 {
			t.Fatalf("decode: %v rest %d", err, len(rest))
		}
		if string(EncodeRow(nil, got)) != string(enc[len("prefix"):]) {
			t.Fatalf("round trip %s != %s", FormatRow(got), FormatRow(row))
		}
	})
}

func TestConsolidate(t *testing.T) {
	b := Batch{}
	b.Add(types.Row{int64(2), "b"}, 1)
	b.Add(types.Row{int64(1), "a"}, 2)
	b.Add(types.Row{int64(2), "b"}, -1)
	b.Add(types.Row{int64(1), "a"}, 1)
	b.Add(types.Row{nil, "c"}, -4)
	c := Consolidate(b)
	if c.Len() != 2 || c.Weights[0]+c.Weights[1] != -1 {
		t.Fatalf("consolidated %v", c)
	}
	// Deterministic: the same Z-set in another order consolidates equally.
	r := Batch{Rows: []types.Row{b.Rows[4], b.Rows[3], b.Rows[2], b.Rows[1], b.Rows[0]}, Weights: []int64{-4, 1, -1, 2, 1}}
	if Consolidate(r).String() != c.String() || !Equal(b, r) {
		t.Fatalf("order-dependent consolidation: %v vs %v", Consolidate(r), c)
	}
}

func TestConsolidateProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var b Batch
		model := map[int64]int64{}
		for i, n := 0, rapid.IntRange(0, 20).Draw(t, "n"); i < n; i++ {
			v := int64(rapid.IntRange(0, 3).Draw(t, "v"))
			w := int64(rapid.IntRange(-2, 2).Draw(t, "w"))
			b.Add(types.Row{v}, w)
			model[v] += w
		}
		c := Consolidate(b)
		seen := 0
		for i, r := range c.Rows {
			if c.Weights[i] == 0 || model[r[0].(int64)] != c.Weights[i] {
				t.Fatalf("row %v weight %d model %d", r, c.Weights[i], model[r[0].(int64)])
			}
			seen++
		}
		nonZero := 0
		for _, w := range model { //lint:maprange counting only
			if w != 0 {
				nonZero++
			}
		}
		if seen != nonZero {
			t.Fatalf("%d rows, model has %d", seen, nonZero)
		}
	})
}

func TestArrowRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var b Batch
		for i, n := 0, rapid.IntRange(0, 5).Draw(t, "rows"); i < n; i++ {
			b.Add(sampleRow(t), int64(rapid.IntRange(-3, 3).Filter(func(w int) bool { return w != 0 }).Draw(t, "w")))
		}
		rec, err := ToArrow(sampleSchema, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer rec.Release()
		if rec.Schema().Field(len(sampleSchema)).Name != WeightColumn {
			t.Fatal("weight column missing")
		}
		got, err := FromArrow(sampleSchema, rec)
		if err != nil {
			t.Fatal(err)
		}
		if got.Len() != b.Len() {
			t.Fatalf("%d rows, want %d", got.Len(), b.Len())
		}
		for i := range b.Rows {
			if string(EncodeRow(nil, got.Rows[i])) != string(EncodeRow(nil, b.Rows[i])) || got.Weights[i] != b.Weights[i] {
				t.Fatalf("row %d: %s:%d want %s:%d", i, FormatRow(got.Rows[i]), got.Weights[i], FormatRow(b.Rows[i]), b.Weights[i])
			}
		}
	})
}
