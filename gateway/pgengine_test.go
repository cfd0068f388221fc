package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/types"
)

// This file holds the PROTOCOL-TEST-ONLY engine: pgProtocolTestEngine
// implements the gateway's Engine seam by forwarding every statement to a
// throwaway real PostgreSQL 15 server. It is not RockStream's engine; it lets
// the protocol tests drive real clients through the gateway against a
// complete SQL implementation, and doubles as an oracle for the gateway's
// value encodings (rows arrive from PostgreSQL in binary, are decoded into
// Datums by decodeBinary, and re-encoded by the gateway).

// testPostgresError carries a PostgreSQL error through the seam (tests only).
var testPostgresError = errcode.Register("RS-2499", "test.postgres_error", "XX000",
	"Test-only: an error reported by the PostgreSQL server behind the protocol-test engine.")

const pgBinDir = "/usr/lib/postgresql/15/bin"

// testPostgres is a PostgreSQL 15 server in a temporary directory, listening
// only on a Unix socket.
type testPostgres struct {
	dir, socketDir string
	cmd            *exec.Cmd
}

func (p *testPostgres) connString() string {
	return fmt.Sprintf("host=%s port=5432 user=postgres dbname=postgres sslmode=disable", p.socketDir)
}

// startTestPostgres runs initdb and postgres as the `postgres` user (initdb
// refuses root).
func startTestPostgres() (*testPostgres, error) {
	if _, err := os.Stat(filepath.Join(pgBinDir, "initdb")); err != nil {
		return nil, fmt.Errorf("PostgreSQL 15 server binaries are missing; install them with: apt-get install -y postgresql-15")
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("no postgres OS user (install postgresql-15): %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	root, err := os.MkdirTemp("", "rs-gateway-pg-")
	if err != nil {
		return nil, err
	}
	p := &testPostgres{dir: filepath.Join(root, "data"), socketDir: filepath.Join(root, "sock")}
	for _, d := range []string{root, p.socketDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
		if err := os.Chown(d, uid, gid); err != nil {
			return nil, err
		}
	}
	cred := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	initdb := exec.Command(filepath.Join(pgBinDir, "initdb"), "-D", p.dir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = cred
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	p.cmd = exec.Command(filepath.Join(pgBinDir, "postgres"), "-D", p.dir, "-k", p.socketDir, "-c", "listen_addresses=",
		"-c", "fsync=off", "-c", "TimeZone=Etc/UTC", "-c", "max_connections=50", "-c", "shared_buffers=16MB")
	p.cmd.SysProcAttr = cred
	var logs bytes.Buffer
	p.cmd.Stdout, p.cmd.Stderr = &logs, &logs
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := pgconn.Connect(context.Background(), p.connString())
		if err == nil {
			c.Close(context.Background())
			return p, nil
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("postgres did not start: %v\n%s", err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *testPostgres) stop() {
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(syscall.SIGINT)
		_ = p.cmd.Wait()
	}
	os.RemoveAll(filepath.Dir(p.dir))
}

// pgProtocolTestEngine is the protocol-test engine (see the file comment).
type pgProtocolTestEngine struct {
	connString string
	mu         sync.Mutex
	// sessions counts sessions opened, for tests.
	sessions int
	// copyChunks records the sizes of COPY chunks received, for tests.
	copyChunks []int
}

func (e *pgProtocolTestEngine) NewSession(ctx context.Context, info SessionInfo) (Session, error) {
	c, err := pgconn.Connect(ctx, e.connString)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.sessions++
	e.mu.Unlock()
	return &pgTestSession{engine: e, conn: c, timeZone: "Etc/UTC|ISO, MDY|postgres"}, nil
}

type pgTestSession struct {
	engine   *pgProtocolTestEngine
	conn     *pgconn.PgConn
	seq      int
	timeZone string // the TimeZone|DateStyle|IntervalStyle last SET on conn
	// savepoints is the number of open savepoints.
	savepoints int
}

type pgTestHandle struct {
	// notice makes the cursor report a warning (SQL containing /*notice*/).
	notice bool
	// panicNext makes the cursor panic on its first row (SQL containing a
	// panic_next column alias; COPY TO deparses the query, dropping
	// comments), to test recovery in Execute and COPY TO.
	panicNext     bool
	name          string
	resultFormats []int16
	columns       types.Schema
}

// testPostgresWarning is the warning the protocol-test engine reports for
// SQL containing /*notice*/ (tests only).
var testPostgresWarning = errcode.Register("RS-2498", "test.warning", "01000",
	"Test-only: a warning from the protocol-test engine.")

// pgErr converts a PostgreSQL error into an *errcode.Error with the same
// SQLSTATE, message and position.
func pgErr(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		e := errcode.New(testPostgresError, "%s", pe.Message).WithSQLState(pe.Code)
		e.Position = int(pe.Position)
		if pe.Detail != "" {
			e.Detail = pe.Detail
		}
		return e
	}
	return err
}

func (s *pgTestSession) syncSettings(ctx context.Context, settings *Settings) error {
	if settings == nil {
		return nil
	}
	// The settings that change how PostgreSQL reads the forwarded SQL's
	// literals (the gateway prints the results itself).
	tz, _ := settings.Get("TimeZone")
	dateStyle, _ := settings.Get("DateStyle")
	intervalStyle, _ := settings.Get("IntervalStyle")
	want := tz + "|" + dateStyle + "|" + intervalStyle
	if want == s.timeZone {
		return nil
	}
	for _, set := range [][2]string{{"TimeZone", tz}, {"DateStyle", dateStyle}, {"IntervalStyle", intervalStyle}} {
		if _, err := s.conn.Exec(ctx, "SET "+set[0]+" = '"+strings.ReplaceAll(set[1], "'", "''")+"'").ReadAll(); err != nil {
			return pgErr(err)
		}
	}
	s.timeZone = want
	return nil
}

func (s *pgTestSession) Prepare(ctx context.Context, req PrepareRequest) (*Statement, error) {
	if strings.Contains(req.SQL, "/*panic*/") {
		panic("protocol-test engine: panic requested by the test")
	}
	if err := s.syncSettings(ctx, req.Settings); err != nil {
		return nil, err
	}
	s.seq++
	name := fmt.Sprintf("rs_%d", s.seq)
	oids := make([]uint32, len(req.ParamTypes))
	for i, t := range req.ParamTypes {
		if t.Kind != types.KindUnknown {
			oids[i] = t.OID()
		}
	}
	sd, err := s.conn.Prepare(ctx, name, req.SQL, oids)
	if err != nil {
		return nil, pgErr(err)
	}
	st := &Statement{}
	for _, oid := range sd.ParamOIDs {
		t, ok := types.FromOID(oid)
		if !ok {
			t = types.TText
		}
		st.ParamTypes = append(st.ParamTypes, t)
	}
	h := &pgTestHandle{name: name, notice: strings.Contains(req.SQL, "/*notice*/"), panicNext: strings.Contains(req.SQL, "panic_next")}
	if len(sd.Fields) > 0 {
		for _, f := range sd.Fields {
			t, ok := types.FromOID(f.DataTypeOID)
			format := int16(1)
			if !ok || t.Kind == types.KindArray && t.Elem.Kind == types.KindUnknown {
				t, format = types.TText, 0
			}
			if t.Kind != types.KindArray {
				t.Typmod = f.TypeModifier
			}
			st.Columns = append(st.Columns, types.Column{Name: f.Name, Type: t, Nullable: true})
			st.Origins = append(st.Origins, ColumnOrigin{TableOID: f.TableOID, AttNum: int16(f.TableAttributeNumber)})
			h.resultFormats = append(h.resultFormats, format)
		}
		h.columns = st.Columns
	}
	st.Handle = h
	return st, nil
}

func (s *pgTestSession) Execute(ctx context.Context, req ExecuteRequest) (Cursor, error) {
	if err := s.syncSettings(ctx, req.Settings); err != nil {
		return nil, err
	}
	h := req.Statement.Handle.(*pgTestHandle)
	values := make([][]byte, len(req.Params))
	for i, v := range req.Params {
		if v == nil {
			continue
		}
		// In the default styles, which PostgreSQL reads back under any
		// DateStyle (it does not read its own SQL, YMD output).
		text, err := appendText(nil, req.Statement.ParamTypes[i], v, NewSettings("", ""))
		if err != nil {
			return nil, err
		}
		values[i] = text
	}
	// ExecPrepared blocks until the first row; a cancelled ctx cancels the
	// PostgreSQL statement without breaking the connection.
	stop := context.AfterFunc(ctx, func() { _ = s.conn.CancelRequest(context.Background()) })
	rr := s.conn.ExecPrepared(context.Background(), h.name, values, nil, h.resultFormats)
	stop()
	cur := &pgTestCursor{session: s, rr: rr, handle: h}
	if h.notice {
		cur.notices = []*errcode.Error{errcode.New(testPostgresWarning, "the protocol-test engine warns as asked")}
	}
	return cur, nil
}

type pgTestCursor struct {
	notices []*errcode.Error
	session *pgTestSession
	rr      *pgconn.ResultReader
	handle  *pgTestHandle
	tag     string
	closed  bool
}

func (c *pgTestCursor) Next(ctx context.Context) (types.Row, error) {
	if c.closed {
		return nil, io.EOF
	}
	if c.handle.panicNext {
		panic("protocol-test engine: panic in Next requested by the test")
	}
	stop := context.AfterFunc(ctx, func() { _ = c.session.conn.CancelRequest(context.Background()) })
	more := c.rr.NextRow()
	stop()
	if !more {
		tag, err := c.rr.Close()
		c.closed = true
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, pgErr(err)
		}
		c.tag = tag.String()
		return nil, io.EOF
	}
	raw := c.rr.Values()
	row := make(types.Row, len(raw))
	for i, v := range raw {
		if v == nil {
			continue
		}
		col := c.handle.columns[i]
		if c.handle.resultFormats[i] == 0 {
			row[i] = string(v)
			continue
		}
		d, err := decodeBinary(col.Type, v)
		if err != nil {
			return nil, fmt.Errorf("protocol-test engine: decoding %s: %w", col.Type.SQLName(), err)
		}
		row[i] = d
	}
	return row, nil
}

func (c *pgTestCursor) Tag() string               { return c.tag }
func (c *pgTestCursor) Notices() []*errcode.Error { return c.notices }
func (c *pgTestCursor) Close() error {
	if !c.closed {
		c.closed = true
		_, err := c.rr.Close()
		return pgErr(err)
	}
	return nil
}

func (s *pgTestSession) exec(ctx context.Context, sql string) error {
	_, err := s.conn.Exec(ctx, sql).ReadAll()
	return pgErr(err)
}

func (s *pgTestSession) Begin(ctx context.Context, opts TxOptions) error {
	if err := s.syncSettings(ctx, opts.Settings); err != nil {
		return err
	}
	s.savepoints = 0
	sql := "BEGIN ISOLATION LEVEL " + strings.ToUpper(opts.Isolation.String())
	if opts.ReadOnly {
		sql += " READ ONLY"
	}
	return s.exec(ctx, sql)
}

func (s *pgTestSession) Commit(ctx context.Context) error {
	// PostgreSQL answers COMMIT of a failed transaction with ROLLBACK;
	// report that as the error it is.
	res, err := s.conn.Exec(ctx, "COMMIT").ReadAll()
	if err != nil {
		return pgErr(err)
	}
	if len(res) == 1 && res[0].CommandTag.String() == "ROLLBACK" {
		return errcode.New(testPostgresError, "transaction rolled back").WithSQLState("40000")
	}
	return nil
}

func (s *pgTestSession) Rollback(ctx context.Context) error { return s.exec(ctx, "ROLLBACK") }

// Savepoints are forwarded under names by depth (the gateway keeps the
// client's names).
func (s *pgTestSession) Savepoint(ctx context.Context) error {
	s.savepoints++
	return s.exec(ctx, fmt.Sprintf("SAVEPOINT sp_%d", s.savepoints))
}

func (s *pgTestSession) RollbackToSavepoint(ctx context.Context, depth int) error {
	s.savepoints = depth
	return s.exec(ctx, fmt.Sprintf("ROLLBACK TO SAVEPOINT sp_%d", depth))
}

func (s *pgTestSession) ReleaseSavepoint(ctx context.Context, depth int) error {
	s.savepoints = depth - 1
	return s.exec(ctx, fmt.Sprintf("RELEASE SAVEPOINT sp_%d", depth))
}

func (s *pgTestSession) CopyIn(ctx context.Context, req CopyInRequest) (CopyInSink, error) {
	rel := quoteIdent(req.Table)
	if req.Schema != "" {
		rel = quoteIdent(req.Schema) + "." + rel
	}
	cols := "*"
	if len(req.Columns) > 0 {
		q := make([]string, len(req.Columns))
		for i, c := range req.Columns {
			q[i] = quoteIdent(c)
		}
		cols = strings.Join(q, ", ")
	}
	st, err := s.Prepare(ctx, PrepareRequest{SQL: "SELECT " + cols + " FROM " + rel + " LIMIT 0", Settings: req.Settings})
	if err != nil {
		return nil, err
	}
	names := make([]string, len(st.Columns))
	for i, c := range st.Columns {
		names[i] = quoteIdent(c.Name)
	}
	return &pgTestCopySink{session: s, columns: st.Columns, target: rel + " (" + strings.Join(names, ", ") + ")", settings: req.Settings}, nil
}

type pgTestCopySink struct {
	session  *pgTestSession
	columns  types.Schema
	target   string
	settings *Settings
	data     []byte
	rows     int64
}

func (k *pgTestCopySink) Columns() types.Schema { return k.columns }

func (k *pgTestCopySink) Write(ctx context.Context, rows []types.Row) error {
	if len(rows) > copyChunkRowsMax {
		return fmt.Errorf("protocol-test engine: chunk of %d rows exceeds copyChunkRowsMax", len(rows))
	}
	k.session.engine.mu.Lock()
	k.session.engine.copyChunks = append(k.session.engine.copyChunks, len(rows))
	k.session.engine.mu.Unlock()
	spec := &copySpec{format: copyText, delimiter: '\t', null: `\N`}
	var err error
	for _, r := range rows {
		if len(r) > 0 && r[0] == "panic" {
			panic("protocol-test engine: panic in COPY FROM requested by the test")
		}
		if k.data, err = appendCopyRow(k.data, r, k.columns, spec, k.settings); err != nil {
			return err
		}
		k.rows++
	}
	return nil
}

func (k *pgTestCopySink) Finish(ctx context.Context) (int64, error) {
	_, err := k.session.conn.CopyFrom(ctx, bytes.NewReader(k.data), "COPY "+k.target+" FROM STDIN")
	if err != nil {
		return 0, pgErr(err)
	}
	return k.rows, nil
}

func (k *pgTestCopySink) Abort(ctx context.Context) error { k.data = nil; return nil }

func (s *pgTestSession) Close() error { return s.conn.Close(context.Background()) }

// Shared fixtures: one PostgreSQL and one gateway for the package's tests.

var (
	testPG      *testPostgres
	testEngine  *pgProtocolTestEngine
	testAddr    string
	testCancel  context.CancelFunc
	testSrvDone chan error
)

func TestMain(m *testing.M) {
	pg, err := startTestPostgres()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gateway tests need PostgreSQL 15:", err)
		os.Exit(1)
	}
	testPG = pg
	testEngine = &pgProtocolTestEngine{connString: pg.connString()}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		pg.stop()
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testAddr = ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	testCancel = cancel
	testSrvDone = make(chan error, 1)
	go func() { testSrvDone <- Serve(ctx, ln, testEngine, Options{}) }()
	code := m.Run()
	cancel()
	<-testSrvDone
	pg.stop()
	os.Exit(code)
}

// gatewayConnString is a libpq connection string for the shared gateway.
func gatewayConnString(extra string) string {
	host, port, _ := net.SplitHostPort(testAddr)
	return fmt.Sprintf("host=%s port=%s user=postgres dbname=postgres sslmode=disable %s", host, port, extra)
}

func gatewayURL() string {
	return "postgres://postgres@" + testAddr + "/postgres?sslmode=disable"
}

// connectDirect connects straight to the test PostgreSQL, bypassing the
// gateway.
func connectDirect(t *testing.T) *pgconn.PgConn {
	t.Helper()
	c, err := pgconn.Connect(context.Background(), testPG.connString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}
