package sql_test

import (
	"strings"
	"testing"
)

// TestSameSubtreeBuiltOnce checks a subtree the plan holds twice (a CTE
// read twice) is lowered into one set of operators, and that subtrees
// differing in any expression are not.
func TestSameSubtreeBuiltOnce(t *testing.T) {
	e := newEngine()
	if _, err := e.exec(`CREATE TABLE t (a int PRIMARY KEY, b int, c text)`); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		query string
		aggs  int // aggregate operators in the circuit
	}{
		// The count per b once, the max over it once.
		{`WITH n AS (SELECT b, count(*) AS k FROM t GROUP BY b)
			SELECT n.b, n.k FROM n JOIN (SELECT max(k) AS m FROM n) x ON n.k >= x.m`, 2},
		{`SELECT x.b, x.k FROM (SELECT b, count(*) AS k FROM t WHERE a > 1 GROUP BY b) x
			JOIN (SELECT b, count(*) AS k FROM t WHERE a > 1 GROUP BY b) y ON x.b = y.b`, 1},
		// Different filters, different counts.
		{`SELECT x.b, x.k FROM (SELECT b, count(*) AS k FROM t WHERE a > 1 GROUP BY b) x
			JOIN (SELECT b, count(*) AS k FROM t WHERE a > 2 GROUP BY b) y ON x.b = y.b`, 2},
	} {
		circ, _, _ := buildView(t, e, c.query)
		aggs := 0
		for _, st := range circ.Stats() {
			if strings.HasPrefix(st.Label, "aggregate") {
				aggs++
			}
		}
		if aggs != c.aggs {
			t.Errorf("%s: %d aggregate operators, want %d", c.query, aggs, c.aggs)
		}
	}
}
