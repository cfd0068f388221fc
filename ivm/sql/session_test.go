package sql_test

import (
	"strings"
	"testing"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/dist"
	"github.com/rockstream/rockstream/ivm/sql/plan"
)

const sessionSchema = `CREATE TABLE ev (id int PRIMARY KEY, k int, ts timestamptz, d date, v int, note text)`

// TestSessionPlan: the view keeps only the columns it reads below the
// Session (its state holds them), and a spread plan exchanges the input
// by the session key.
func TestSessionPlan(t *testing.T) {
	e := newEngine()
	if _, err := e.exec(sessionSchema); err != nil {
		t.Fatal(err)
	}
	view, err := sql.CompileView(e.cat, "SELECT k, window_start, count(*) FROM SESSION(ev, ts, k, interval '10 seconds') GROUP BY k, window_start")
	if err != nil {
		t.Fatal(err)
	}
	text := plan.Format(dist.Distribute(view.Plan))
	if !strings.Contains(text, "Session time=ts key=[k] gap=00:00:10") || !strings.Contains(text, "Exchange hash(k)") {
		t.Fatalf("plan:\n%s", text)
	}
	var session *plan.Session
	var visit func(plan.Node)
	visit = func(n plan.Node) {
		if s, ok := n.(*plan.Session); ok {
			session = s
		}
		for _, in := range n.Inputs() {
			visit(in)
		}
	}
	visit(view.Plan)
	if session == nil || len(session.Input.Schema()) != 2 {
		t.Fatalf("the Session's input should be pruned to (k, ts):\n%s", text)
	}
}

// TestSessionErrors: misuse names SESSION's form; a recursive view
// refuses it.
func TestSessionErrors(t *testing.T) {
	e := newEngine()
	if _, err := e.exec(sessionSchema); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ query, state, text string }{
		{"SELECT * FROM SESSION(ev, k, interval '1 minute')", "42804", "must be a timestamp or timestamptz"},
		{"SELECT * FROM SESSION(ev, d, interval '1 minute')", "42804", "must be a timestamp or timestamptz"},
		{"SELECT * FROM SESSION(ev, ts, k, interval '1 day')", "22023", "hours, minutes and seconds"},
		{"SELECT * FROM SESSION(ev, ts, k, interval '-1 second')", "22023", "positive"},
		{"SELECT * FROM SESSION(ev, ts, k, v * interval '1 second')", "", "column \"v\" does not exist"},
		{"SELECT * FROM SESSION(ev, ts)", "42883", "SESSION(relation, time_column"},
		{"SELECT * FROM SESSION(nope, ts, interval '1 second')", "42P01", "relation \"nope\" does not exist"},
		{"SELECT * FROM SESSION('ev', ts, interval '1 second')", "42601", "must name a table"},
		{"SELECT * FROM SESSION(ev, ts, k + 1, interval '1 second')", "42601", "key argument of SESSION must be a column"},
		{"SELECT * FROM SESSION(ev, nope, interval '1 second')", "42703", "column \"nope\" does not exist"},
	} {
		_, err := sql.CompileView(e.cat, c.query)
		ce, ok := errcode.As(err)
		if !ok || !strings.Contains(ce.Message, c.text) || (c.state != "" && ce.State() != c.state) {
			t.Errorf("%s: want %s %q, got %v", c.query, c.state, c.text, err)
		}
	}
	_, err := sql.CompileView(e.cat, "WITH RECURSIVE r(id, s) AS (SELECT id, ts FROM ev UNION SELECT x.id, x.window_start FROM SESSION(r, s, interval '1 second') AS x) SELECT * FROM r")
	if ce, ok := errcode.As(err); !ok || ce.Code != errcode.UnsupportedSQLConstruct {
		t.Errorf("recursive: want RS-2001, got %v", err)
	}
}
