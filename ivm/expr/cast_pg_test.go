package expr

import (
	"context"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// TestCastMatrixMatchesPostgres casts sample values of each type to every
// other type and compares the text (or SQLSTATE) with PostgreSQL.
func TestCastMatrixMatchesPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	ctx := context.Background()
	env := &Env{TimeZone: time.UTC}
	samples := map[string][]string{
		"int2":        {"0", "-32768", "12"},
		"int4":        {"0", "2147483647", "-70000", "1"},
		"int8":        {"9223372036854775807", "-5", "40000"},
		"float4":      {"1.5", "'NaN'", "-0.5", "3.4e38", "2.5"},
		"float8":      {"2.5", "'Infinity'", "1e300", "-3.5", "0.1"},
		"numeric":     {"1.50", "'NaN'", "-2.5", "99999.995", "1e20"},
		"bool":        {"true", "false"},
		"text":        {"'12'", "'abc'", "'2024-01-31'", "' 7 '", "'t'"},
		"varchar(3)":  {"'ab'", "'xyz'"},
		"char(4)":     {"'ab'"},
		"date":        {"'2024-01-31'", "'infinity'"},
		"timestamp":   {"'2024-01-31 10:11:12.5'", "'-infinity'"},
		"timestamptz": {"'2024-01-31 10:11:12.5+02'"},
		"time":        {"'10:11:12.5'"},
		"interval":    {"'1 day 02:03:04.5'", "'-1 mon'"},
		"uuid":        {"'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'"},
		"bytea":       {"'\\x0102'"},
	}
	targets := []string{"int2", "int4", "int8", "float4", "float8", "numeric", "numeric(4,1)", "bool", "text", "varchar(2)",
		"char(3)", "date", "timestamp", "timestamptz", "time", "interval", "uuid", "bytea"}
	order := []string{"int2", "int4", "int8", "float4", "float8", "numeric", "bool", "text", "varchar(3)", "char(4)", "date",
		"timestamp", "timestamptz", "time", "interval", "uuid", "bytea"}
	n := 0
	for _, from := range order {
		for _, v := range samples[from] {
			for _, to := range targets {
				sql := "(" + v + "::" + from + ")::" + to
				want, wantNull, wantState, wantErr := pgtest.QueryText(ctx, conn, "SELECT "+sql)
				got, gotNull, gotState, err := evalSQL(sql, env)
				n++
				if (wantErr == nil) != (err == nil) || gotState != wantState || got != want || gotNull != wantNull {
					t.Errorf("SELECT %s: PostgreSQL %q/%s/%v, we %q/%s/%v", sql, want, wantState, wantErr, got, gotState, err)
				}
			}
		}
	}
	t.Logf("%d casts compared", n)
}
