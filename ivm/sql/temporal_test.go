package sql_test

import (
	"strings"
	"testing"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/sql/sqltest"
)

// TestTemporalFilterCompile checks which uses of now() a materialized
// view accepts (each becoming a TemporalFilter with the expected bounds)
// and that every other use is refused with RS-2001 naming the accepted
// form.
func TestTemporalFilterCompile(t *testing.T) {
	cat := catalog.NewMemory(catalog.NamespaceID{})
	if err := sqltest.Exec(cat, `CREATE TABLE e (id int PRIMARY KEY, ts timestamptz, lts timestamp, d date, n int);`, nil); err != nil {
		t.Fatal(err)
	}
	accepted := []struct{ query, bounds string }{
		{"SELECT id FROM e WHERE ts > now() - interval '1 hour'", "ts > now() - '01:00:00'"},
		{"SELECT id FROM e WHERE mz_now() <= ts + interval '1 day' AND n > 2", "(ts + '{0 1 0}'::interval) >= now()"},
		{"SELECT id FROM e WHERE ts BETWEEN now() - interval '30 minutes' AND now()", "ts >= now() - '00:30:00' AND ts <= now()"},
		{"SELECT id FROM e WHERE ts + interval '1 day' > now() AND ts <= now()", "(ts + '{0 1 0}'::interval) > now() AND ts <= now()"},
		{"SELECT id FROM e WHERE lts < CURRENT_TIMESTAMP + interval '5 seconds'", "lts::timestamp with time zone < now() + '00:00:05'"},
		{"SELECT count(*) FROM e WHERE d >= now()", "d::timestamp with time zone >= now()"},
	}
	for _, c := range accepted {
		v, err := sql.CompileView(cat, c.query)
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		var found []string
		plan.Transform(v.Plan, func(n plan.Node) plan.Node {
			if f, ok := n.(*plan.TemporalFilter); ok {
				found = append(found, f.String())
			}
			return n
		})
		if len(found) != 1 {
			t.Fatalf("%s: %d temporal filters in\n%s", c.query, len(found), plan.Format(v.Plan))
		}
		if !strings.EqualFold(strings.ReplaceAll(found[0], "\"", ""), c.bounds) {
			t.Errorf("%s: bounds %s, want %s", c.query, found[0], c.bounds)
		}
	}
	refused := []string{
		"SELECT id, now() FROM e",
		"SELECT id FROM e WHERE ts = now()",
		"SELECT id FROM e WHERE ts > now() OR n > 1",
		"SELECT id FROM e WHERE ts > now() - interval '1 day'",
		"SELECT id FROM e WHERE ts > now() - n * interval '1 hour'",
		"SELECT id FROM e WHERE n > extract(epoch FROM now())",
		"SELECT id FROM e WHERE now() > now() - interval '1 hour'",
		"SELECT id FROM e WHERE ts > clock_timestamp()",
		"SELECT id FROM e GROUP BY id HAVING max(ts) > now() OR count(*) > 1",
	}
	for _, q := range refused {
		_, err := sql.CompileView(cat, q)
		e, ok := errcode.As(err)
		if !ok || e.Code != errcode.UnsupportedSQLConstruct {
			t.Errorf("%s: got %v, want RS-2001", q, err)
			continue
		}
		if q != "SELECT id FROM e WHERE ts > clock_timestamp()" && !strings.Contains(e.NextSteps(), "ts > now() - interval '1 hour'") {
			t.Errorf("%s: hint %q does not name the accepted form", q, e.NextSteps())
		}
	}
}
