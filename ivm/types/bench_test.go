package types

import (
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"
)

func BenchmarkCompareInt8(b *testing.B) {
	x, y := Datum(int64(12345)), Datum(int64(12346))
	for i := 0; i < b.N; i++ {
		if Compare(TInt8, x, y) >= 0 {
			b.Fatal("order")
		}
	}
}

func BenchmarkHashRow(b *testing.B) {
	ts := []Type{TInt8, TText, TNumeric}
	row := Row{int64(42), "hello world", apd.New(12345, -2)}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = HashRow(ts, row)
	}
}

func BenchmarkFormatTimestampTZ(b *testing.B) {
	loc, _ := time.LoadLocation("America/New_York")
	v := TimestampTZ(774000000123456)
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = AppendFormat(buf[:0], TTimestampTZ, v, loc)
	}
}

func BenchmarkParseTimestamp(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Parse(TTimestamp, "2024-01-31 10:11:12.5", nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseNumeric(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Parse(TNumeric, "12345.678", nil); err != nil {
			b.Fatal(err)
		}
	}
}
