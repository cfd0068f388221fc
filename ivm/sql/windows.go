package sql

import (
	"fmt"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/bind"
	"github.com/rockstream/rockstream/ivm/sql/incr"
	"github.com/rockstream/rockstream/ivm/sql/plan"
)

// WindowsNeverClose is the value of a materialized view's windows option
// that accepts streaming windows no watermark closes: WITH (windows =
// 'never_close').
const WindowsNeverClose = "never_close"

// OpenWindow is a streaming window function of a view whose windows no
// watermark closes: its state keeps every window.
type OpenWindow struct {
	bind.TimeWindow
	// Why says why no watermark closes its windows.
	Why string
}

// openWindows are the windows of q no watermark closes. TUMBLE and HOP
// are date_bin forms (bind/tumble.go), whose aggregates and joins forget
// closed windows when the time column is bounded by a table's watermark
// (incr.EventTimeBounded: the table's watermark column, through filters,
// projections and WITH queries). SESSION keeps every row of its input
// whether or not there is a watermark: its sessions never close.
func openWindows(q *bind.BoundQuery) []OpenWindow {
	var out []OpenWindow
	for _, w := range q.TimeWindows {
		col := w.Input.Schema()[w.Time].Name
		switch {
		case w.Func == "SESSION":
			out = append(out, OpenWindow{w, "SESSION keeps every row of its input, with or without a watermark"})
		case incr.EventTimeBounded(w.Input, w.Time):
		default:
			why := fmt.Sprintf("%q is not the watermark column of a table (read directly or through filters, projections and WITH queries)", col)
			if s, ok := w.Input.(*plan.Scan); ok {
				if wm := s.Relation.Watermark; wm == nil {
					why = fmt.Sprintf("%q has no watermark", w.Relation)
				} else if wm.Column < len(s.Relation.Columns) {
					why = fmt.Sprintf("%q has a watermark on %q, not on %q", w.Relation, s.Relation.Columns[wm.Column].Name, col)
				}
			}
			out = append(out, OpenWindow{w, why})
		}
	}
	return out
}

// checkWindows refuses, at CREATE MATERIALIZED VIEW, a view with windows
// no watermark closes (RS-1005) unless it was created WITH (windows =
// 'never_close'): the view must not silently keep every window forever.
// Ad-hoc queries keep no state and are not checked, nor are views
// grouping by date_bin(...) themselves (standard SQL, no window
// function).
func checkWindows(v *View) error {
	if v.WindowsNeverClose || len(v.OpenWindows) == 0 {
		return nil
	}
	w := v.OpenWindows[0]
	if w.Func == "SESSION" {
		e := errcode.New(errcode.WatermarkRequired, "materialized view %q uses SESSION over %q, whose windows never close", v.Name, w.Relation).
			WithDetail("%s, so the view's state would grow with the input.", w.Why)
		e.Hint = fmt.Sprintf("Create the view WITH (windows = '%s') to accept windows that never close.", WindowsNeverClose)
		return e
	}
	col := w.Input.Schema()[w.Time].Name
	return errcode.New(errcode.WatermarkRequired, "materialized view %q uses %s over %q, whose time column %q has no watermark", v.Name, w.Func, w.Relation, col).
		WithDetail("%s: the windows of %s would never close, so the view's state would grow with the input.", w.Why, w.Func)
}
