// Package zsettest generates tiny-domain Z-sets over every type that has a
// columnar form (zset.Columnar), NULLs and extreme values included, for
// property tests comparing the row and columnar paths.
package zsettest

import (
	"fmt"
	"math"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// ColumnarTypes returns every type with a columnar form.
func ColumnarTypes() []types.Type {
	return []types.Type{
		types.TBool, types.TInt2, types.TInt4, types.TInt8, types.TFloat8, types.TText,
		{Kind: types.KindVarchar, Typmod: 8}, {Kind: types.KindChar, Typmod: 6}, types.TName, types.TBytea,
		types.TDate, types.TTime, types.TTimestamp, types.TTimestampTZ, types.TUUID,
	}
}

// Domain returns a tiny domain of t's values: NULL, a small value, and the
// extremes (overflow candidates for arithmetic).
func Domain(t types.Type) []types.Datum {
	switch t.Kind {
	case types.KindBool:
		return []types.Datum{nil, true, false}
	case types.KindInt2:
		return []types.Datum{nil, int64(0), int64(-1), int64(math.MaxInt16), int64(math.MinInt16)}
	case types.KindInt4:
		return []types.Datum{nil, int64(0), int64(7), int64(math.MaxInt32), int64(math.MinInt32)}
	case types.KindInt8:
		return []types.Datum{nil, int64(0), int64(-1), int64(math.MaxInt64), int64(math.MinInt64)}
	case types.KindFloat8:
		return []types.Datum{nil, 0.0, math.Copysign(0, -1), 1.5, math.NaN(), math.Inf(-1)}
	case types.KindText, types.KindVarchar, types.KindChar, types.KindName:
		return []types.Datum{nil, "", "a", "é\x00z"}
	case types.KindBytea:
		return []types.Datum{nil, []byte{}, []byte{0}, []byte{1, 255}}
	case types.KindDate:
		return []types.Datum{nil, types.Date(0), types.Date(-1), types.Date(math.MaxInt32), types.Date(math.MinInt32)}
	case types.KindTime:
		return []types.Datum{nil, types.TimeOfDay(0), types.TimeOfDay(86400_000_000)}
	case types.KindTimestamp:
		return []types.Datum{nil, types.Timestamp(0), types.Timestamp(math.MaxInt64), types.Timestamp(math.MinInt64)}
	case types.KindTimestampTZ:
		return []types.Datum{nil, types.TimestampTZ(1), types.TimestampTZ(math.MaxInt64), types.TimestampTZ(math.MinInt64)}
	case types.KindUUID:
		return []types.Datum{nil, types.UUID{}, types.UUID{1, 2, 3}}
	}
	panic(fmt.Sprintf("zsettest: no domain for %s", t.SQLName()))
}

// Schema draws a schema of 1..max columns of columnar types.
func Schema(t *rapid.T, max int) types.Schema {
	ts := ColumnarTypes()
	n := rapid.IntRange(1, max).Draw(t, "width")
	s := make(types.Schema, n)
	for j := range s {
		s[j] = types.Column{Name: fmt.Sprintf("c%d", j), Type: rapid.SampledFrom(ts).Draw(t, "type"), Nullable: true}
	}
	return s
}

// Batch draws up to 10 rows of schema from the columns' domains with
// weights in {-2, -1, 1, 2}.
func Batch(t *rapid.T, schema types.Schema) zset.Batch {
	var b zset.Batch
	for range rapid.IntRange(0, 10).Draw(t, "rows") {
		row := make(types.Row, len(schema))
		for j, c := range schema {
			row[j] = rapid.SampledFrom(Domain(c.Type)).Draw(t, c.Name)
		}
		b.Add(row, int64(rapid.SampledFrom([]int{-2, -1, 1, 2}).Draw(t, "weight")))
	}
	return b
}

// Columns converts b to columnar form, failing the test on error.
func Columns(t *rapid.T, schema types.Schema, b zset.Batch) *zset.Columns {
	c, err := zset.ColumnsFromRows(schema, b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
