package gateway

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

func connectGateway(t *testing.T, extra string) *pgconn.PgConn {
	t.Helper()
	c, err := pgconn.Connect(context.Background(), gatewayConnString(extra))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// execOne runs one simple query and returns its last result's rows as
// strings (NULL as "<null>") and its tag.
func execOne(t *testing.T, c *pgconn.PgConn, sql string) ([][]string, string) {
	t.Helper()
	res, err := c.Exec(context.Background(), sql).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	last := res[len(res)-1]
	var rows [][]string
	for _, r := range last.Rows {
		var row []string
		for _, v := range r {
			if v == nil {
				row = append(row, "<null>")
			} else {
				row = append(row, string(v))
			}
		}
		rows = append(rows, row)
	}
	return rows, last.CommandTag.String()
}

func scalar(t *testing.T, c *pgconn.PgConn, sql string) string {
	t.Helper()
	rows, _ := execOne(t, c, sql)
	if len(rows) != 1 || len(rows[0]) != 1 {
		t.Fatalf("%s: want one value, got %v", sql, rows)
	}
	return rows[0][0]
}

// execErr runs sql expecting an error and returns it.
func execErr(t *testing.T, c *pgconn.PgConn, sql string) *pgconn.PgError {
	t.Helper()
	_, err := c.Exec(context.Background(), sql).ReadAll()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("%s: want a server error, got %v", sql, err)
	}
	return pe
}

func TestStartupParameterStatus(t *testing.T) {
	c := connectGateway(t, "application_name=startup_test")
	want := map[string]string{
		"server_version":              ServerVersion,
		"DateStyle":                   "ISO, MDY",
		"integer_datetimes":           "on",
		"standard_conforming_strings": "on",
		"client_encoding":             "UTF8",
		"server_encoding":             "UTF8",
		"TimeZone":                    "Etc/UTC",
		"IntervalStyle":               "postgres",
		"is_superuser":                "on",
		"session_authorization":       "postgres",
		"application_name":            "startup_test",
	}
	for name, v := range want {
		if got := c.ParameterStatus(name); got != v {
			t.Errorf("ParameterStatus %s = %q, want %q", name, got, v)
		}
	}
	if c.PID() == 0 || len(c.SecretKey()) == 0 {
		t.Errorf("no BackendKeyData: pid %d", c.PID())
	}
	if got := scalar(t, c, "show server_version"); got != ServerVersion {
		t.Errorf("SHOW server_version = %q", got)
	}
}

func TestTransactions(t *testing.T) {
	c := connectGateway(t, "")
	execOne(t, c, "drop table if exists tx_t; create table tx_t(id int primary key, v text)")
	count := func() string { return scalar(t, c, "select count(*) from tx_t") }

	execOne(t, c, "begin")
	if c.TxStatus() != 'T' {
		t.Errorf("after BEGIN status %c", c.TxStatus())
	}
	execOne(t, c, "insert into tx_t values (1, 'a')")
	if _, tag := execOne(t, c, "rollback"); tag != "ROLLBACK" {
		t.Errorf("tag %q", tag)
	}
	if count() != "0" {
		t.Fatal("rollback kept the row")
	}
	execOne(t, c, "begin; insert into tx_t values (1, 'a'); commit")
	if count() != "1" || c.TxStatus() != 'I' {
		t.Fatalf("commit lost the row, status %c", c.TxStatus())
	}

	// An error inside a block aborts it: 25P02 until ROLLBACK.
	execOne(t, c, "begin")
	if pe := execErr(t, c, "select 1/0"); pe.Code != "22012" {
		t.Errorf("division by zero: %s", pe.Code)
	}
	if c.TxStatus() != 'E' {
		t.Errorf("after error in block status %c", c.TxStatus())
	}
	pe := execErr(t, c, "select 1")
	if pe.Code != "25P02" || !strings.HasPrefix(pe.Detail, "RS-2422 transaction.aborted") || pe.Hint == "" {
		t.Errorf("in failed block: %s %q %q", pe.Code, pe.Detail, pe.Hint)
	}
	if _, tag := execOne(t, c, "commit"); tag != "ROLLBACK" {
		t.Errorf("COMMIT of a failed block answered %q, want ROLLBACK", tag)
	}
	if c.TxStatus() != 'I' || scalar(t, c, "select 1") != "1" {
		t.Error("session unusable after failed block")
	}

	// SERIALIZABLE is refused with RS-2003.
	for _, q := range []string{
		"begin isolation level serializable",
		"set session characteristics as transaction isolation level serializable",
		"set default_transaction_isolation = 'serializable'",
	} {
		pe := execErr(t, c, q)
		if pe.Code != "0A000" || !strings.HasPrefix(pe.Detail, "RS-2003 isolation.serializable_not_supported") {
			t.Errorf("%s: %s %q", q, pe.Code, pe.Detail)
		}
	}
	if c.TxStatus() != 'I' {
		t.Errorf("status %c after refused BEGIN", c.TxStatus())
	}

	// Isolation and read-only reach the engine and SHOW.
	execOne(t, c, "begin isolation level repeatable read")
	if got := scalar(t, c, "show transaction isolation level"); got != "repeatable read" {
		t.Errorf("in RR block: %q", got)
	}
	if got := scalar(t, c, "select current_setting('transaction_isolation')"); got != "repeatable read" {
		t.Errorf("engine saw isolation %q", got)
	}
	execOne(t, c, "commit")
	if got := scalar(t, c, "show transaction_isolation"); got != "read committed" {
		t.Errorf("after commit: %q", got)
	}
	execOne(t, c, "begin read only")
	if pe := execErr(t, c, "insert into tx_t values (2, 'b')"); pe.Code != "25006" {
		t.Errorf("write in read-only tx: %s", pe.Code)
	}
	execOne(t, c, "rollback")
	execOne(t, c, "set session characteristics as transaction isolation level repeatable read")
	if got := scalar(t, c, "show transaction isolation level"); got != "repeatable read" {
		t.Errorf("session characteristics: %q", got)
	}
	execOne(t, c, "set session characteristics as transaction isolation level read committed")

	// A multi-statement Query is one implicit transaction: an error rolls
	// back the statements before it.
	if pe := execErr(t, c, "insert into tx_t values (10, 'x'); select 1/0"); pe.Code != "22012" {
		t.Errorf("%s", pe.Code)
	}
	if got := scalar(t, c, "select count(*) from tx_t where id = 10"); got != "0" {
		t.Errorf("implicit transaction not rolled back: %s rows", got)
	}
	execOne(t, c, "insert into tx_t values (11, 'x'); begin; insert into tx_t values (12, 'y'); commit")
	if got := scalar(t, c, "select count(*) from tx_t where id in (11, 12)"); got != "2" {
		t.Errorf("BEGIN inside a multi-statement query: %s rows", got)
	}
	// COMMIT and ROLLBACK without a block warn but succeed.
	if _, tag := execOne(t, c, "commit"); tag != "COMMIT" {
		t.Errorf("tag %q", tag)
	}
}

func TestSetShowReset(t *testing.T) {
	c := connectGateway(t, "")
	execOne(t, c, "set extra_float_digits = 3")
	if got := scalar(t, c, "show extra_float_digits"); got != "3" {
		t.Errorf("extra_float_digits %q", got)
	}
	execOne(t, c, "set application_name = 'renamed'")
	if got := c.ParameterStatus("application_name"); got != "renamed" {
		t.Errorf("no ParameterStatus after SET application_name: %q", got)
	}
	execOne(t, c, "set timezone to 'Europe/Berlin'")
	if got := c.ParameterStatus("TimeZone"); got != "Europe/Berlin" {
		t.Errorf("TimeZone status %q", got)
	}
	if got := scalar(t, c, "show timezone"); got != "Europe/Berlin" {
		t.Errorf("SHOW timezone %q", got)
	}
	if got := scalar(t, c, "select '2024-07-01 12:00:00+00'::timestamptz"); got != "2024-07-01 14:00:00+02" {
		t.Errorf("timestamptz in Europe/Berlin: %q", got)
	}
	execOne(t, c, `set search_path to "$user", public, other`)
	if got := scalar(t, c, "show search_path"); got != `"$user", public, other` {
		t.Errorf("search_path %q", got)
	}
	execOne(t, c, "set myapp.tenant = 'acme'")
	if got := scalar(t, c, "show myapp.tenant"); got != "acme" {
		t.Errorf("custom parameter %q", got)
	}
	pe := execErr(t, c, "set no_such_parameter = 1")
	if pe.Code != "42704" || !strings.HasPrefix(pe.Detail, "RS-2420") {
		t.Errorf("unknown parameter: %s %q", pe.Code, pe.Detail)
	}
	if pe := execErr(t, c, "set datestyle = 'Swiss'"); pe.Code != "22023" {
		t.Errorf("DateStyle Swiss: %s", pe.Code)
	}
	execOne(t, c, "set datestyle = 'German'")
	if got := c.ParameterStatus("DateStyle"); got != "German, DMY" {
		t.Errorf("DateStyle %q", got)
	}
	execOne(t, c, "set datestyle = 'ISO'")
	if got := c.ParameterStatus("DateStyle"); got != "ISO, DMY" {
		t.Errorf("DateStyle %q (the order stays)", got)
	}
	execOne(t, c, "set datestyle = 'ISO, MDY'")
	if got := c.ParameterStatus("DateStyle"); got != "ISO, MDY" {
		t.Errorf("DateStyle %q", got)
	}
	// SET inside a rolled-back block is undone; SET LOCAL ends with the block.
	execOne(t, c, "begin; set extra_float_digits = 0; set local statement_timeout = '5s'")
	if got := scalar(t, c, "show statement_timeout"); got != "5s" {
		t.Errorf("SET LOCAL: %q", got)
	}
	execOne(t, c, "rollback")
	if got := scalar(t, c, "show extra_float_digits"); got != "3" {
		t.Errorf("rolled-back SET kept: %q", got)
	}
	execOne(t, c, "begin; set local statement_timeout = '5s'; commit")
	if got := scalar(t, c, "show statement_timeout"); got != "0" {
		t.Errorf("SET LOCAL survived commit: %q", got)
	}
	rows, _ := execOne(t, c, "show all")
	if len(rows) < 30 || len(rows[0]) != 3 {
		t.Errorf("SHOW ALL: %d rows", len(rows))
	}
	execOne(t, c, "reset all")
	if got := scalar(t, c, "show timezone"); got != "Etc/UTC" {
		t.Errorf("RESET ALL: timezone %q", got)
	}
	if got := c.ParameterStatus("application_name"); got != "" {
		t.Errorf("RESET ALL: application_name status %q", got)
	}
	execOne(t, c, "set extra_float_digits = 2; discard all")
	if got := scalar(t, c, "show extra_float_digits"); got != "1" {
		t.Errorf("DISCARD ALL: %q", got)
	}
	execOne(t, c, "begin")
	if pe := execErr(t, c, "discard all"); pe.Code != "25001" {
		t.Errorf("DISCARD ALL in block: %s", pe.Code)
	}
	execOne(t, c, "rollback")
	if got := scalar(t, c, "show transaction isolation level"); got != "read committed" {
		t.Errorf("%q", got)
	}
}

func TestErrorsCarryRSCodeAndPosition(t *testing.T) {
	c := connectGateway(t, "")
	pe := execErr(t, c, "select * from no_such_table")
	if pe.Code != "42P01" || pe.Position != 15 || !strings.HasPrefix(pe.Detail, "RS-") || pe.Hint == "" || pe.Severity != "ERROR" {
		t.Errorf("error fields: %+v", pe)
	}
	// Empty query.
	res, err := c.Exec(context.Background(), " ; -- nothing\n").ReadAll()
	if err != nil || len(res) != 1 || len(res[0].Rows) != 0 {
		t.Errorf("empty query: %v %v", res, err)
	}
}

func TestPanicIsRecovered(t *testing.T) {
	c := connectGateway(t, "")
	pe := execErr(t, c, "select 1 /*panic*/")
	if pe.Code != "XX000" || !strings.HasPrefix(pe.Detail, "RS-9000 internal.unexpected") {
		t.Errorf("panic error: %s %q", pe.Code, pe.Detail)
	}
	if got := scalar(t, c, "select 41 + 1"); got != "42" {
		t.Errorf("connection after panic: %q", got)
	}
	other := connectGateway(t, "")
	if got := scalar(t, other, "select 1"); got != "1" {
		t.Error("server after panic")
	}
}

func TestCancelRequest(t *testing.T) {
	c := connectGateway(t, "")
	done := make(chan error, 1)
	go func() {
		_, err := c.Exec(context.Background(), "select pg_sleep(60)").ReadAll()
		done <- err
	}()
	// Keep cancelling until the statement ends: a cancel that arrives before
	// the statement runs is ignored, as in PostgreSQL.
	var err error
	ticker := time.NewTicker(50 * time.Millisecond)
	defer ticker.Stop()
wait:
	for {
		select {
		case err = <-done:
			break wait
		case <-ticker.C:
			cc, cerr := pgconn.Connect(context.Background(), gatewayConnString(""))
			if cerr != nil {
				t.Fatal(cerr)
			}
			_ = cc.Close(context.Background())
			if cerr := c.CancelRequest(context.Background()); cerr != nil {
				t.Fatal(cerr)
			}
		}
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" || !strings.Contains(pe.Message, "user request") {
		t.Fatalf("cancelled statement: %v", err)
	}
	if got := scalar(t, c, "select 'alive'"); got != "alive" {
		t.Error("connection after cancel")
	}
	// NB: statement_timeout is checked on a fresh session: the protocol-test
	// engine forwards cancels to PostgreSQL, which applies them
	// asynchronously, so a late cancel of the loop above could still hit the
	// next statement of the same backend.
	c2 := connectGateway(t, "")
	execOne(t, c2, "set statement_timeout = 50")
	pe = execErr(t, c2, "select pg_sleep(60)")
	if pe.Code != "57014" || !strings.Contains(pe.Message, "statement timeout") {
		t.Errorf("statement_timeout: %s %s", pe.Code, pe.Message)
	}
}

// rawConn is a hand-driven protocol connection for the extended protocol.
type rawConn struct {
	t  *testing.T
	nc net.Conn
	fe *pgproto3.Frontend
}

func dialRaw(t *testing.T) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", testAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	r := &rawConn{t: t, nc: nc, fe: pgproto3.NewFrontend(nc, nc)}
	r.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "postgres", "database": "postgres"}})
	r.flush()
	r.until('Z')
	return r
}

func (r *rawConn) send(msgs ...pgproto3.FrontendMessage) {
	for _, m := range msgs {
		r.fe.Send(m)
	}
	r.flush()
}

func (r *rawConn) flush() {
	if err := r.fe.Flush(); err != nil {
		r.t.Fatal(err)
	}
}

// until reads messages up to and including one whose type byte is last,
// returning a compact transcript like "1 2 T D D s".
func (r *rawConn) until(last byte) []string {
	r.t.Helper()
	_ = r.nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	var out []string
	for {
		msg, err := r.fe.Receive()
		if err != nil {
			r.t.Fatalf("receive: %v (so far %v)", err, out)
		}
		code, text := describeBackend(msg)
		out = append(out, text)
		if code == last {
			return out
		}
	}
}

func describeBackend(msg pgproto3.BackendMessage) (byte, string) {
	switch m := msg.(type) {
	case *pgproto3.ParseComplete:
		return '1', "1"
	case *pgproto3.BindComplete:
		return '2', "2"
	case *pgproto3.CloseComplete:
		return '3', "3"
	case *pgproto3.NoData:
		return 'n', "n"
	case *pgproto3.PortalSuspended:
		return 's', "s"
	case *pgproto3.EmptyQueryResponse:
		return 'I', "I"
	case *pgproto3.ParameterDescription:
		var oids []string
		for _, o := range m.ParameterOIDs {
			oids = append(oids, itoa(int64(o)))
		}
		return 't', "t[" + strings.Join(oids, ",") + "]"
	case *pgproto3.RowDescription:
		var cols []string
		for _, f := range m.Fields {
			cols = append(cols, string(f.Name)+":"+itoa(int64(f.DataTypeOID))+"/f"+itoa(int64(f.Format)))
		}
		return 'T', "T[" + strings.Join(cols, " ") + "]"
	case *pgproto3.DataRow:
		var vals []string
		for _, v := range m.Values {
			vals = append(vals, string(v))
		}
		return 'D', "D[" + strings.Join(vals, ",") + "]"
	case *pgproto3.CommandComplete:
		return 'C', "C[" + string(m.CommandTag) + "]"
	case *pgproto3.ErrorResponse:
		return 'E', "E[" + m.Code + "]"
	case *pgproto3.NoticeResponse:
		return 'N', "N[" + m.Code + "]"
	case *pgproto3.ReadyForQuery:
		return 'Z', "Z" + string(m.TxStatus)
	case *pgproto3.ParameterStatus:
		return 'S', "S[" + m.Name + "]"
	case *pgproto3.CopyInResponse:
		return 'G', "G"
	case *pgproto3.CopyOutResponse:
		return 'H', "H"
	case *pgproto3.CopyData:
		return 'd', "d[" + string(m.Data) + "]"
	case *pgproto3.CopyDone:
		return 'c', "c"
	case *pgproto3.NegotiateProtocolVersion:
		return 'v', "v[" + itoa(int64(m.NewestMinorProtocol)) + " " + strings.Join(m.UnrecognizedOptions, ",") + "]"
	case *pgproto3.AuthenticationOk:
		return 'R', "R"
	case *pgproto3.BackendKeyData:
		return 'K', "K"
	}
	return '?', "?"
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func transcript(t *testing.T, got []string, want string) {
	t.Helper()
	if g := strings.Join(got, " "); g != want {
		t.Errorf("transcript\n got: %s\nwant: %s", g, want)
	}
}

func TestExtendedProtocol(t *testing.T) {
	r := dialRaw(t)

	// Describe statement infers parameter types; binary int2 widened to int8.
	r.send(&pgproto3.Parse{Name: "s1", Query: "select $1::int8 + 1 as n, $2::text as t"},
		&pgproto3.Describe{ObjectType: 'S', Name: "s1"}, &pgproto3.Sync{})
	transcript(t, r.until('Z'), "1 t[20,25] T[n:20/f0 t:25/f0] ZI")
	r.send(&pgproto3.Bind{PreparedStatement: "s1", ParameterFormatCodes: []int16{1, 0},
		Parameters: [][]byte{{0, 41}, []byte("x")}, ResultFormatCodes: []int16{0}},
		&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{})
	transcript(t, r.until('Z'), "2 T[n:20/f0 t:25/f0] D[42,x] C[SELECT 1] ZI")

	// Row limits suspend the portal; Execute resumes it. Pipelined before
	// one Sync.
	r.send(&pgproto3.Parse{Query: "select generate_series(1, 5)"},
		&pgproto3.Bind{}, &pgproto3.Execute{MaxRows: 2}, &pgproto3.Execute{MaxRows: 2}, &pgproto3.Execute{MaxRows: 2},
		&pgproto3.Sync{})
	transcript(t, r.until('Z'), "1 2 D[1] D[2] s D[3] D[4] s D[5] C[SELECT 1] ZI")

	// An error skips everything up to Sync; the next batch works.
	r.send(&pgproto3.Parse{Query: "select 1/0"}, &pgproto3.Bind{}, &pgproto3.Execute{},
		&pgproto3.Parse{Query: "select 2"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{},
		&pgproto3.Parse{Query: "select 3"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	transcript(t, r.until('Z'), "1 2 E[22012] ZI")
	transcript(t, r.until('Z'), "1 2 D[3] C[SELECT 1] ZI")

	// Flush without Sync delivers the answers so far (postgres.js, asyncpg).
	r.send(&pgproto3.Parse{Name: "s2", Query: "select $1::int4"}, &pgproto3.Describe{ObjectType: 'S', Name: "s2"}, &pgproto3.Flush{})
	transcript(t, r.until('T'), "1 t[23] T[int4:23/f0]")
	r.send(&pgproto3.Bind{PreparedStatement: "s2", Parameters: [][]byte{[]byte("7")}, ResultFormatCodes: []int16{1}},
		&pgproto3.Execute{}, &pgproto3.Sync{})
	transcript(t, r.until('Z'), "2 D[\x00\x00\x00\a] C[SELECT 1] ZI")

	// Named portals inside a transaction, statements without rows, empty
	// queries, Close.
	r.send(&pgproto3.Parse{Query: "begin"}, &pgproto3.Bind{}, &pgproto3.Execute{},
		&pgproto3.Parse{Name: "s3", Query: "select generate_series(1, 3)"},
		&pgproto3.Bind{DestinationPortal: "p1", PreparedStatement: "s3"},
		&pgproto3.Execute{Portal: "p1", MaxRows: 1}, &pgproto3.Sync{})
	transcript(t, r.until('Z'), "1 2 C[BEGIN] 1 2 D[1] s ZT")
	r.send(&pgproto3.Execute{Portal: "p1"}, &pgproto3.Close{ObjectType: 'P', Name: "p1"},
		&pgproto3.Parse{Query: ""}, &pgproto3.Bind{}, &pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{},
		&pgproto3.Parse{Query: "set application_name = 'ext'"}, &pgproto3.Bind{}, &pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{},
		&pgproto3.Parse{Query: "commit"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	transcript(t, r.until('Z'), "D[2] D[3] C[SELECT 2] 3 1 2 n I 1 2 n S[application_name] C[SET] 1 2 C[COMMIT] ZI")

	// Errors for unknown statements/portals, duplicate names, wrong counts.
	r.send(&pgproto3.Bind{PreparedStatement: "nope"}, &pgproto3.Sync{})
	transcript(t, r.until('Z'), "E[26000] ZI")
	r.send(&pgproto3.Execute{Portal: "nope"}, &pgproto3.Sync{})
	transcript(t, r.until('Z'), "E[34000] ZI")
	r.send(&pgproto3.Parse{Name: "s1", Query: "select 1"}, &pgproto3.Sync{})
	transcript(t, r.until('Z'), "E[42P05] ZI")
	r.send(&pgproto3.Bind{PreparedStatement: "s1"}, &pgproto3.Sync{})
	transcript(t, r.until('Z'), "E[08P01] ZI")
	r.send(&pgproto3.Parse{Query: "select 1; select 2"}, &pgproto3.Sync{})
	transcript(t, r.until('Z'), "E[42601] ZI")
	r.send(&pgproto3.Bind{PreparedStatement: "s2", ParameterFormatCodes: []int16{1}, Parameters: [][]byte{{1, 2, 3}}}, &pgproto3.Sync{})
	transcript(t, r.until('Z'), "E[22P03] ZI")
	r.send(&pgproto3.Bind{PreparedStatement: "s2", Parameters: [][]byte{[]byte("abc")}}, &pgproto3.Sync{})
	transcript(t, r.until('Z'), "E[22P02] ZI")
	r.send(&pgproto3.Bind{PreparedStatement: "s2", Parameters: [][]byte{[]byte("99999999999")}}, &pgproto3.Sync{})
	transcript(t, r.until('Z'), "E[22003] ZI")

	// A failed block in the extended protocol: 25P02 until ROLLBACK.
	r.send(&pgproto3.Query{String: "begin; select 1/0"})
	transcript(t, r.until('Z'), "C[BEGIN] T[?column?:23/f0] E[22012] ZE")
	r.send(&pgproto3.Parse{Query: "select 1"}, &pgproto3.Sync{})
	transcript(t, r.until('Z'), "E[25P02] ZE")
	r.send(&pgproto3.Parse{Query: "rollback"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	transcript(t, r.until('Z'), "1 2 C[ROLLBACK] ZI")

	// Simple query: multi-statement with SHOW and the empty query.
	r.send(&pgproto3.Query{String: "show transaction isolation level; select 'a' as x"})
	transcript(t, r.until('Z'), "T[transaction_isolation:25/f0] D[read committed] C[SHOW] T[x:25/f0] D[a] C[SELECT 1] ZI")
	r.send(&pgproto3.Query{String: ""})
	transcript(t, r.until('Z'), "I ZI")
	r.send(&pgproto3.Query{String: "commit"})
	transcript(t, r.until('Z'), "N[25P01] C[COMMIT] ZI")
}

func TestEngineNoticesAndConnectionLimit(t *testing.T) {
	var notices []*pgconn.Notice
	cfg, err := pgconn.ParseConfig(gatewayConnString(""))
	if err != nil {
		t.Fatal(err)
	}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n) }
	c, err := pgconn.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if got := scalar(t, c, "select 1 /*notice*/"); got != "1" {
		t.Fatal(got)
	}
	if len(notices) != 1 || notices[0].Code != "01000" || notices[0].Severity != "WARNING" || !strings.HasPrefix(notices[0].Detail, "RS-2498 test.warning") {
		t.Errorf("notices: %+v", notices)
	}
	execOne(t, c, "set client_min_messages = error")
	notices = nil
	execOne(t, c, "select 1 /*notice*/; commit")
	if len(notices) != 0 {
		t.Errorf("client_min_messages = error let through %+v", notices)
	}

	addr := startServer(t, Options{MaxConnections: 1})
	first, err := pgconn.Connect(context.Background(), connTo(addr, "user=a sslmode=disable"))
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close(context.Background())
	_, err = pgconn.Connect(context.Background(), connTo(addr, "user=b sslmode=disable"))
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "53300" {
		t.Errorf("over the limit: %v", err)
	}
}

func TestNegotiateProtocolVersionAndIgnoreTillSync(t *testing.T) {
	nc, err := net.Dial("tcp", testAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	r := &rawConn{t: t, nc: nc, fe: pgproto3.NewFrontend(nc, nc)}
	r.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion32,
		Parameters: map[string]string{"user": "postgres", "database": "postgres", "_pq_.future": "1"}})
	got := r.until('Z')
	if got[0] != "v[196608 _pq_.future]" || got[1] != "R" || got[len(got)-2] != "K" {
		t.Errorf("startup: %v", got)
	}
	// An error is flushed at once even when the client sent only Flush
	// (asyncpg and postgres.js do), and Flush is honoured while skipping.
	r.send(&pgproto3.Parse{Name: "bad", Query: "select * from no_such_table"}, &pgproto3.Describe{ObjectType: 'S', Name: "bad"}, &pgproto3.Flush{})
	transcript(t, r.until('E'), "E[42P01]")
	r.send(&pgproto3.Sync{})
	transcript(t, r.until('Z'), "ZI")
	// A Query after an extended-protocol error is dropped until Sync.
	r.send(&pgproto3.Parse{Query: "select 1/0"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Query{String: "select 1"}, &pgproto3.Sync{})
	transcript(t, r.until('Z'), "1 2 E[22012] ZI")
}
