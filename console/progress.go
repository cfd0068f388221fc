package console

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"
)

// progressPart is the "Running now" part of the overview and of a view's
// page: the rows of rockstream_catalog.progress (views being filled,
// running COPYs), each with a bar. The page reloads it from its URL every
// second (console.js), so the bars move, and it is empty (hidden) once the
// work has ended.
type progressPart struct {
	DB string
	// View, when set, keeps only the filling of that view (a view's page).
	View  string
	Lines []progressLine
	Error *sqlError
}

// progressLine is one row of rockstream_catalog.progress.
type progressLine struct {
	// Kind is "backfill" (a view being filled) or "copy".
	Kind string
	// PID is the session running a COPY (nil for a backfill).
	PID *int64
	// Relation is the view being filled or the COPY's table.
	Relation string
	// Phase is a fill's phase ("queued", "copying inputs", "reading
	// inputs", "catching up") or a COPY's direction ("copy from", "copy
	// to").
	Phase                    string
	RowsDone                 int64
	RowsTotal, RowsPerSecond *int64
	// Percent is a fill's estimate of its inputs fed (nil: unknown, as for
	// a COPY FROM STDIN, whose bar then shows no end).
	Percent *float64
}

// URL is where the page reloads the part from.
func (p progressPart) URL() string {
	query := url.Values{"db": {p.DB}}
	if p.View != "" {
		query.Set("view", p.View)
	}
	return "/console/part/progress?" + query.Encode()
}

// progress answers GET /console/part/progress?db=&view=: the part alone,
// for the page to put in place of its own.
func (c *console) progress(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), pageTimeout)
	defer cancel()
	part := progressPart{DB: database(r), View: r.FormValue("view")}
	conn, err := c.connect(ctx, r, part.DB, nil)
	if err == nil {
		err = readProgress(ctx, conn, &part)
		conn.Close(context.Background())
	}
	if err != nil {
		part.Error = describeError(err)
	}
	c.render(w, "progress", part)
}

// readProgress fills part.Lines from rockstream_catalog.progress.
func readProgress(ctx context.Context, conn *pgconn.PgConn, part *progressPart) error {
	_, rows, err := textRows(ctx, conn, "SELECT kind, pid, relation, phase, rows_done, rows_total, rows_per_second, percent FROM rockstream_catalog.progress ORDER BY kind, relation, pid")
	if err != nil {
		return err
	}
	part.Lines = nil
	for _, row := range rows {
		line := progressLine{Kind: text(row[0]), PID: optionalInteger(row[1]), Relation: text(row[2]), Phase: text(row[3]),
			RowsDone: integer(row[4]), RowsTotal: optionalInteger(row[5]), RowsPerSecond: optionalInteger(row[6])}
		if row[7] != nil {
			if pct, err := strconv.ParseFloat(*row[7], 64); err == nil {
				pct = max(0, min(100, pct))
				line.Percent = &pct
			}
		}
		if part.View != "" && (line.Kind != "backfill" || line.Relation != part.View) {
			continue
		}
		part.Lines = append(part.Lines, line)
	}
	return nil
}
