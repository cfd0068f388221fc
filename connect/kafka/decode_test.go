package kafka

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
	"github.com/rockstream/rockstream/ivm/types"
)

// jsonPieces are the tiny domain the JSON decoder is tested on: names of
// the columns (escaped, repeated, unknown, with invalid UTF-8), values of
// every JSON kind, and stray syntax, so that duplicates, nulls and
// malformed objects are common.
var jsonPieces = []string{
	`{`, `}`, `[`, `]`, `:`, `,`, ` `, "\n",
	`"a"`, `"b"`, `"c"`, `"d"`, `"\u0061"`, `"a\"b"`, `"zz"`, "\"\xff\"",
	`1`, `-2`, `3.5`, `1e2`, `"7"`, `"x"`, `"a\tb"`, "\"\xffq\"", `"\u00e9"`, `null`, `true`, `false`,
	`{"a": 1}`, `[1, "]", {"b": [2]}]`, `""`,
}

var jsonTestColumns = []catalog.Column{
	{Name: "a", Type: types.TInt4, NotNull: true},
	{Name: "b", Type: types.TText},
	{Name: "c", Type: types.TJSONB},
	{Name: "d", Type: types.TBool},
}

// TestJSONRowMatchesReference checks the in-place JSON object scan
// against the encoding/json map form on well-formed objects of the tiny
// domain and on arbitrary strings of its pieces: the same row, or the
// same error.
func TestJSONRowMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var b []byte
		if rapid.Bool().Draw(t, "object") {
			b = append(b, '{')
			n := rapid.IntRange(0, 5).Draw(t, "fields")
			for i := 0; i < n; i++ {
				if i > 0 {
					b = append(b, ", "...)
				}
				b = append(b, rapid.SampledFrom(jsonPieces[8:16]).Draw(t, "name")...)
				b = append(b, ':')
				b = append(b, rapid.SampledFrom(jsonPieces[16:]).Draw(t, "value")...)
			}
			b = append(b, '}')
		} else {
			n := rapid.IntRange(0, 12).Draw(t, "pieces")
			for i := 0; i < n; i++ {
				b = append(b, rapid.SampledFrom(jsonPieces).Draw(t, "piece")...)
			}
		}
		key := rapid.Bool().Draw(t, "key")
		d := &decoder{format: ddl.KafkaFormatJSON, columns: jsonTestColumns, key: []int{0}}
		indexes := d.allColumns()
		if key {
			indexes = d.key
		}
		// Twice: the scratch state must not leak between records.
		for range 2 {
			got, gotErr := d.jsonRow(b, indexes)
			want, wantErr := d.jsonRowReference(b, indexes)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
				t.Fatalf("%q:\n got %#v, %v\nwant %#v, %v", b, got, gotErr, want, wantErr)
			}
		}
	})
}

func BenchmarkJSONRow(b *testing.B) {
	d := &decoder{format: ddl.KafkaFormatJSON, columns: []catalog.Column{
		{Name: "id", Type: types.TInt8}, {Name: "category", Type: types.TInt4},
		{Name: "price", Type: types.TNumeric}, {Name: "name", Type: types.TText},
	}}
	value := []byte(`{"id": 123456, "category": 56, "price": "456.25", "name": "item 123456"}`)
	for _, f := range []struct {
		name string
		row  func([]byte, []int) (types.Row, error)
	}{{"scan", d.jsonRow}, {"reference", d.jsonRowReference}} {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := f.row(value, d.allColumns()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
