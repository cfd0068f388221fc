package source

import (
	"testing"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/ivm/types"
)

func spec(t *testing.T, sql string) *ddl.CreateSource {
	t.Helper()
	st, err := parse.ParseOne(sql)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ddl.Convert(st)
	if err != nil {
		t.Fatal(err)
	}
	return c.(*ddl.CreateSource)
}

// TestGeneratorValues: values respect their bounds and lists, sequences
// count from 1, and row i is the same every time (restart-safe).
func TestGeneratorValues(t *testing.T) {
	s := spec(t, `CREATE SOURCE o FROM GENERATE ROWS AS (
		id BIGINT GENERATED, q INT UNIFORM(1, 20), price DECIMAL(10,2) UNIFORM(1.00, 500.00),
		f DOUBLE PRECISION UNIFORM(-1, 1), region TEXT PICK('a', 'b', 'c')) RATE = 10 PER SECOND`)
	cols, err := compileColumns(s)
	if err != nil {
		t.Fatal(err)
	}
	var id catalog.ID
	id.Object[15] = 42
	g := &Generator{cfg: Config{Source: id, Spec: s}, columns: cols}
	lo, _, _ := apd.NewFromString("1.00")
	hi, _, _ := apd.NewFromString("500.00")
	seen := map[string]bool{}
	for i := uint64(1); i <= 2000; i++ {
		row, err := g.row(i)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := g.row(i)
		if types.CompareRows([]types.Type{types.TInt8, types.TInt4, types.TNumeric, types.TFloat8, types.TText}, row, again) != 0 {
			t.Fatalf("row %d not deterministic: %v vs %v", i, row, again)
		}
		if row[0].(int64) != int64(i) {
			t.Fatalf("sequence %v at %d", row[0], i)
		}
		if q := row[1].(int64); q < 1 || q > 20 {
			t.Fatalf("q=%d out of [1,20]", q)
		}
		p := row[2].(*apd.Decimal)
		if p.Cmp(lo) < 0 || p.Cmp(hi) > 0 || p.Exponent != -2 {
			t.Fatalf("price %s out of [1.00, 500.00] or wrong scale", p)
		}
		if f := row[3].(float64); f < -1 || f > 1 {
			t.Fatalf("f=%v", f)
		}
		seen[row[4].(string)] = true
	}
	if len(seen) != 3 {
		t.Fatalf("PICK values seen: %v", seen)
	}
}
