package sql_test

import (
	"strings"
	"testing"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/plan"
)

// TestTimeWindowErrors: misuse of TUMBLE and HOP names their form, and a
// HOP whose size is not a multiple of its slide is refused naming both.
func TestTimeWindowErrors(t *testing.T) {
	e := newEngine()
	if _, err := e.exec(sessionSchema); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ query, state, text string }{
		{"SELECT * FROM TUMBLE(ev, k, interval '1 minute')", "42804", "must be a timestamp or timestamptz"},
		{"SELECT * FROM HOP(ev, d, interval '1 minute', interval '2 minutes')", "42804", "must be a timestamp or timestamptz"},
		{"SELECT * FROM TUMBLE(ev, ts, interval '1 day')", "22023", "size of TUMBLE must be a positive constant interval of hours, minutes and seconds"},
		{"SELECT * FROM HOP(ev, ts, interval '1 month', interval '2 months')", "22023", "slide of HOP"},
		{"SELECT * FROM TUMBLE(ev, ts, interval '-1 second')", "22023", "positive"},
		{"SELECT * FROM TUMBLE(ev, ts, v * interval '1 second')", "", "column \"v\" does not exist"},
		{"SELECT * FROM HOP(ev, ts, interval '2 minutes', interval '5 minutes')", "22023", "size of HOP (00:05:00) must be a multiple of its slide (00:02:00)"},
		{"SELECT * FROM HOP(ev, ts, interval '1 second', interval '2 hours')", "22023", "7200 windows"},
		{"SELECT * FROM TUMBLE(ev, ts)", "42883", "TUMBLE(relation, time_column, size)"},
		{"SELECT * FROM HOP(ev, ts, interval '1 minute')", "42883", "HOP(relation, time_column, slide, size)"},
		{"SELECT * FROM TUMBLE(nope, ts, interval '1 second')", "42P01", "relation \"nope\" does not exist"},
		{"SELECT * FROM TUMBLE('ev', ts, interval '1 second')", "42601", "must name a table"},
		{"SELECT * FROM TUMBLE(ev, ts + interval '1 second', interval '1 second')", "42601", "time argument of TUMBLE must be a column"},
		{"SELECT * FROM HOP(ev, nope, interval '1 second', interval '2 seconds')", "42703", "column \"nope\" does not exist"},
	} {
		_, err := sql.CompileView(e.cat, c.query)
		ce, ok := errcode.As(err)
		if !ok || !strings.Contains(ce.Message, c.text) || (c.state != "" && ce.State() != c.state) {
			t.Errorf("%s: want %s %q, got %v", c.query, c.state, c.text, err)
		}
	}
}

// TestTimeWindowPlan: TUMBLE is a date_bin projection and HOP a join with
// its window offsets; an alias renames the columns.
func TestTimeWindowPlan(t *testing.T) {
	e := newEngine()
	if _, err := e.exec(sessionSchema); err != nil {
		t.Fatal(err)
	}
	view, err := sql.CompileView(e.cat, "SELECT x.k, x.ws, count(*) FROM HOP(ev, ts, interval '10 seconds', interval '30 seconds') AS x(i, k, t, d, v, n, ws) GROUP BY 1, 2")
	if err != nil {
		t.Fatal(err)
	}
	if text := plan.Format(view.Plan); !strings.Contains(text, "date_bin") || !strings.Contains(text, "Values") {
		t.Fatalf("plan:\n%s", text)
	}
}

// TestTimeWindowWatermarkRequired: CREATE MATERIALIZED VIEW over TUMBLE,
// HOP or SESSION windows no watermark closes fails with RS-1005 unless
// WITH (windows = 'never_close'); windows over a table's watermark column
// (directly or through a WITH query) pass; queries are not checked.
func TestTimeWindowWatermarkRequired(t *testing.T) {
	e := newEngine()
	if _, err := e.exec(sessionSchema + `; CREATE TABLE bids (a int, ts timestamptz, other timestamptz) WITH (watermark = 'ts - interval ''1 second''')`); err != nil {
		t.Fatal(err)
	}
	const tumble = "interval '1 minute')"
	for _, c := range []struct {
		query string
		ok    bool
	}{
		{"SELECT window_start, count(*) FROM TUMBLE(ev, ts, " + tumble + " GROUP BY 1", false},
		{"SELECT window_start, count(*) FROM HOP(ev, ts, interval '1 minute', interval '2 minutes') GROUP BY 1", false},
		{"SELECT window_start, count(*) FROM SESSION(ev, ts, " + tumble + " GROUP BY 1", false},
		{"SELECT window_start, count(*) FROM SESSION(bids, ts, " + tumble + " GROUP BY 1", false},
		{"SELECT window_start, count(*) FROM TUMBLE(bids, other, " + tumble + " GROUP BY 1", false},
		{"WITH e AS (SELECT other AS ts FROM bids) SELECT window_start, count(*) FROM TUMBLE(e, ts, " + tumble + " GROUP BY 1", false},
		{"SELECT window_start, count(*) FROM TUMBLE(bids, ts, " + tumble + " GROUP BY 1", true},
		{"WITH e AS (SELECT a, ts FROM bids WHERE a > 0) SELECT window_start, count(*) FROM HOP(e, ts, interval '1 minute', interval '2 minutes') GROUP BY 1", true},
		{"SELECT date_bin('1 minute', ts, '2024-01-01'), count(*) FROM ev GROUP BY 1", true},
	} {
		_, err := e.exec("CREATE MATERIALIZED VIEW v AS " + c.query)
		if c.ok != (err == nil) {
			t.Errorf("%s: accepted %v, want %v (%v)", c.query, err == nil, c.ok, err)
		}
		if ce, isCoded := errcode.As(err); err != nil && (!isCoded || ce.Code != errcode.WatermarkRequired || ce.State() != "55000") {
			t.Errorf("%s: %v, want RS-1005 (55000)", c.query, err)
		}
		if _, err := e.exec("CREATE MATERIALIZED VIEW v WITH (windows = 'never_close') AS " + c.query); err != nil {
			t.Errorf("%s WITH (windows = 'never_close'): %v", c.query, err)
		}
		if _, err := e.exec(c.query); err != nil {
			t.Errorf("%s ad hoc: %v", c.query, err)
		}
	}
}
