package console

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/errcode"
)

// Limits of the SQL endpoint.
const (
	// sqlBytesMax bounds a request body: the box is for statements typed
	// or pasted by a person, bulk loads go through COPY in psql.
	sqlBytesMax = 1 << 20
	// resultRowsMax bounds the rows kept of one result: the rest are read
	// and dropped, and the result says it was truncated, so a SELECT of a
	// big table cannot make the server hold it all for a browser.
	resultRowsMax = 1000
	// resultsMax bounds the results of one request (statements separated
	// by semicolons); the later ones run but are not shown.
	resultsMax = 50
)

// sqlRequest is the body of POST /console/api/sql.
type sqlRequest struct {
	SQL string `json:"sql"`
	// DB is the namespace the session connects to ("default" if empty).
	DB string `json:"db"`
	// Session is the token of the tab's session (sessions.go). Empty, the
	// statement runs in a new session, kept for later statements when
	// KeepSession is set (the page sets it) and closed after it otherwise.
	Session     string `json:"session"`
	KeepSession bool   `json:"keep_session"`
}

// sqlResponse is its answer: one result per statement that ran, and the
// error of the one that failed, if any (PostgreSQL runs a multi-statement
// request in one implicit transaction, so nothing of it is kept then).
type sqlResponse struct {
	Results []sqlResult `json:"results"`
	Notices []sqlError  `json:"notices,omitempty"`
	Error   *sqlError   `json:"error,omitempty"`
	// Session is the token to send with the tab's next statement;
	// NewSession says it was opened for this one (the one named was gone:
	// idle too long, cancelled, or never opened).
	Session    string `json:"session,omitempty"`
	NewSession bool   `json:"new_session,omitempty"`
	// Transaction is the session's state after the statements: "idle",
	// "in transaction" (after BEGIN) or "failed" (an error inside BEGIN:
	// only ROLLBACK is accepted), as psql's prompt shows it.
	Transaction string `json:"transaction,omitempty"`
}

// sqlResult is one statement's result, values in PostgreSQL's text format
// (what psql shows), NULL as null.
type sqlResult struct {
	Columns   []string    `json:"columns"`
	Rows      [][]*string `json:"rows"`
	Tag       string      `json:"tag"`
	Truncated bool        `json:"truncated,omitempty"`
}

// sqlError is an error or notice as the engine reported it.
type sqlError struct {
	// Code is the RS-xxxx code (empty if the error did not carry one).
	Code     string `json:"code,omitempty"`
	Slug     string `json:"slug,omitempty"`
	SQLState string `json:"sqlstate,omitempty"`
	Severity string `json:"severity,omitempty"`
	Message  string `json:"message"`
	Detail   string `json:"detail,omitempty"`
	Hint     string `json:"hint,omitempty"`
	Position int32  `json:"position,omitempty"`
}

func (c *console) sql(w http.ResponseWriter, r *http.Request) {
	if mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mediaType != "application/json" {
		// NB: also a CSRF guard: a cross-site form cannot send this type.
		refuse(w, r, http.StatusUnsupportedMediaType, errcode.New(errcode.ConsoleBadRequest, "the SQL endpoint takes application/json, not %q", r.Header.Get("Content-Type")))
		return
	}
	var req sqlRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, sqlBytesMax)).Decode(&req); err != nil {
		refuse(w, r, http.StatusBadRequest, errcode.Wrap(errcode.ConsoleBadRequest, err, "cannot read the request body (at most %d bytes of JSON)", sqlBytesMax))
		return
	}
	if strings.TrimSpace(req.SQL) == "" {
		refuse(w, r, http.StatusBadRequest, errcode.New(errcode.ConsoleBadRequest, "no SQL statement given"))
		return
	}
	if word := firstWord(req.SQL); word == "copy" || word == "subscribe" {
		refuse(w, r, http.StatusOK, errcode.New(errcode.ConsoleStatementRefused, "%s cannot run in the console's SQL box", strings.ToUpper(word)))
		return
	}
	if req.DB == "" {
		req.DB = defaultDatabase
	}
	ctx, cancel := context.WithTimeout(r.Context(), statementTimeout)
	defer cancel()
	resp := c.run(ctx, r, req)
	writeJSON(w, http.StatusOK, resp)
}

// run executes req in the tab's session with the simple query protocol,
// as psql sends what is typed at its prompt.
func (c *console) run(ctx context.Context, r *http.Request, req sqlRequest) sqlResponse {
	resp := sqlResponse{Results: []sqlResult{}}
	if req.Session == "" && !req.KeepSession {
		conn, err := c.connect(ctx, r, req.DB, func(_ *pgconn.PgConn, n *pgconn.Notice) {
			resp.Notices = append(resp.Notices, *describeError((*pgconn.PgError)(n)))
		})
		if err != nil {
			resp.Error = describeError(err)
			return resp
		}
		defer conn.Close(context.Background())
		c.execute(ctx, conn, req.SQL, &resp)
		return resp
	}
	session, token, fresh, err := c.take(ctx, r, req.Session, req.DB)
	if err != nil {
		resp.Error = describeError(err)
		return resp
	}
	session.notices = nil
	c.execute(ctx, session.conn, req.SQL, &resp)
	resp.Notices, resp.Session, resp.NewSession = session.notices, token, fresh
	switch session.conn.TxStatus() {
	case 'T':
		resp.Transaction = "in transaction"
	case 'E':
		resp.Transaction = "failed"
	default:
		resp.Transaction = "idle"
	}
	closed := session.conn.IsClosed()
	session.running.Unlock()
	if closed {
		// NB: a cancelled statement takes its connection with it (the
		// client closes it to stop reading); the next one opens anew.
		c.drop(token, session)
		resp.Transaction = ""
	}
	return resp
}

// execute runs sql on conn and adds its results or error to resp.
func (c *console) execute(ctx context.Context, conn *pgconn.PgConn, sql string, resp *sqlResponse) {
	results := conn.Exec(ctx, sql)
	for results.NextResult() {
		rr := results.ResultReader()
		res := sqlResult{Columns: []string{}, Rows: [][]*string{}}
		for _, f := range rr.FieldDescriptions() {
			res.Columns = append(res.Columns, f.Name)
		}
		for rr.NextRow() {
			if len(res.Rows) == resultRowsMax {
				res.Truncated = true
				continue
			}
			row := make([]*string, len(rr.Values()))
			for i, v := range rr.Values() {
				if v != nil {
					s := string(v)
					row[i] = &s
				}
			}
			res.Rows = append(res.Rows, row)
		}
		tag, err := rr.Close()
		if err != nil {
			break // reported by results.Close
		}
		res.Tag = tag.String()
		if len(resp.Results) < resultsMax {
			resp.Results = append(resp.Results, res)
		}
	}
	if err := results.Close(); err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) || pgconn.Timeout(err) {
			err = errcode.Wrap(errcode.QueryCanceled, err, "the statement was cancelled after %s (the console's statement timeout) or because the page went away", statementTimeout)
		}
		resp.Error = describeError(err)
	}
}

// describeError turns an engine error (an ErrorResponse, whose detail
// starts with "RS-xxxx slug"), a console error or any other error into
// what the page shows.
func describeError(err error) *sqlError {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		out := &sqlError{SQLState: pg.Code, Severity: pg.Severity, Message: pg.Message, Detail: pg.Detail, Hint: pg.Hint, Position: pg.Position}
		if id, rest, ok := strings.Cut(pg.Detail, " "); ok && strings.HasPrefix(id, "RS-") {
			out.Code = id
			out.Slug, out.Detail, _ = strings.Cut(rest, ": ")
		}
		return out
	}
	if e, ok := errcode.As(err); ok {
		message := e.Message
		if e.Cause != nil {
			message += ": " + e.Cause.Error()
		}
		return &sqlError{Code: e.Code.ID, Slug: e.Code.Slug, SQLState: e.State(), Severity: "ERROR", Message: message, Detail: e.Detail, Hint: e.NextSteps()}
	}
	return describeError(errcode.Wrap(errcode.ConsoleUnavailable, err, "the console's session failed"))
}

// firstWord is the statement's first keyword, lower case, after leading
// white space and comments.
func firstWord(sql string) string {
	for {
		sql = strings.TrimLeft(sql, " \t\r\n\f(")
		switch {
		case strings.HasPrefix(sql, "--"):
			_, rest, ok := strings.Cut(sql, "\n")
			if !ok {
				return ""
			}
			sql = rest
		case strings.HasPrefix(sql, "/*"):
			_, rest, ok := strings.Cut(sql[2:], "*/")
			if !ok {
				return ""
			}
			sql = rest
		default:
			end := strings.IndexFunc(sql, func(r rune) bool {
				return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_')
			})
			if end < 0 {
				end = len(sql)
			}
			return strings.ToLower(sql[:end])
		}
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
