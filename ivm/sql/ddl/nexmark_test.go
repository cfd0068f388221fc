package ddl

import (
	"strings"
	"testing"

	"github.com/rockstream/rockstream/ivm/sql/parse"
)

func TestNexmarkSourceOptions(t *testing.T) {
	convert := func(sql string) (*CreateSource, error) { return convertSource(t, sql) }
	cs, err := convert("CREATE SOURCE bid FROM NEXMARK (events = 1000, rate = 500, seed = 3, time = 'flink')")
	if err != nil {
		t.Fatal(err)
	}
	if nx := cs.Nexmark; nx == nil || nx.Table != "bid" || nx.Events != 1000 || nx.Seed != 3 || !nx.FlinkTime || cs.RatePerSecond != 500 || len(cs.Columns) != 7 || cs.Columns[5].Column.Type.SQLName() != "timestamp(3) without time zone" {
		t.Fatalf("%+v %+v", cs, cs.Nexmark)
	}
	if cs, err = convert("CREATE SOURCE people FROM NEXMARK (table = 'person')"); err != nil || cs.Nexmark.Table != "person" || cs.RatePerSecond != nexmarkRateDefault {
		t.Fatalf("%+v %v", cs, err)
	}
	for sql, want := range map[string]string{
		"CREATE SOURCE x FROM NEXMARK":                        "table must be person, auction or bid",
		"CREATE SOURCE bid FROM NEXMARK (rate = 0)":           "rate must be positive",
		"CREATE SOURCE bid FROM NEXMARK (events = -1)":        "non-negative integer",
		"CREATE SOURCE bid FROM NEXMARK (speed = 1)":          "unknown NEXMARK option speed",
		"CREATE SOURCE bid FROM NEXMARK (seed = 1, seed = 2)": "given twice",
		"CREATE SOURCE bid FROM NEXMARK (time = 'beam')":      "time must be",
	} {
		if _, err := convert(sql); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", sql, err, want)
		}
	}
}

// convertSource parses and converts a CREATE SOURCE statement (a parse
// error fails the test; a conversion error is returned).
func convertSource(t *testing.T, sql string) (*CreateSource, error) {
	t.Helper()
	st, err := parse.ParseOne(sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	out, err := Convert(st)
	if err != nil {
		return nil, err
	}
	return out.(*CreateSource), nil
}
