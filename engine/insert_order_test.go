package engine_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestInsertValuesInWrittenOrder: INSERT ... VALUES processes its rows in
// the order they are written, as PostgreSQL does: ON CONFLICT DO NOTHING
// keeps the first of several rows with one key, and RETURNING lists the
// rows in VALUES order (ORMs match returned ids to their objects by it).
// The ad-hoc circuit used to hand them over in no particular order.
func TestInsertValuesInWrittenOrder(t *testing.T) {
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	o := newOracle(t, rs)
	o.both("CREATE TABLE tt (k text PRIMARY KEY, v int)")
	o.both("CREATE TABLE ids (id serial PRIMARY KEY, name text)")
	keys := []string{"A", "a", "", "z", " A", "Ab", "b", "zz"}
	var vals []string
	for i := range 300 {
		vals = append(vals, fmt.Sprintf("('%s', %d)", keys[(i*7+i/5)%len(keys)], (i*37)%101))
	}
	insert := "INSERT INTO tt VALUES " + strings.Join(vals, ", ") + " ON CONFLICT DO NOTHING RETURNING k, v"
	if got, want := rowsText(t, rs, insert), rowsText(t, o.pg, insert); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("INSERT ... ON CONFLICT DO NOTHING RETURNING:\n got: %v\nwant: %v", got, want)
	}
	const read = "SELECT k, v FROM tt ORDER BY k"
	if got, want := rowsText(t, rs, read), rowsText(t, o.pg, read); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows kept:\n got: %v\nwant: %v", got, want)
	}
	var names []string
	for i := range 200 {
		names = append(names, fmt.Sprintf("('n%03d')", (i*53)%200))
	}
	ins := "INSERT INTO ids (name) VALUES " + strings.Join(names, ", ") + " RETURNING id, name"
	if got, want := rowsText(t, rs, ins), rowsText(t, o.pg, ins); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("INSERT ... RETURNING order:\n got: %v\nwant: %v", got, want)
	}
}
