// Package harness connects the correctness tests to the two systems they
// compare: an in-process RockStream server (engine.Serve) and the throwaway
// PostgreSQL 15 of internal/pgtest.
//
// Statements go through the simple query protocol so both systems see the
// exact same text; results come back as text (the PostgreSQL text format),
// which is what sqllogictest files and the differential tester compare.
package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/enginetest"
	"github.com/rockstream/rockstream/internal/pgtest"
)

// StatementTimeout bounds one statement on either system: a hang is
// reported as an error (class "timeout"), never as a stuck test.
const StatementTimeout = 30 * time.Second

// Server is an in-process `rockstream start` (internal/enginetest).
type Server = enginetest.Server

// StartServer boots a RockStream server over a temporary directory and
// stops it when t ends. Its store is laid out over ROCKSTREAM_TEST_SHARDS
// shards (default 1; 3 puts the tables on the table shard and the views on
// two view shards, fed by the exchange, or spread over both); the test log
// says how many, so a failure is replayed with the same layout.
func StartServer(t testing.TB) *Server {
	t.Helper()
	LogShards(t)
	return enginetest.StartServer(t, t.TempDir())
}

// LogShards logs the number of shards the servers of this test run on.
func LogShards(t testing.TB) {
	t.Helper()
	n, err := enginetest.Shards()
	if err != nil {
		t.Fatal(err)
	}
	if enginetest.Partitioned() {
		t.Logf("RockStream over %d shard(s), tables partitioned (ROCKSTREAM_TEST_SHARDS=%d ROCKSTREAM_TEST_PARTITIONED=1)", n, n)
		return
	}
	t.Logf("RockStream over %d shard(s) (ROCKSTREAM_TEST_SHARDS=%d)", n, n)
}

// Start boots a server over storage (a directory or memory://), laid out
// over ROCKSTREAM_TEST_SHARDS shards as StartServer's.
func Start(storage string) (*Server, error) { return enginetest.Start(storage) }

// Conn is one session on either system.
type Conn struct {
	Name string // "rockstream" or "postgresql"
	c    *pgx.Conn
}

// Dial opens a session; it is closed when t ends.
func Dial(t testing.TB, name, url string) *Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s (%s): %v", name, url, err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return &Conn{Name: name, c: c}
}

// ConnectRS opens a session on s.
func ConnectRS(t testing.TB, s *Server) *Conn { return Dial(t, "rockstream", s.URL) }

// ConnectPG opens a session on the throwaway PostgreSQL inside a fresh
// schema (search_path set), dropped when t ends.
func ConnectPG(t testing.TB) *Conn {
	t.Helper()
	c := Dial(t, "postgresql", pgtest.Start(t))
	schema := fmt.Sprintf("corr_%d", time.Now().UnixNano())
	if _, err := c.Exec("CREATE SCHEMA " + schema + "; SET search_path = " + schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Exec("DROP SCHEMA " + schema + " CASCADE") })
	return c
}

// FreshSchema moves a PostgreSQL session into a new empty schema and
// returns a function that drops it.
func (c *Conn) FreshSchema(tag string) (func(), error) {
	schema := fmt.Sprintf("corr_%s_%d", tag, time.Now().UnixNano())
	if _, err := c.Exec("CREATE SCHEMA " + schema + "; SET search_path = " + schema); err != nil {
		return func() {}, err
	}
	return func() { _, _ = c.Exec("SET search_path = public; DROP SCHEMA " + schema + " CASCADE") }, nil
}

// Result is one statement's outcome in text form.
type Result struct {
	Columns []string
	Rows    [][]*string // nil element = NULL
}

// Exec runs sql (possibly several statements) in the simple protocol and
// returns the last result set that has columns (or the last one).
func (c *Conn) Exec(sql string) (*Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), StatementTimeout)
	defer cancel()
	res, err := c.c.PgConn().Exec(ctx, sql).ReadAll()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("timeout after %v: %w", StatementTimeout, err)
		}
		return nil, err
	}
	out := &Result{}
	for _, r := range res {
		if len(r.FieldDescriptions) == 0 && len(out.Columns) > 0 {
			continue
		}
		out = &Result{}
		for _, f := range r.FieldDescriptions {
			out.Columns = append(out.Columns, f.Name)
		}
		for _, row := range r.Rows {
			vals := make([]*string, len(row))
			for i, v := range row {
				if v != nil {
					s := string(v)
					vals[i] = &s
				}
			}
			out.Rows = append(out.Rows, vals)
		}
	}
	return out, nil
}

// Alive reports whether the session can still run a statement (after a
// timeout pgx closes the connection).
func (c *Conn) Alive() bool { return !c.c.IsClosed() }

// SQLState returns the SQLSTATE of a server error, "" for other errors.
func SQLState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// ErrorText is the message of a server error with its SQLSTATE and, for
// RockStream, its "RS-xxxx slug" (sent in the detail field), or err's text.
func ErrorText(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		if f := strings.Fields(pe.Detail); len(f) >= 2 && strings.HasPrefix(f[0], "RS-") {
			return pe.Code + " " + f[0] + " " + strings.TrimSuffix(f[1], ":") + " " + pe.Message
		}
		return pe.Code + " " + pe.Message
	}
	return err.Error()
}

// Lines renders rows as "v1|v2|..." lines with NULL for NULL.
func Lines(rows [][]*string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		parts := make([]string, len(r))
		for j, v := range r {
			if v == nil {
				parts[j] = "NULL"
			} else {
				parts[j] = *v
			}
		}
		out[i] = strings.Join(parts, "|")
	}
	return out
}

// SortedLines is Lines sorted (a multiset rendering).
func SortedLines(rows [][]*string) []string {
	l := Lines(rows)
	sort.Strings(l)
	return l
}

// ModuleRoot is the directory holding go.mod (found from this source file,
// so it works from any package's test).
func ModuleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// CorpusDir locates ../shared/testdata/sqllogictest relative to the module
// root (CI places shared/ beside the clone), or $ROCKSTREAM_SLT_DIR. It
// fails t with where it looked when the corpora are missing.
func CorpusDir(t testing.TB) string {
	t.Helper()
	cands := []string{}
	if d := os.Getenv("ROCKSTREAM_SLT_DIR"); d != "" {
		cands = append(cands, d)
	}
	root := ModuleRoot()
	cands = append(cands,
		filepath.Join(root, "..", "shared", "testdata", "sqllogictest"),
		filepath.Join(root, "..", "..", "shared", "testdata", "sqllogictest"),
		"/work/shared/testdata/sqllogictest")
	for _, c := range cands {
		if st, err := os.Stat(filepath.Join(c, "sqlite", "MANIFEST.tsv")); err == nil && !st.IsDir() {
			return c
		}
	}
	t.Fatalf("sqllogictest corpora not found; looked in %v. Place the shared/ directory beside the repository (../shared/testdata/sqllogictest) or set ROCKSTREAM_SLT_DIR", cands)
	return ""
}
