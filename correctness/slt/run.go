package slt

import (
	"crypto/md5"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/correctness/harness"
)

// Mode is how query records run.
type Mode string

const (
	AdHoc Mode = "adhoc"
	IVM   Mode = "ivm"
)

// Outcome classes.
const (
	Pass          = "pass"
	WrongResult   = "wrong-result"
	QueryError    = "error"          // failed where a result was expected
	ErrorMismatch = "error-mismatch" // succeeded where an error was expected
	Unsupported   = "unsupported"    // RS-2001 / 0A000
	Crash         = "crash"          // connection lost or timeout
	Skipped       = "skip"
	// WrongAfterStmt is a wrong result in a file where an earlier
	// `statement ok` failed (the data differs from the file's intent).
	WrongAfterStmt = "wrong-result-after-failed-statement"
	// ErrorAfterStmt is a query error in a file where an earlier
	// `statement ok` failed (typically the relation it reads is missing).
	ErrorAfterStmt = "error-after-failed-statement"
)

// QueryResult is one query record's outcome.
type QueryResult struct {
	Line    int
	Class   string
	Detail  string
	Backfil bool // IVM: the view was created at the query (backfill), not before the data
}

// StmtResult is one failed or adapted statement.
type StmtResult struct {
	Line   int
	Class  string
	Detail string
}

// FileResult collects a file's outcomes.
type FileResult struct {
	Queries    []QueryResult
	Statements int
	StmtFailed []StmtResult
	Adapted    int // statements rewritten or skipped by the dialect adaptation
	Halted     bool
	Aborted    string // the run stopped early (crash)
}

// Counts returns pass/fail/skip counts over the queries.
func (f *FileResult) Counts() (pass, fail, skip int) {
	for _, q := range f.Queries {
		switch q.Class {
		case Pass:
			pass++
		case Skipped:
			skip++
		default:
			fail++
		}
	}
	return
}

// Options tune a run.
type Options struct {
	Mode Mode
	// Select, when set, picks which query records run (by ordinal among the
	// file's query records); the others are skipped with reason "sample".
	Select func(ordinal int) bool
	// MaxViews bounds the views kept alive at once in IVM mode; queries
	// beyond it are created at the query itself (backfill).
	MaxViews int
}

var (
	//lint:immutable a compiled pattern
	createTableRe = regexp.MustCompile(`(?is)^\s*create\s+table\b`)
	//lint:immutable a compiled pattern
	primaryKeyRe = regexp.MustCompile(`(?i)primary\s+key`)
	//lint:immutable a compiled pattern
	indexDDLRe = regexp.MustCompile(`(?is)^\s*(create\s+(unique\s+)?index|drop\s+index|reindex)\b`)
	//lint:immutable a compiled pattern
	flushRe = regexp.MustCompile(`(?is)^\s*flush\s*;?\s*$`)
	//lint:immutable a compiled pattern
	ddlRe = regexp.MustCompile(`(?is)^\s*(create|drop|alter)\b`)
	//lint:immutable a compiled pattern
	selectRe = regexp.MustCompile(`(?is)^[\s(]*(select|with|values|table)\b`)
	//lint:immutable a compiled pattern
	wsRe = regexp.MustCompile(`\s+`)
)

// Adapt rewrites a statement for RockStream's dialect: a table without a
// primary key becomes insert-only (RockStream requires a key for tables
// that take UPDATE/DELETE), index DDL and flush are no-ops. ok=false means
// the statement is not sent.
func Adapt(sql string) (string, bool, string) {
	if flushRe.MatchString(sql) {
		return "", false, "flush (views are maintained synchronously)"
	}
	if indexDDLRe.MatchString(sql) {
		return "", false, "index DDL (no effect on results)"
	}
	if createTableRe.MatchString(sql) && !primaryKeyRe.MatchString(sql) && !strings.Contains(strings.ToLower(sql), " as ") {
		s := strings.TrimRight(strings.TrimSpace(sql), ";")
		return s + " WITH (insert_only = true)", true, "table without PRIMARY KEY made insert-only"
	}
	return sql, true, ""
}

func classifyErr(err error, conn *harness.Conn) (string, string) {
	if !conn.Alive() || strings.Contains(err.Error(), "timeout") {
		return Crash, err.Error()
	}
	code := harness.SQLState(err)
	text := harness.ErrorText(err)
	if code == "0A000" {
		return Unsupported, text
	}
	if code == "" {
		return Crash, text
	}
	return QueryError, text
}

// Run executes one parsed file on a fresh RockStream session.
func Run(conn *harness.Conn, recs []Record, d Dialect, opt Options) *FileResult {
	if opt.MaxViews == 0 {
		opt.MaxViews = 400
	}
	r := &runner{conn: conn, d: d, opt: opt, res: &FileResult{}, threshold: 0, labels: map[string]string{}}
	if d == Classic {
		r.threshold = 8 // the reference harness default
	}
	r.run(recs)
	return r.res
}

type runner struct {
	conn      *harness.Conn
	d         Dialect
	opt       Options
	res       *FileResult
	threshold int
	labels    map[string]string
	views     map[int]*liveView // record index → view
	viewSeq   int
	stmtFail  bool // a `statement ok` failed earlier in the file
}

type liveView struct {
	name string
	err  error // creation error
}

func (r *runner) run(recs []Record) {
	// Decide which queries run.
	sel := make([]bool, len(recs))
	ord := 0
	for i, rec := range recs {
		if rec.Kind == KQuery {
			sel[i] = rec.Skip == "" && (r.opt.Select == nil || r.opt.Select(ord))
			ord++
		}
	}
	r.views = map[int]*liveView{}
	if r.opt.Mode == IVM {
		r.openSegment(recs, 0, sel)
	}
	for i, rec := range recs {
		if rec.Skip != "" {
			if rec.Kind == KQuery {
				r.res.Queries = append(r.res.Queries, QueryResult{Line: rec.Line, Class: Skipped, Detail: rec.Skip})
			}
			continue
		}
		switch rec.Kind {
		case KHalt:
			r.res.Halted = true
			// Remaining queries are skipped.
			for _, rest := range recs[i+1:] {
				if rest.Kind == KQuery {
					r.res.Queries = append(r.res.Queries, QueryResult{Line: rest.Line, Class: Skipped, Detail: "after halt"})
				}
			}
			r.dropViews()
			return
		case KHashThreshold:
			r.threshold = rec.Threshold
		case KUnsupported:
			r.res.StmtFailed = append(r.res.StmtFailed, StmtResult{Line: rec.Line, Class: Skipped, Detail: "directive not run: " + rec.Directive})
		case KStatement:
			isDDL := ddlRe.MatchString(rec.SQL)
			if isDDL && r.opt.Mode == IVM {
				r.dropViews()
			}
			r.statement(rec)
			if isDDL && r.opt.Mode == IVM {
				r.openSegment(recs, i+1, sel)
			}
		case KQuery:
			if !sel[i] {
				r.res.Queries = append(r.res.Queries, QueryResult{Line: rec.Line, Class: Skipped, Detail: "sample"})
				continue
			}
			q := r.query(i, rec)
			r.res.Queries = append(r.res.Queries, q)
		}
		if r.res.Aborted != "" {
			for _, rest := range recs[i+1:] {
				if rest.Kind == KQuery {
					r.res.Queries = append(r.res.Queries, QueryResult{Line: rest.Line, Class: Skipped, Detail: "after crash"})
				}
			}
			return
		}
	}
	r.dropViews()
}

func (r *runner) statement(rec Record) {
	r.res.Statements++
	sql, send, why := Adapt(rec.SQL)
	if why != "" {
		r.res.Adapted++
	}
	if !send {
		return
	}
	_, err := r.conn.Exec(sql)
	if !r.conn.Alive() {
		r.res.Aborted = fmt.Sprintf("line %d: connection lost: %v", rec.Line, err)
		r.res.StmtFailed = append(r.res.StmtFailed, StmtResult{Line: rec.Line, Class: Crash, Detail: r.res.Aborted})
		return
	}
	switch {
	case err != nil && !rec.ExpectErr:
		r.stmtFail = true
		cls, text := classifyErr(err, r.conn)
		r.res.StmtFailed = append(r.res.StmtFailed, StmtResult{Line: rec.Line, Class: cls, Detail: text + " :: " + oneLine(rec.SQL)})
	case err == nil && rec.ExpectErr:
		r.res.StmtFailed = append(r.res.StmtFailed, StmtResult{Line: rec.Line, Class: ErrorMismatch, Detail: "statement succeeded, expected an error :: " + oneLine(rec.SQL)})
	}
}

func oneLine(s string) string {
	s = wsRe.ReplaceAllString(s, " ")
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}

func stripSemi(sql string) string { return strings.TrimRight(strings.TrimSpace(sql), "; \n\t") }

// openSegment creates the views of the queries from record from up to the
// next DDL statement, before the segment's data statements run.
func (r *runner) openSegment(recs []Record, from int, sel []bool) {
	for j := from; j < len(recs); j++ {
		rec := recs[j]
		if rec.Kind == KStatement && rec.Skip == "" && ddlRe.MatchString(rec.SQL) {
			return
		}
		if rec.Kind == KHalt && rec.Skip == "" {
			return
		}
		if rec.Kind != KQuery || !sel[j] || len(r.views) >= r.opt.MaxViews || !selectRe.MatchString(rec.SQL) {
			continue
		}
		v := r.createView(rec)
		if v.err != nil && harness.SQLState(v.err) != "0A000" {
			// e.g. the query reads a relation created later: retry at the query.
			if _, err := r.conn.Exec("DROP MATERIALIZED VIEW IF EXISTS " + v.name); err != nil {
				_ = err
			}
			continue
		}
		r.views[j] = v
	}
}

func (r *runner) createView(rec Record) *liveView {
	r.viewSeq++
	name := fmt.Sprintf("slt_v_%d", r.viewSeq)
	q := stripSemi(rec.SQL)
	ncol := len(rec.Types)
	if r.d == RS || ncol == 0 {
		if res, err := r.conn.Exec(q); err == nil && len(res.Columns) > 0 {
			ncol = len(res.Columns)
		}
	}
	cols := make([]string, ncol)
	for i := range cols {
		cols[i] = fmt.Sprintf("c%d", i+1)
	}
	sql := fmt.Sprintf("CREATE MATERIALIZED VIEW %s (%s) AS %s", name, strings.Join(cols, ", "), q)
	if ncol == 0 {
		sql = fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", name, q)
	}
	_, err := r.conn.Exec(sql)
	return &liveView{name: name, err: err}
}

func (r *runner) dropViews() {
	keys := make([]int, 0, len(r.views))
	//lint:maprange keys are sorted below
	for k := range r.views {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	for _, k := range keys {
		v := r.views[k]
		if v.err == nil {
			_, _ = r.conn.Exec("DROP MATERIALIZED VIEW IF EXISTS " + v.name)
		}
	}
	r.views = map[int]*liveView{}
}

func (r *runner) query(idx int, rec Record) QueryResult {
	qr := QueryResult{Line: rec.Line}
	var res *harness.Result
	var err error
	if r.opt.Mode == AdHoc || !selectRe.MatchString(rec.SQL) {
		// Data statements written as query records run as they are.
		res, err = r.conn.Exec(rec.SQL)
	} else {
		v, ok := r.views[idx]
		if !ok {
			qr.Backfil = true
			v = r.createView(rec)
			defer func() {
				if v.err == nil {
					_, _ = r.conn.Exec("DROP MATERIALIZED VIEW IF EXISTS " + v.name)
				}
			}()
		} else {
			delete(r.views, idx)
			defer func() {
				if v.err == nil {
					_, _ = r.conn.Exec("DROP MATERIALIZED VIEW IF EXISTS " + v.name)
				}
			}()
		}
		if v.err != nil {
			err = v.err
		} else {
			res, err = r.conn.Exec("SELECT * FROM " + v.name)
			if err == nil && rec.Sort == "nosort" && len(res.Rows) > 1 {
				// Views have no order: take the order of the ad-hoc query
				// when both hold the same rows.
				adhoc, aerr := r.conn.Exec(rec.SQL)
				if aerr == nil && equalLines(harness.SortedLines(adhoc.Rows), harness.SortedLines(res.Rows)) {
					res = adhoc
				} else if aerr == nil {
					qr.Class = WrongResult
					if r.stmtFail {
						qr.Class = WrongAfterStmt
					}
					qr.Detail = fmt.Sprintf("view rows differ from the ad-hoc query: view %q ad hoc %q", trunc(harness.SortedLines(res.Rows)), trunc(harness.SortedLines(adhoc.Rows)))
					return qr
				}
			}
		}
	}
	if !r.conn.Alive() {
		r.res.Aborted = fmt.Sprintf("line %d: connection lost: %v", rec.Line, err)
		qr.Class = Crash
		qr.Detail = r.res.Aborted
		return qr
	}
	if rec.ExpectErr {
		if err != nil {
			qr.Class = Pass
		} else {
			qr.Class = ErrorMismatch
			qr.Detail = "query succeeded, expected an error"
		}
		return qr
	}
	if err != nil {
		qr.Class, qr.Detail = classifyErr(err, r.conn)
		if qr.Class == QueryError && r.stmtFail {
			qr.Class = ErrorAfterStmt
		}
		qr.Detail += " :: " + oneLine(rec.SQL)
		return qr
	}
	ok, detail := r.compare(rec, res)
	if ok {
		qr.Class = Pass
	} else {
		qr.Class = WrongResult
		if r.stmtFail {
			qr.Class = WrongAfterStmt
		}
		qr.Detail = detail + " :: " + oneLine(rec.SQL)
	}
	return qr
}

func trunc(l []string) []string {
	if len(l) > 8 {
		return append(l[:8:8], "...")
	}
	return l
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// renderClassic renders one value as the SQLite reference harness does.
func renderClassic(v *string, typ byte) string {
	if v == nil {
		return "NULL"
	}
	s := *v
	switch typ {
	case 'I':
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			return s
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return strconv.FormatInt(int64(f), 10)
		}
		if s == "t" {
			return "1"
		}
		if s == "f" {
			return "0"
		}
	case 'R':
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return fmt.Sprintf("%.3f", f)
		}
	}
	if s == "" {
		return "(empty)"
	}
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '@'
		}
	}
	return string(b)
}

func renderRS(v *string) string {
	if v == nil {
		return "NULL"
	}
	if *v == "" {
		return "(empty)"
	}
	return *v
}

//lint:immutable a compiled pattern
var hashLineRe = regexp.MustCompile(`^(\d+) values hashing to ([0-9a-f]{32})$`)

func (r *runner) compare(rec Record, res *harness.Result) (bool, string) {
	if r.d == RS {
		rows := make([]string, len(res.Rows))
		var vals []string
		for i, row := range res.Rows {
			parts := make([]string, len(row))
			for j, v := range row {
				parts[j] = renderRS(v)
			}
			vals = append(vals, parts...)
			rows[i] = wsRe.ReplaceAllString(strings.TrimSpace(strings.Join(parts, " ")), " ")
		}
		want := make([]string, 0, len(rec.Expected))
		for _, l := range rec.Expected {
			want = append(want, wsRe.ReplaceAllString(strings.TrimSpace(l), " "))
		}
		switch rec.Sort {
		case "rowsort":
			sort.Strings(rows)
			sort.Strings(want)
		case "valuesort":
			sort.Strings(vals)
			rows = vals
			var w []string
			for _, l := range want {
				w = append(w, strings.Fields(l)...)
			}
			sort.Strings(w)
			want = w
		}
		if equalLines(rows, want) {
			return true, ""
		}
		return false, fmt.Sprintf("got %q want %q", trunc(rows), trunc(want))
	}
	// Classic.
	ncol := len(rec.Types)
	var rowsV [][]string
	for _, row := range res.Rows {
		if len(row) != ncol {
			return false, fmt.Sprintf("%d columns, the record declares %d", len(row), ncol)
		}
		vs := make([]string, ncol)
		for j, v := range row {
			vs[j] = renderClassic(v, rec.Types[j])
		}
		rowsV = append(rowsV, vs)
	}
	switch rec.Sort {
	case "rowsort":
		sort.SliceStable(rowsV, func(a, b int) bool {
			for k := range rowsV[a] {
				if rowsV[a][k] != rowsV[b][k] {
					return rowsV[a][k] < rowsV[b][k]
				}
			}
			return false
		})
	}
	var vals []string
	for _, row := range rowsV {
		vals = append(vals, row...)
	}
	if rec.Sort == "valuesort" {
		sort.Strings(vals)
	}
	h := md5.New()
	for _, v := range vals {
		h.Write([]byte(v + "\n"))
	}
	sum := fmt.Sprintf("%x", h.Sum(nil))
	hashed := fmt.Sprintf("%d values hashing to %s", len(vals), sum)
	if rec.Label != "" {
		if prev, ok := r.labels[rec.Label]; ok && prev != hashed {
			return false, fmt.Sprintf("label %s: %s, earlier %s", rec.Label, hashed, prev)
		}
		r.labels[rec.Label] = hashed
	}
	if len(rec.Expected) == 1 && hashLineRe.MatchString(rec.Expected[0]) {
		if rec.Expected[0] == hashed {
			return true, ""
		}
		return false, fmt.Sprintf("got %s want %s (values %q)", hashed, rec.Expected[0], trunc(vals))
	}
	if equalLines(vals, rec.Expected) {
		return true, ""
	}
	// Some files put a row per line.
	var rowLines []string
	for _, row := range rowsV {
		rowLines = append(rowLines, strings.Join(row, " "))
	}
	if equalLines(rowLines, rec.Expected) {
		return true, ""
	}
	return false, fmt.Sprintf("got %q want %q", trunc(vals), trunc(rec.Expected))
}
