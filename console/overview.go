package console

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// tablesCountedMax bounds the count(*) queries of one overview page: the
// catalog keeps no row count for tables, so each is a scan; past this many
// tables the rest show "not counted" rather than making the page slow.
const tablesCountedMax = 100

// overviewPage is what / shows.
type overviewPage struct {
	DB      string
	Tables  []tableLine
	Views   []viewLine
	Sources []sourceLine
	// Progress is the long work running now (views being filled, COPYs).
	Progress progressPart
	// Error is set when the catalog could not be read (the page then
	// shows it above the SQL box, which still works).
	Error *sqlError
}

// tableLine is one row of rockstream_catalog.tables (tables and the
// relations sources write), with its row count.
type tableLine struct {
	Name, Kind, PrimaryKey string
	Columns                int64
	// Rows is the count(*) of the table, or Uncounted says why not.
	Rows       int64
	Uncounted  string
	InsertOnly bool
}

// viewLine is one row of rockstream_catalog.views: the data SHOW VIEW
// STATUS shows (lag_epochs is the freshness lag: epochs committed but not
// yet reflected in the views).
type viewLine struct {
	Name, Kind, Definition, State, Error string
	Rows, StateRows, StateBytes          int64
	Frontier, LagEpochs                  int64
	BehindInputs                         bool
	// FreshnessTarget and FreshnessLag are intervals in PostgreSQL's text
	// form ("" when the view has no target, or is not maintained);
	// FreshnessMet is "t", "f" or "" (no target); FreshnessReason says
	// why a missed target is missed (backfilling, error, overloaded, …).
	FreshnessTarget, FreshnessLag, FreshnessMet, FreshnessReason string
}

// sourceLine is one row of rockstream_catalog.sources.
type sourceLine struct {
	Name, Kind, Definition, State, Error string
	// Lag is the source's freshness lag ("12 KiB of WAL", "3 records"),
	// "" when it reports none.
	Lag          string
	Rows, Errors *int64
}

func (c *console) overview(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), pageTimeout)
	defer cancel()
	page := overviewPage{DB: database(r)}
	page.Progress.DB = page.DB
	if err := c.readCatalog(ctx, r, &page); err != nil {
		page.Error = describeError(err)
	}
	c.render(w, "overview.html", page)
}

// readCatalog fills page from rockstream_catalog in one session.
func (c *console) readCatalog(ctx context.Context, r *http.Request, page *overviewPage) error {
	conn, err := c.connect(ctx, r, page.DB, nil)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if err := readProgress(ctx, conn, &page.Progress); err != nil {
		page.Progress.Error = describeError(err)
	}
	views, err := readViews(ctx, conn)
	if err != nil {
		return err
	}
	page.Views = views
	_, rows, err := textRows(ctx, conn, "SELECT name, kind, columns, primary_key, insert_only FROM rockstream_catalog.tables ORDER BY name")
	if err != nil {
		return err
	}
	for i, row := range rows {
		t := tableLine{Name: text(row[0]), Kind: text(row[1]), Columns: integer(row[2]), PrimaryKey: text(row[3]), InsertOnly: text(row[4]) == "t"}
		if i >= tablesCountedMax {
			t.Uncounted = "not counted"
		} else if _, counted, err := textRows(ctx, conn, "SELECT count(*) FROM "+quoteIdent(t.Name)); err != nil {
			t.Uncounted = describeError(err).Message
		} else {
			t.Rows = integer(counted[0][0])
		}
		page.Tables = append(page.Tables, t)
	}
	_, rows, err = textRows(ctx, conn, "SELECT name, kind, definition, state, error, lag_bytes, lag_records, rows, errors FROM rockstream_catalog.sources ORDER BY name")
	if err != nil {
		return err
	}
	for _, row := range rows {
		s := sourceLine{Name: text(row[0]), Kind: text(row[1]), Definition: text(row[2]), State: text(row[3]), Error: text(row[4]),
			Rows: optionalInteger(row[7]), Errors: optionalInteger(row[8])}
		if n := optionalInteger(row[5]); n != nil {
			s.Lag = formatBytes(*n) + " of WAL"
		} else if n := optionalInteger(row[6]); n != nil {
			s.Lag = strconv.FormatInt(*n, 10) + " records"
		}
		// A source without counters of its own (generated rows) writes
		// the relation of its name: show that relation's rows.
		if s.Rows == nil {
			for _, t := range page.Tables {
				if t.Name == s.Name && t.Kind == "source" && t.Uncounted == "" {
					s.Rows = &t.Rows
				}
			}
		}
		page.Sources = append(page.Sources, s)
	}
	return nil
}

// readViews reads every view's status line.
func readViews(ctx context.Context, conn *pgconn.PgConn) ([]viewLine, error) {
	_, rows, err := textRows(ctx, conn, "SELECT name, kind, definition, state, rows, state_rows, state_bytes, frontier, lag_epochs, error, behind_inputs, freshness_target, freshness_lag, freshness_met, freshness_reason FROM rockstream_catalog.views ORDER BY name")
	if err != nil {
		return nil, err
	}
	var out []viewLine
	for _, row := range rows {
		out = append(out, viewLine{Name: text(row[0]), Kind: text(row[1]), Definition: text(row[2]), State: text(row[3]),
			Rows: integer(row[4]), StateRows: integer(row[5]), StateBytes: integer(row[6]),
			Frontier: integer(row[7]), LagEpochs: integer(row[8]), Error: text(row[9]), BehindInputs: text(row[10]) == "t",
			FreshnessTarget: text(row[11]), FreshnessLag: text(row[12]), FreshnessMet: text(row[13]), FreshnessReason: text(row[14])})
	}
	return out, nil
}

// textRows runs one statement and returns its columns and rows in text
// format (nil for NULL).
func textRows(ctx context.Context, conn *pgconn.PgConn, sql string) ([]string, [][]*string, error) {
	results, err := conn.Exec(ctx, sql).ReadAll()
	if err != nil {
		return nil, nil, err
	}
	var columns []string
	var rows [][]*string
	for _, res := range results {
		if res.Err != nil {
			return nil, nil, res.Err
		}
		columns = columns[:0]
		for _, f := range res.FieldDescriptions {
			columns = append(columns, f.Name)
		}
		rows = rows[:0]
		for _, values := range res.Rows {
			row := make([]*string, len(values))
			for i, v := range values {
				if v != nil {
					s := string(v)
					row[i] = &s
				}
			}
			rows = append(rows, row)
		}
	}
	return columns, rows, nil
}

func text(v *string) string {
	if v == nil {
		return ""
	}
	return *v
}

func integer(v *string) int64 {
	if n := optionalInteger(v); n != nil {
		return *n
	}
	return 0
}

func optionalInteger(v *string) *int64 {
	if v == nil {
		return nil
	}
	n, err := strconv.ParseInt(*v, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

// quoteIdent quotes a name as a SQL identifier.
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}
