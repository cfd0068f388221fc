package ddl

import (
	"strings"
	"testing"
)

func TestPostgresSourceOptions(t *testing.T) {
	convert := func(sql string) (*CreateSource, error) { return convertSource(t, sql) }
	cs, err := convert("CREATE SOURCE pg FROM POSTGRES (connection = 'host=h dbname=d', publication = 'pub')")
	if err != nil {
		t.Fatal(err)
	}
	if ps := cs.Postgres; ps == nil || ps.Connection != "host=h dbname=d" || ps.Publication != "pub" || ps.Slot != "" || len(cs.Columns) != 0 {
		t.Fatalf("%+v %+v", cs, cs.Postgres)
	}
	if cs, err = convert("CREATE SOURCE pg FROM POSTGRES (connection = 'x', publication = 'p', slot = 'mine_1')"); err != nil || cs.Postgres.Slot != "mine_1" {
		t.Fatalf("%+v %v", cs, err)
	}
	for sql, want := range map[string]string{
		"CREATE SOURCE pg FROM POSTGRES (publication = 'p')":                                  "needs connection",
		"CREATE SOURCE pg FROM POSTGRES (connection = 'x')":                                   "needs publication",
		"CREATE SOURCE pg FROM POSTGRES (connection = 'x', publication = 'p', port = '1')":    "unknown POSTGRES option port",
		"CREATE SOURCE pg FROM POSTGRES (connection = 'x', connection = 'y')":                 "given twice",
		"CREATE SOURCE pg FROM POSTGRES (connection = 'x', publication = 1)":                  "must be a string",
		"CREATE SOURCE pg FROM POSTGRES (connection = 'x', publication = 'p', slot = 'Bad-')": "slot must be",
	} {
		if _, err := convert(sql); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", sql, err, want)
		}
	}
}
