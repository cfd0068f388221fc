package console

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/errcode"
)

// dataflowPart is the "Dataflow" part of a view's page: the operators of
// the circuit maintaining the view, each with its rows in and out, steps,
// time and stored state, as EXPLAIN ANALYZE INCREMENTAL reports them (for
// a view spread over several shards, its parts added up by the engine).
// The page reloads it from its URL every two seconds (console.js), so the
// numbers stay current.
type dataflowPart struct {
	DB, View string
	// Summary is what the statement says of the view as a whole ("shard
	// 1, frontier epoch 7; 2 rows, state 2 rows, 66 bytes", or that it is
	// backfilling or failed).
	Summary string
	Root    *operator
	// Notes are the statement's lines under the tree (what the counts
	// are over).
	Notes []string
	Error *sqlError
}

// operatorStats are one operator's numbers in EXPLAIN ANALYZE
// INCREMENTAL.
type operatorStats struct {
	RowsIn, RowsOut, Steps int64
	// Time is the time spent in the operator ("0.312 ms"); Fused says it
	// runs inside its consumer, whose time includes its own.
	Time  string
	Fused bool
	// HasState says the operator stores rows (StateRows of StateBytes).
	HasState              bool
	StateRows, StateBytes int64
	// Recent is the counts over the last steps, when they differ from
	// the lifetime ones ("last 16 steps: rows in 16  out 32  time …").
	Recent string
	// ShownAbove marks an operator read by several others, drawn in full
	// where it first appears.
	ShownAbove bool
}

// URL is where the page reloads the part from.
func (p dataflowPart) URL() string {
	return "/console/part/dataflow?" + url.Values{"db": {p.DB}, "view": {p.View}}.Encode()
}

// dataflow answers GET /console/part/dataflow?db=&view=: the part alone,
// for the page to put in place of its own.
func (c *console) dataflow(w http.ResponseWriter, r *http.Request) {
	part := dataflowPart{DB: database(r), View: r.FormValue("view")}
	if part.View == "" {
		part.Error = describeError(errcode.New(errcode.ConsoleBadRequest, "no view named: use /console/part/dataflow?view=<materialized view>"))
		w.WriteHeader(http.StatusBadRequest)
		c.render(w, "dataflow", part)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), pageTimeout)
	defer cancel()
	conn, err := c.connect(ctx, r, part.DB, nil)
	if err == nil {
		err = readDataflow(ctx, conn, &part)
		conn.Close(context.Background())
	}
	if err != nil {
		part.Error = describeError(err)
	}
	c.render(w, "dataflow", part)
}

// readDataflow fills part from EXPLAIN ANALYZE INCREMENTAL: the engine
// counts, the console only reads its text back.
func readDataflow(ctx context.Context, conn *pgconn.PgConn, part *dataflowPart) error {
	_, rows, err := textRows(ctx, conn, "EXPLAIN ANALYZE INCREMENTAL "+quoteIdent(part.View))
	if err != nil {
		return err
	}
	lines := make([]string, 0, len(rows))
	for _, row := range rows {
		lines = append(lines, text(row[0]))
	}
	part.Summary, part.Root, part.Notes = parseAnalyzed(lines)
	return nil
}

// parseAnalyzed reads the text of EXPLAIN ANALYZE INCREMENTAL:
//
//	VIEW  totals  (shards 1, 2, frontier epoch 2; 2 rows, state 2 rows, 72 bytes)
//	 └─ #3 aggregate  rows in 1000  out 2  steps 2  time 0.312 ms  state 2 rows 72 bytes
//	     └─ #2 project  rows in 1000  out 1000  steps 2  time 0.014 ms
//	         └─ #1 source orders  rows in 1000  out 1000  steps 2  time 0.006 ms
//	Counts are since the server started or the view was last rebuilt ...
//
// into the summary in the first line's parentheses, the tree of operators
// (the first line its root, named VIEW) and the notes under the tree. An
// operator line whose numbers it cannot read keeps them as its detail.
func parseAnalyzed(lines []string) (summary string, root *operator, notes []string) {
	var tree []string
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " │├└─")
		switch {
		case i == 0:
			tree = append(tree, line)
		case trimmed != line || strings.HasPrefix(trimmed, "#"):
			tree = append(tree, line)
		case strings.TrimSpace(line) != "":
			notes = append(notes, strings.TrimSpace(line))
		}
	}
	root = parseDataflow(tree)
	if root == nil {
		return "", nil, notes
	}
	if open := strings.Index(root.Detail, "  ("); open >= 0 && strings.HasSuffix(root.Detail, ")") {
		summary = root.Detail[open+3 : len(root.Detail)-1]
		root.Detail = strings.TrimSpace(root.Detail[:open])
	}
	var walk func(o *operator)
	walk = func(o *operator) {
		for _, in := range o.Inputs {
			readOperatorStats(in)
			walk(in)
		}
	}
	walk(root)
	return summary, root, notes
}

var (
	// statsPattern is an operator's numbers as the engine prints them.
	statsPattern = regexp.MustCompile(`^rows in (\d+)  out (\d+)  steps (\d+)  (?:time in its consumer \(fused\)|time (\S+ ms))(?:  state (\d+) rows (\d+) bytes)?(?:  \((last .*)\))?$`)
	// numberedPattern is an operator's number and label ("#3 source t").
	numberedPattern = regexp.MustCompile(`^#(\d+) (.+)$`)
)

// readOperatorStats splits an operator line's number from its name and
// reads its numbers from its detail.
func readOperatorStats(o *operator) {
	m := numberedPattern.FindStringSubmatch(o.Name)
	if m == nil {
		return
	}
	o.Number, o.Name = m[1], m[2]
	stats := &operatorStats{}
	if o.Detail == "(shown above)" {
		stats.ShownAbove = true
		o.Stats, o.Detail = stats, ""
		return
	}
	s := statsPattern.FindStringSubmatch(o.Detail)
	if s == nil {
		return
	}
	stats.RowsIn, stats.RowsOut, stats.Steps = parseCount(s[1]), parseCount(s[2]), parseCount(s[3])
	stats.Time, stats.Fused = s[4], s[4] == ""
	if s[5] != "" {
		stats.HasState, stats.StateRows, stats.StateBytes = true, parseCount(s[5]), parseCount(s[6])
	}
	stats.Recent = s[7]
	o.Stats, o.Detail = stats, ""
}

func parseCount(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
