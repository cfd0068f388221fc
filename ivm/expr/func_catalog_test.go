package expr

import (
	"testing"

	"github.com/rockstream/rockstream/ivm/types"
)

func TestFormatType(t *testing.T) {
	for _, c := range []struct {
		oid, typmod int64
		has         bool
		want        string
	}{
		{23, 0, false, "integer"}, {1043, 14, true, "character varying(10)"}, {1043, -1, true, "character varying"},
		{1700, (10<<16 | 2) + 4, true, "numeric(10,2)"}, {1184, -1, true, "timestamp with time zone"},
		{1007, -1, true, "integer[]"}, {1042, -1, true, "bpchar"}, {1042, 9, true, "character(5)"}, {424242, -1, false, "???"},
	} {
		if got := FormatType(c.oid, c.typmod, c.has); got != c.want {
			t.Errorf("format_type(%d, %d) = %q, want %q", c.oid, c.typmod, got, c.want)
		}
	}
}

func TestCatalogHelpers(t *testing.T) {
	for in, want := range map[string]string{"abc": "abc", "Abc": `"Abc"`, "select": `"select"`, `a"b`: `"a""b"`, "": `""`} {
		if got := quoteIdent(in); got != want {
			t.Errorf("quote_ident(%q) = %q, want %q", in, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0 bytes", 10239: "10239 bytes", 10240: "10 kB", 1 << 30: "1024 MB", -20480: "-20 kB"} {
		if got := sizePretty(n); got != want {
			t.Errorf("pg_size_pretty(%d) = %q, want %q", n, got, want)
		}
	}
	f := Overloads("array_to_string")[1]
	arr := types.Array{Elem: types.TInt4, Values: []types.Datum{int64(1), nil, int64(3)}}
	if got, _ := f.Eval(nil, nil, []types.Datum{arr, ",", "*"}); got != "1,*,3" {
		t.Errorf("array_to_string with null string = %v", got)
	}
	if got, _ := Overloads("array_to_string")[0].Eval(nil, nil, []types.Datum{arr, ","}); got != "1,3" {
		t.Errorf("array_to_string = %v", got)
	}
	if got, _ := Overloads("pg_get_indexdef")[0].Eval(nil, nil, []types.Datum{int64(1)}); got != nil {
		t.Errorf("pg_get_indexdef without a catalog = %v, want NULL", got)
	}
}
