package engine_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	osexec "os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// Hostile input: statements that crashed the server, killed it with an
// out-of-memory error or succeeded silently. Each gets PostgreSQL 15's
// answer here, and the server keeps serving.

// mistyped are statements PostgreSQL rejects as syntax errors; before, the
// statement splitter dropped them (`SELEC 1` was an empty query, `FOO;
// SELECT 1` ran only the SELECT).
//
//lint:immutable a constant list of reproducers.
var mistyped = []string{
	"SELEC 1",
	"FOO",
	"INSRET 1",
	"FOO; SELECT 1",
	"SELECT 1; FOO",
	"SELECT 1;\n  -- a comment\n  SELEC 2;",
	"  /* lead */ FOO",
	"SELECT 1; SELECT 2 +",
}

// TestMistypedStatementsAreSyntaxErrors runs each statement through psql -c
// against PostgreSQL 15 and RockStream: the same exit status and the same
// terse error (message and character position).
func TestMistypedStatementsAreSyntaxErrors(t *testing.T) {
	if _, err := osexec.LookPath("psql"); err != nil {
		t.Fatal("psql is not installed; install it with: apt-get install -y postgresql-client-15")
	}
	pgURL := pgtest.Start(t)
	rs := startServer(t, "memory://")
	for _, sql := range mistyped {
		want, wantErr := psqlTerse(pgURL, sql)
		got, gotErr := psqlTerse(rs.url(), sql)
		if (wantErr == nil) != (gotErr == nil) || got != want {
			t.Errorf("psql -c %q:\n got (%v): %s\nwant (%v): %s", sql, gotErr, got, wantErr, want)
		}
	}
	// The same through pgx: SQLSTATE 42601 and PostgreSQL's position.
	ctx := context.Background()
	pg, c := connect(t, pgURL), connect(t, rs.url())
	for _, sql := range mistyped {
		wantState, wantPos := errorAt(ctx, pg, sql)
		gotState, gotPos := errorAt(ctx, c, sql)
		if wantState != "42601" || gotState != wantState || gotPos != wantPos {
			t.Errorf("%q: SQLSTATE %s at %d, PostgreSQL %s at %d", sql, gotState, gotPos, wantState, wantPos)
		}
	}
	for _, sql := range []string{"FOO; SELECT 1", "SELECT 1; FOO"} {
		// The extended protocol too (Parse with several statements reports
		// the syntax error first, as PostgreSQL does).
		_, wantErr := pg.Exec(ctx, sql, pgx.QueryExecModeExec)
		_, gotErr := c.Exec(ctx, sql, pgx.QueryExecModeExec)
		if stateOf(gotErr) != stateOf(wantErr) || stateOf(wantErr) != "42601" {
			t.Errorf("extended %q: %v, PostgreSQL %v", sql, gotErr, wantErr)
		}
	}
}

// psqlTerse runs psql -c sql with terse errors and returns its output.
func psqlTerse(url, sql string) (string, error) {
	out, err := osexec.Command("psql", url, "-X", "-q", "-v", "VERBOSITY=terse", "-c", sql).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// errorAt runs sql in the simple protocol and returns the SQLSTATE and
// position of its error ("" when it succeeded).
func errorAt(ctx context.Context, c *pgx.Conn, sql string) (string, int32) {
	_, err := c.PgConn().Exec(ctx, sql).ReadAll()
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code, pe.Position
	}
	if err != nil {
		return "not a server error: " + err.Error(), 0
	}
	return "", 0
}

func stateOf(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// limitStatements ask for more memory than PostgreSQL allows one value
// (1 GB) or for a tree deeper than its stack; before, the first killed the
// process with "fatal error: out of memory" and the deep ones with SIGSEGV
// inside the C parser.
func limitStatements() []string {
	return []string{
		"SELECT lpad('x', 2147483647)",
		"SELECT rpad('x', 1073741823)",
		"SELECT lpad('x', 300000000, 'ab')",
		"SELECT repeat('xy', 600000000)",
		"SELECT repeat('x', 1073741824)",
		"SELECT string_agg(false, ',')",
		"SELECT string_agg(1, ',')",
		"SELECT 'x'::varchar(20000000)",
		"SELECT 'x'::char(0)",
		"SELECT " + strings.Repeat("1 + ", 25000) + "1",
		"SELECT " + strings.Repeat("'a' || ", 100000) + "'a'",
		strings.Repeat("SELECT 1 UNION ALL ", 100000) + "SELECT 1",
	}
}

// TestLimitsMatchPostgres compares each statement's SQLSTATE and message
// with PostgreSQL 15's, and checks the server still answers afterwards.
func TestLimitsMatchPostgres(t *testing.T) {
	ctx := context.Background()
	pg := connect(t, pgtest.Start(t))
	rs := startServer(t, "memory://")
	c := connect(t, rs.url())
	for _, sql := range limitStatements() {
		_, wantErr := pg.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol)
		_, gotErr := c.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol)
		var want, got *pgconn.PgError
		if !errors.As(wantErr, &want) || !errors.As(gotErr, &got) {
			t.Errorf("%.60s: got %v, PostgreSQL %v", sql, gotErr, wantErr)
			continue
		}
		if got.Code != want.Code || got.Message != want.Message {
			t.Errorf("%.60s:\n got %s %q\nwant %s %q", sql, got.Code, got.Message, want.Code, want.Message)
		}
		var one int
		if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
			t.Fatalf("after %.60s the server does not answer: %v", sql, err)
		}
	}
}

// TestNULByteInQuery sends a Query message with a NUL byte inside the
// string (which no libpq client can send): PostgreSQL answers ERROR 08P01
// "invalid message format" and keeps the session; before, the connection
// was dropped without an answer.
func TestNULByteInQuery(t *testing.T) {
	pgURL := pgtest.Start(t)
	rs := startServer(t, "memory://")
	want := nulByteTranscript(t, pgURL)
	got := nulByteTranscript(t, rs.url())
	if got != want {
		t.Fatalf("transcript\n got: %s\nwant: %s", got, want)
	}
}

// nulByteTranscript connects with pgproto3, sends a Query with a NUL byte
// and then SELECT 1, and summarises the answers.
func nulByteTranscript(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
	fe := pgproto3.NewFrontend(nc, nc)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{
		"user": u.User.Username(), "database": strings.TrimPrefix(u.Path, "/")}})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	readUntilReady := func() string {
		var b strings.Builder
		for {
			msg, err := fe.Receive()
			if err != nil {
				return b.String() + " " + err.Error()
			}
			switch m := msg.(type) {
			case *pgproto3.ErrorResponse:
				fmt.Fprintf(&b, " E[%s %s]", m.Code, m.Message)
			case *pgproto3.DataRow:
				fmt.Fprintf(&b, " D%s", m.Values[0])
			case *pgproto3.ReadyForQuery:
				return b.String() + " Z" + string(m.TxStatus)
			}
		}
	}
	readUntilReady()
	// pgproto3 would refuse to encode the NUL, so frame the message here.
	body := "SELECT 1\x00 SELECT 2\x00"
	frame := append([]byte{'Q', 0, 0, 0, 0}, body...)
	n := len(frame) - 1
	frame[1], frame[2], frame[3], frame[4] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	if _, err := nc.Write(frame); err != nil {
		t.Fatal(err)
	}
	first := readUntilReady()
	fe.Send(&pgproto3.Query{String: "SELECT 3"})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	return first + " |" + readUntilReady()
}
