package gatewaytest

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	_ "github.com/lib/pq"
)

// The client matrix of issue 6: real PostgreSQL clients against a pgwire
// server. Each Check creates its own tables (all with primary keys), asserts
// results rather than "connected", and fails (never skips) with the install
// command when its client is missing:
//
//	apt-get install -y postgresql-client-15 postgresql-15 python3-psycopg2 \
//	    python3-psycopg python3-asyncpg python3-sqlalchemy libpostgresql-jdbc-java nodejs npm
//	npm install --prefix ~/.cache/rockstream-node pg@8 postgres@3
//
// Run them all with RunClients(t, server).

// Server is the pgwire server under test.
type Server struct {
	Host, Port     string
	User, Database string
	// Notices is set when the server sends NOTICEs like PostgreSQL (the
	// real engine; the protocol-test engine forwards none).
	Notices bool
	// Password is the user's password ("" for a trusting server); SSLMode
	// is the libpq sslmode every client uses ("": disable). A TLS server
	// with a self-signed certificate is tested with "require", which
	// encrypts without verifying the certificate in every client.
	Password, SSLMode string
}

func (s Server) sslMode() string {
	if s.SSLMode == "" {
		return "disable"
	}
	return s.SSLMode
}

// toolEnv is the environment of the libpq-based tools (psql, pgbench,
// psycopg, asyncpg): they take the password and sslmode from it.
func (s Server) toolEnv() []string {
	env := []string{"PGSSLMODE=" + s.sslMode()}
	if s.Password != "" {
		env = append(env, "PGPASSWORD="+s.Password)
	}
	return env
}

// URL is a postgres:// URL for the server.
func (s Server) URL() string {
	u := url.URL{Scheme: "postgres", User: url.User(s.User), Host: net.JoinHostPort(s.Host, s.Port), Path: "/" + s.Database, RawQuery: "sslmode=" + s.sslMode()}
	if s.Password != "" {
		u.User = url.UserPassword(s.User, s.Password)
	}
	return u.String()
}

// ConnString is a libpq key=value connection string plus extra settings.
func (s Server) ConnString(extra string) string {
	password := ""
	if s.Password != "" {
		password = "password='" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s.Password) + "' "
	}
	return "host=" + s.Host + " port=" + s.Port + " user=" + s.User + " dbname=" + s.Database + " sslmode=" + s.sslMode() + " " + password + extra
}

// jdbcParams are the pgjdbc URL parameters for user, password and sslmode.
func (s Server) jdbcParams() string {
	p := "user=" + url.QueryEscape(s.User) + "&sslmode=" + s.sslMode()
	if s.Password != "" {
		p += "&password=" + url.QueryEscape(s.Password)
	}
	return p
}

// nodeOptions are node-postgres / postgres.js connection options for the
// password and TLS (without certificate verification, as sslmode=require).
func (s Server) nodeOptions() string {
	opts := ""
	if s.Password != "" {
		quoted, _ := json.Marshal(s.Password)
		opts += ", password: " + string(quoted)
	}
	if s.SSLMode != "" && s.SSLMode != "disable" {
		opts += ", ssl: { rejectUnauthorized: false }"
	}
	return opts
}

func (s Server) connect(t testing.TB) *pgconn.PgConn {
	t.Helper()
	c, err := pgconn.Connect(context.Background(), s.ConnString(""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func (s Server) serverVersion(t testing.TB) string {
	return s.connect(t).ParameterStatus("server_version")
}

func execSQL(t testing.TB, c *pgconn.PgConn, sql string) {
	t.Helper()
	if _, err := c.Exec(context.Background(), sql).ReadAll(); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func scalarSQL(t testing.TB, c *pgconn.PgConn, sql string) string {
	t.Helper()
	res, err := c.Exec(context.Background(), sql).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	last := res[len(res)-1]
	if len(last.Rows) != 1 || len(last.Rows[0]) != 1 {
		t.Fatalf("%s: want one value, got %d rows", sql, len(last.Rows))
	}
	return string(last.Rows[0][0])
}

// Client is one entry of the matrix.
type Client struct {
	Name  string
	Check func(t testing.TB, s Server)
}

// Clients is the matrix, in the order RunClients runs them.
//
//lint:immutable a constant list.
var Clients = []Client{
	{"pgx", CheckPgx}, {"lib/pq", CheckLibPQ}, {"psql", CheckPsql}, {"pgbench", CheckPgbench},
	{"psycopg2", CheckPsycopg2}, {"psycopg3", CheckPsycopg3}, {"asyncpg", CheckAsyncpg}, {"SQLAlchemy", CheckSQLAlchemy},
	{"node-postgres", CheckNodePostgres}, {"postgres.js", CheckPostgresJS}, {"pgjdbc", CheckJDBC},
}

// RunClients runs every client as a parallel subtest and returns when all
// are done (so the caller may stop the server afterwards).
func RunClients(t *testing.T, s Server) {
	t.Run("clients", func(t *testing.T) {
		for _, c := range Clients {
			t.Run(c.Name, func(t *testing.T) {
				t.Parallel() // each client has its own tables; start-up dominates
				c.Check(t, s)
			})
		}
	})
}

func CheckPgx(t testing.TB, s Server) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `drop table if exists pgx_t; create table pgx_t(id int8 primary key, i2 int2, i4 int4, f4 float4, f8 float8,
		n numeric(12,3), b bool, s text, v varchar(10), by bytea, d date, ts timestamp, tz timestamptz, iv interval, u uuid, arr int8[], tarr text[])`); err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.UTC)
	uuid := [16]byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11}
	for i := 0; i < 3; i++ { // the statement cache reuses the prepared insert
		_, err := conn.Exec(ctx, `insert into pgx_t values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
			int64(9007199254740993+i), int16(-5), int32(7), float32(1.5), 0.1, "12345.678", true, "héllo", "short",
			[]byte{0, 1, 255}, time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), ts, ts, 90*time.Minute, uuid,
			[]int64{1, -2, 3}, []string{"a", "b c", ""})
		if err != nil {
			t.Fatalf("insert %d: %v", i, err)
		}
	}
	var (
		id    int64
		i2    int16
		i4    int32
		f4    float32
		f8    float64
		n     string
		b     bool
		str   string
		vc    string
		by    []byte
		d     time.Time
		tsOut time.Time
		tzOut time.Time
		iv    time.Duration
		u     [16]byte
		arr   []int64
		tarr  []string
	)
	for i := 0; i < 3; i++ {
		err = conn.QueryRow(ctx, `select id, i2, i4, f4, f8, n::text, b, s, v, by, d, ts, tz, iv, u, arr, tarr from pgx_t where id = $1`,
			int64(9007199254740993)).Scan(&id, &i2, &i4, &f4, &f8, &n, &b, &str, &vc, &by, &d, &tsOut, &tzOut, &iv, &u, &arr, &tarr)
		if err != nil {
			t.Fatalf("select %d: %v", i, err)
		}
	}
	if id != 9007199254740993 || i2 != -5 || i4 != 7 || f4 != 1.5 || f8 != 0.1 || n != "12345.678" || !b || str != "héllo" || vc != "short" ||
		string(by) != "\x00\x01\xff" || !d.Equal(time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)) || !tsOut.Equal(ts) || !tzOut.Equal(ts) ||
		iv != 90*time.Minute || u != uuid || len(arr) != 3 || arr[1] != -2 || len(tarr) != 3 || tarr[1] != "b c" || tarr[2] != "" {
		t.Errorf("round trip: %v %v %v %v %v %v %v %q %q %v %v %v %v %v %v %v %q", id, i2, i4, f4, f8, n, b, str, vc, by, d, tsOut, tzOut, iv, u, arr, tarr)
	}
	// Binary numeric and NULLs.
	var num pgtype.Numeric
	var nullText *string
	if err := conn.QueryRow(ctx, "select n, null::text from pgx_t where id = $1", int64(9007199254740994)).Scan(&num, &nullText); err != nil {
		t.Fatal(err)
	}
	if f, _ := num.Float64Value(); math.Abs(f.Float64-12345.678) > 1e-9 || nullText != nil {
		t.Errorf("numeric %v null %v", f, nullText)
	}
	// Every query execution mode.
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe,
		pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol} {
		var count int64
		if err := conn.QueryRow(ctx, "select count(*) from pgx_t where i4 = $1", mode, int32(7)).Scan(&count); err != nil || count != 3 {
			t.Errorf("mode %v: %d %v", mode, count, err)
		}
	}
	// Transactions through pgx.
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "delete from pgx_t"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	var count int64
	if err := conn.QueryRow(ctx, "select count(*) from pgx_t").Scan(&count); err != nil || count != 3 {
		t.Errorf("after rollback: %d %v", count, err)
	}
	// Binary COPY (pgx.CopyFrom) loads rows, NULLs included.
	loaded, err := conn.CopyFrom(ctx, pgx.Identifier{"pgx_t"}, []string{"id", "i4", "s"},
		pgx.CopyFromRows([][]any{{int64(-1), int32(7), "copied"}, {int64(-2), nil, nil}}))
	if err != nil || loaded != 2 {
		t.Errorf("binary COPY: %d rows, %v", loaded, err)
	}
	var copied string
	if err := conn.QueryRow(ctx, "select count(*)::text || ' ' || string_agg(coalesce(s, 'NULL'), ',' order by id) from pgx_t where id < 0").Scan(&copied); err != nil || copied != "2 NULL,copied" {
		t.Errorf("after binary COPY: %q %v", copied, err)
	}
	// A duplicate key in a binary COPY fails the whole COPY, as in PostgreSQL.
	_, err = conn.CopyFrom(ctx, pgx.Identifier{"pgx_t"}, []string{"id"}, pgx.CopyFromRows([][]any{{int64(-3)}, {int64(-1)}}))
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23505" {
		t.Errorf("binary COPY of a duplicate key: %v", err)
	}
}

func CheckLibPQ(t testing.TB, s Server) {
	t.Helper()
	db, err := sql.Open("postgres", s.ConnString("application_name=libpq-test"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("drop table if exists pq_t; create table pq_t(id int primary key, name text, amount numeric(10,2), ts timestamptz)"); err != nil {
		t.Fatal(err)
	}
	stmt, err := db.Prepare("insert into pq_t values ($1, $2, $3, $4)")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if _, err := stmt.Exec(i, "name"+string(rune('0'+i)), "1.50", time.Date(2024, 1, i, 0, 0, 0, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
	}
	stmt.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("insert into pq_t values (99, 'gone', 0, now())"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query("select id, name, amount, ts from pq_t where id > $1 order by id", 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var id int
		var name, amount string
		var ts time.Time
		if err := rows.Scan(&id, &name, &amount, &ts); err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Join([]string{name, amount, ts.UTC().Format("2006-01-02")}, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "name2|1.50|2024-01-02,name3|1.50|2024-01-03" {
		t.Errorf("lib/pq rows: %v", got)
	}
	var isolation string
	if err := db.QueryRow("show transaction isolation level").Scan(&isolation); err != nil || isolation != "read committed" {
		t.Errorf("SHOW: %q %v", isolation, err)
	}
	_, err = db.Exec("select * from missing_table")
	if err == nil || !strings.Contains(err.Error(), "missing_table") {
		t.Errorf("error through lib/pq: %v", err)
	}
}

// requireTool fails the test (never skips) when a client tool is missing.
func requireTool(t testing.TB, path, install string) {
	t.Helper()
	if _, err := exec.LookPath(path); err != nil {
		t.Fatalf("%s is not installed; install it with: %s", path, install)
	}
}

func runTool(t testing.TB, s Server, stdin string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	// Notices (DROP ... IF EXISTS) are not part of the expected output.
	cmd.Env = append(append(os.Environ(), "PGCONNECT_TIMEOUT=10", "PGOPTIONS=-c client_min_messages=warning"), s.toolEnv()...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

func (s Server) psqlArgs(extra ...string) []string {
	host, port := s.Host, s.Port
	return append([]string{"-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", host, "-p", port, "-U", s.User, "-d", s.Database}, extra...)
}

func CheckPsql(t testing.TB, s Server) {
	t.Helper()
	requireTool(t, "psql", "apt-get install -y postgresql-client-15")
	dir := t.TempDir()
	// Simple query with several statements in one -c, and server_version
	// accepted without a warning.
	out := runTool(t, s, "", "psql", s.psqlArgs("-c", "select 1 as a; select 'two' as b")...)
	if strings.TrimSpace(out) != "1\ntwo" {
		t.Errorf("multi-statement -c: %q", out)
	}
	// A script with a transaction, SET/SHOW and an error-free COPY.
	script := `drop table if exists psql_t;
create table psql_t(id int primary key, name text, amount numeric(8,2));
begin;
insert into psql_t values (1, 'one', 1.5);
insert into psql_t values (2, 'two', NULL);
commit;
set extra_float_digits = 3;
show extra_float_digits;
\copy psql_t from '` + filepath.Join(dir, "in.csv") + `' with (format csv, header)
\copy psql_t from stdin
10	ten	10.10
11	eleven	\N
\.
select count(*), sum(amount) from psql_t;
\copy (select id, name from psql_t where id >= 10 order by id) to stdout with csv
`
	if err := os.WriteFile(filepath.Join(dir, "in.csv"), []byte("id,name,amount\n3,\"th,ree\",3\n4,,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "script.sql"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out = runTool(t, s, "", "psql", s.psqlArgs("-f", filepath.Join(dir, "script.sql"))...)
	want := "3\n6|14.60\n10,ten\n11,eleven\n"
	if out != want {
		t.Errorf("psql script output:\n%q\nwant\n%q", out, want)
	}
	// A failing statement reports SQLSTATE, RS code and hint.
	cmd := exec.Command("psql", s.psqlArgs("-v", "VERBOSITY=verbose", "-c", "begin isolation level serializable")...)
	cmd.Env = append(os.Environ(), s.toolEnv()...)
	errOut, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(errOut), "0A000") || !strings.Contains(string(errOut), "RS-2003") || !strings.Contains(string(errOut), "HINT") {
		t.Errorf("psql error output: %v\n%s", err, errOut)
	}
	// pg_isready.
	host, port := s.Host, s.Port
	if out := runTool(t, s, "", "/usr/lib/postgresql/15/bin/pg_isready", "-h", host, "-p", port); !strings.Contains(out, "accepting connections") {
		t.Errorf("pg_isready: %q", out)
	}
}

const pythonInstall = "apt-get install -y python3-psycopg2 python3-psycopg python3-asyncpg python3-sqlalchemy"

func runPython(t testing.TB, s Server, module, script string) string {
	t.Helper()
	const python = "/usr/bin/python3"
	if out, err := exec.Command(python, "-c", "import "+module).CombinedOutput(); err != nil {
		t.Fatalf("python module %s is missing (%s); install it with: %s", module, strings.TrimSpace(string(out)), pythonInstall)
	}
	cmd := exec.Command(python, "-c", script)
	host, port := s.Host, s.Port
	cmd.Env = append(append(os.Environ(), "GW_HOST="+host, "GW_PORT="+port, "GW_USER="+s.User, "GW_DB="+s.Database), s.toolEnv()...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python %s: %v\n%s", module, err, out)
	}
	return strings.TrimSpace(string(out))
}

func CheckPsycopg2(t testing.TB, s Server) {
	t.Helper()
	out := runPython(t, s, "psycopg2", `
import os, psycopg2, decimal, datetime
c = psycopg2.connect(host=os.environ["GW_HOST"], port=os.environ["GW_PORT"], user=os.environ["GW_USER"], dbname=os.environ["GW_DB"])
cur = c.cursor()
cur.execute("drop table if exists py2_t; create table py2_t(id int primary key, name text, amount numeric(10,2), ts timestamptz)")
cur.execute("insert into py2_t values (%s, %s, %s, %s)", (1, "o'brien", decimal.Decimal("2.50"), datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)))
c.commit()
cur.execute("select id, name, amount, ts from py2_t where id = %s", (1,))
r = cur.fetchone()
assert r[0] == 1 and r[1] == "o'brien" and r[2] == decimal.Decimal("2.50"), r
assert r[3] == datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc), r[3]
cur.execute("insert into py2_t values (2, 'rolled back', 0, now())")
c.rollback()
cur.execute("select count(*) from py2_t")
assert cur.fetchone()[0] == 1
try:
    cur.execute("select 1/0")
except psycopg2.Error as e:
    assert e.pgcode == "22012", e.pgcode
    c.rollback()
# SQL-level prepared statements (psycopg2 interpolates on the client side).
cur.execute("prepare py2_q (int) as select name from py2_t where id = $1")
cur.execute("execute py2_q (%s)", (1,))
assert cur.fetchone()[0] == "o'brien"
cur.execute("deallocate all")
try:
    cur.execute("execute py2_q (1)")
except psycopg2.Error as e:
    assert e.pgcode == "26000", e.pgcode
    c.rollback()
cur.execute("show transaction isolation level")
print("OK", cur.fetchone()[0])
`)
	if out != "OK read committed" {
		t.Errorf("psycopg2: %q", out)
	}
}

func CheckPsycopg3(t testing.TB, s Server) {
	t.Helper()
	out := runPython(t, s, "psycopg", `
import os, psycopg, decimal, datetime
with psycopg.connect(host=os.environ["GW_HOST"], port=os.environ["GW_PORT"], user=os.environ["GW_USER"], dbname=os.environ["GW_DB"]) as c:
    c.execute("drop table if exists py3_t")
    c.execute("create table py3_t(id int8 primary key, n numeric(10,3), ts timestamptz, tags text[], b bytea)")
    for i in range(3):
        c.execute("insert into py3_t values (%s, %s, %s, %s, %s)", (i, decimal.Decimal("1.125") * i, datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc), ["x", str(i)], bytes([i, 255])))
    c.commit()
    for binary in (False, True):
        cur = c.cursor(binary=binary)
        cur.execute("select id, n, ts, tags, b from py3_t where id > %s order by id", (0,))
        rows = cur.fetchall()
        assert rows[0][0] == 1 and rows[1][1] == decimal.Decimal("2.250"), rows
        assert rows[1][2] == datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc), rows[1][2]
        assert rows[1][3] == ["x", "2"] and rows[1][4] == bytes([2, 255]), rows[1]
    with c.cursor().copy("copy py3_t (id) from stdin") as cp:
        cp.write_row((10,))
        cp.write_row((11,))
    c.commit()
    out = []
    with c.cursor().copy("copy (select id from py3_t where id >= 10 order by id) to stdout") as cp:
        for row in cp.rows():
            out.append(row[0])
    assert out == ["10", "11"], out
    # Nested transactions are savepoints: the inner block's failure undoes
    # only its own rows.
    with c.transaction():
        c.execute("insert into py3_t (id) values (20)")
        try:
            with c.transaction():
                c.execute("insert into py3_t (id) values (21)")
                c.execute("insert into py3_t (id) values (20)")
            raise AssertionError("duplicate key accepted")
        except psycopg.errors.UniqueViolation:
            pass
        with c.transaction():
            c.execute("insert into py3_t (id) values (22)")
        # A failed COPY inside a savepoint undoes only its own rows.
        try:
            with c.transaction():
                with c.cursor().copy("copy py3_t (id) from stdin") as cp:
                    cp.write_row((23,))
                    cp.write_row((20,))
            raise AssertionError("duplicate key accepted by COPY")
        except psycopg.errors.UniqueViolation:
            pass
    ids = [r[0] for r in c.execute("select id from py3_t where id >= 20 order by id").fetchall()]
    assert ids == [20, 22], ids
    c.execute("delete from py3_t where id >= 20")
    c.commit()
    print("OK", c.execute("select count(*) from py3_t").fetchone()[0])
`)
	if out != "OK 5" {
		t.Errorf("psycopg 3: %q", out)
	}
}

func CheckAsyncpg(t testing.TB, s Server) {
	t.Helper()
	out := runPython(t, s, "asyncpg", `
import os, asyncio, asyncpg, decimal, datetime, uuid
async def main():
    c = await asyncpg.connect(host=os.environ["GW_HOST"], port=int(os.environ["GW_PORT"]), user=os.environ["GW_USER"], database=os.environ["GW_DB"])
    await c.execute("drop table if exists apg_t; create table apg_t(id int4 primary key, n numeric, ts timestamp, u uuid, arr int8[], iv interval)")
    u = uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
    await c.executemany("insert into apg_t values ($1, $2, $3, $4, $5, $6)", [
        (i, decimal.Decimal("-0.0005") * i, datetime.datetime(2000, 1, 1) + datetime.timedelta(days=i), u, [i, None, -i], datetime.timedelta(days=i, seconds=1.5)) for i in range(1, 4)])
    rows = await c.fetch("select * from apg_t where id = any($1::int4[]) order by id", [2, 3])
    assert [r["id"] for r in rows] == [2, 3], rows
    assert rows[0]["n"] == decimal.Decimal("-0.0010"), rows[0]["n"]
    assert rows[0]["ts"] == datetime.datetime(2000, 1, 3), rows[0]["ts"]
    assert rows[0]["u"] == u and rows[0]["arr"] == [2, None, -2], rows[0]
    assert rows[0]["iv"] == datetime.timedelta(days=2, seconds=1.5), rows[0]["iv"]
    async with c.transaction():
        await c.execute("delete from apg_t where id = 1")
    try:
        async with c.transaction(isolation="serializable"):
            pass
    except asyncpg.PostgresError as e:
        assert e.sqlstate == "0A000", e.sqlstate
    print("OK", await c.fetchval("select count(*) from apg_t"))
    await c.close()
asyncio.run(main())
`)
	if out != "OK 2" {
		t.Errorf("asyncpg: %q", out)
	}
}

// nodeModules is where the node-postgres test finds the `pg` package.
func nodeModules() string {
	if d := os.Getenv("ROCKSTREAM_NODE_MODULES"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "rockstream-node", "node_modules")
}

func CheckNodePostgres(t testing.TB, s Server) {
	t.Helper()
	requireTool(t, "node", "apt-get install -y nodejs npm")
	mods := nodeModules()
	if _, err := os.Stat(filepath.Join(mods, "pg")); err != nil {
		t.Fatalf("node-postgres is not installed in %s; install it with: npm install --prefix %s pg@8", mods, filepath.Dir(mods))
	}
	host, port := s.Host, s.Port
	script := `
const { Client } = require('pg');
(async () => {
  const c = new Client({ host: '` + host + `', port: ` + port + `, user: '` + s.User + `', database: '` + s.Database + `'` + s.nodeOptions() + ` });
  await c.connect();
  await c.query('drop table if exists node_t; create table node_t(id int primary key, name text, tags text[])');
  for (let i = 1; i <= 3; i++) await c.query({ name: 'ins', text: 'insert into node_t values ($1, $2, $3)', values: [i, 'n' + i, ['a', String(i)]] });
  const r = await c.query('select id, name, tags from node_t where id >= $1 order by id', [2]);
  if (r.rows.length !== 2 || r.rows[0].name !== 'n2' || r.rows[1].tags[1] !== '3') throw new Error(JSON.stringify(r.rows));
  const s = await c.query('select count(*)::int as n from node_t');
  console.log('OK', s.rows[0].n, r.command, r.rowCount);
  await c.end();
})().catch(e => { console.error(e); process.exit(1); });
`
	cmd := exec.Command("node", "-e", script)
	cmd.Env = append(os.Environ(), "NODE_PATH="+mods)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node-postgres: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "OK 3 SELECT 2" {
		t.Errorf("node-postgres: %q", got)
	}
}

func CheckPgbench(t testing.TB, s Server) {
	t.Helper()
	const pgbench = "/usr/lib/postgresql/15/bin/pgbench"
	requireTool(t, pgbench, "apt-get install -y postgresql-15")
	c := s.connect(t)
	execSQL(t, c, "drop table if exists bench_t; create table bench_t(id int primary key, n int8); insert into bench_t select g, 0 from generate_series(1, 10) g")
	dir := t.TempDir()
	script := "\\set id random(1, 10)\nupdate bench_t set n = n + 1 where id = :id;\nselect n from bench_t where id = :id;\n"
	if err := os.WriteFile(filepath.Join(dir, "bench.sql"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	host, port := s.Host, s.Port
	for _, mode := range []string{"simple", "extended", "prepared"} {
		out := runTool(t, s, "", pgbench, "-n", "-h", host, "-p", port, "-U", s.User, "-M", mode, "-t", "20", "-c", "2", "-f", filepath.Join(dir, "bench.sql"), s.Database)
		if !strings.Contains(out, "number of transactions actually processed: 40/40") || !strings.Contains(out, "number of failed transactions: 0") {
			t.Errorf("pgbench -M %s:\n%s", mode, out)
		}
	}
	if got := scalarSQL(t, c, "select sum(n) from bench_t"); got != "120" {
		t.Errorf("updates applied: %s", got)
	}
}

func CheckPostgresJS(t testing.TB, s Server) {
	t.Helper()
	requireTool(t, "node", "apt-get install -y nodejs npm")
	mods := nodeModules()
	if _, err := os.Stat(filepath.Join(mods, "postgres")); err != nil {
		t.Fatalf("postgres.js is not installed in %s; install it with: npm install --prefix %s postgres@3", mods, filepath.Dir(mods))
	}
	host, port := s.Host, s.Port
	script := `
const postgres = require('postgres');
(async () => {
  const notices = [];
  const sql = postgres({ host: '` + host + `', port: ` + port + `, user: '` + s.User + `', database: '` + s.Database + `'` + s.nodeOptions() + `, max: 1,
    onnotice: n => notices.push(n.severity + ' ' + n.code + ' ' + n.message) });
  await sql` + "`drop table if exists pjs_t`" + `;
  await sql` + "`drop table if exists pjs_t`" + `;
  // The second DROP finds no table: PostgreSQL's NOTICE reaches onnotice
  // (not stdout). The protocol-test engine forwards no notices.
  if (notices.some(n => n !== 'NOTICE 00000 table "pjs_t" does not exist, skipping')) throw new Error(JSON.stringify(notices));
  console.log('NOTICES', notices.length > 0);
  await sql` + "`create table pjs_t(id int primary key, name text, ids int[])`" + `;
  for (const i of [1, 2, 3]) await sql` + "`insert into pjs_t values (${i}, ${'n' + i}, ${[i, i + 1]})`" + `;
  const rows = await sql` + "`select id, name, ids from pjs_t where id > ${1} order by id`" + `;
  if (rows.length !== 2 || rows[0].name !== 'n2' || rows[1].ids[1] !== 4) throw new Error(JSON.stringify(rows));
  await sql.begin(async tx => { await tx` + "`delete from pjs_t where id = 1`" + `; });
  const [{ n }] = await sql` + "`select count(*)::int as n from pjs_t`" + `;
  console.log('OK', n);
  await sql.end();
})().catch(e => { console.error(e); process.exit(1); });
`
	cmd := exec.Command("node", "-e", script)
	cmd.Env = append(os.Environ(), "NODE_PATH="+mods)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("postgres.js: %v\n%s", err, out)
	}
	want := fmt.Sprintf("NOTICES %v\nOK 2", s.Notices)
	if got := strings.TrimSpace(string(out)); got != want {
		t.Errorf("postgres.js: %q", got)
	}
}

func CheckSQLAlchemy(t testing.TB, s Server) {
	t.Helper()
	c := s.connect(t)
	execSQL(t, c, `drop materialized view if exists sa_mv; drop view if exists sa_v; drop table if exists sa_t; drop table if exists sa_pk2;
		create table sa_t(id int primary key, name text not null); create view sa_v as select id from sa_t;
		create table sa_pk2(a int, b int, c int, primary key (c, a));
		drop table if exists sa_ident; create table sa_ident(id int generated always as identity (start with 5 increment by 2) primary key, s serial not null, v text);
		create materialized view sa_mv as select count(*) as n from sa_t`)
	out := runPython(t, s, "sqlalchemy", `
import os, sqlalchemy as sa
e = sa.create_engine("postgresql+psycopg2://%s@%s:%s/%s" % (os.environ["GW_USER"], os.environ["GW_HOST"], os.environ["GW_PORT"], os.environ["GW_DB"]))
insp = sa.inspect(e)
assert "sa_t" in insp.get_table_names(), insp.get_table_names()
assert "sa_v" in insp.get_view_names(), insp.get_view_names()
assert "sa_mv" in insp.get_view_names(include=("materialized",)), insp.get_view_names(include=("materialized",))
cols = {c["name"]: c for c in insp.get_columns("sa_t")}
assert str(cols["id"]["type"]) == "INTEGER" and cols["name"]["nullable"] is False, cols
assert insp.get_pk_constraint("sa_t")["constrained_columns"] == ["id"]
# Identity options of an identity column; a serial column is not one.
ic = {c["name"]: c for c in insp.get_columns("sa_ident")}
assert ic["id"].get("identity") == {"always": True, "start": 5, "increment": 2, "minvalue": 1, "maxvalue": 2147483647, "cache": 1, "cycle": False}, ic["id"]
assert "identity" not in ic["s"] and "identity" not in ic["v"], ic
# A composite key in key order (unnest/generate_subscripts in the SELECT list).
assert insp.get_pk_constraint("sa_pk2")["constrained_columns"] == ["c", "a"], insp.get_pk_constraint("sa_pk2")
with e.connect() as conn:
    # begin_nested() is SAVEPOINT / ROLLBACK TO / RELEASE.
    with conn.begin():
        conn.execute(sa.text("insert into sa_t values (1, 'kept')"))
        sp = conn.begin_nested()
        conn.execute(sa.text("insert into sa_t values (2, 'undone')"))
        sp.rollback()
        with conn.begin_nested():
            conn.execute(sa.text("insert into sa_t values (3, 'released')"))
    print("OK", conn.execute(sa.text("select string_agg(name, ',' order by id) from sa_t")).scalar())
`)
	if out != "OK kept,released" {
		t.Errorf("SQLAlchemy: %q", out)
	}
}

func CheckJDBC(t testing.TB, s Server) {
	t.Helper()
	requireTool(t, "java", "apt-get install -y default-jdk-headless")
	const jar = "/usr/share/java/postgresql.jar"
	if _, err := os.Stat(jar); err != nil {
		t.Fatalf("pgjdbc is not installed; install it with: apt-get install -y libpostgresql-jdbc-java")
	}
	host, port := s.Host, s.Port
	dir := t.TempDir()
	src := `import java.sql.*;
public class JdbcCheck {
  public static void main(String[] a) throws Exception {
    Connection c = DriverManager.getConnection("jdbc:postgresql://` + host + `:` + port + `/` + s.Database + `?` + s.jdbcParams() + `");
    Statement s = c.createStatement();
    s.execute("drop table if exists jdbc_t");
    s.execute("create table jdbc_t(id int primary key, name text, amount numeric(10,2))");
    PreparedStatement ins = c.prepareStatement("insert into jdbc_t values (?, ?, ?)");
    for (int i = 1; i <= 6; i++) { ins.setInt(1, i); ins.setString(2, "n" + i); ins.setBigDecimal(3, new java.math.BigDecimal(i + ".25")); ins.executeUpdate(); }
    PreparedStatement q = c.prepareStatement("select id, name, amount from jdbc_t where id = ?");
    for (int i = 1; i <= 6; i++) {   // binary transfer after prepareThreshold (5)
      q.setInt(1, i);
      ResultSet rs = q.executeQuery();
      if (!rs.next() || rs.getInt(1) != i || !rs.getString(2).equals("n" + i) || rs.getBigDecimal(3).compareTo(new java.math.BigDecimal(i + ".25")) != 0) throw new Exception("row " + i);
    }
    // ResultSetMetaData reads the RowDescription's table OID and attnum.
    ResultSetMetaData rmd = c.createStatement().executeQuery("select id, name, amount + 1 as a from jdbc_t").getMetaData();
    org.postgresql.PGResultSetMetaData rm = rmd.unwrap(org.postgresql.PGResultSetMetaData.class);
    if (!rm.getBaseTableName(2).equals("jdbc_t") || !rm.getBaseColumnName(2).equals("name") || !rm.getBaseTableName(3).equals("")
        || !rmd.getTableName(1).equals("jdbc_t") || rmd.isNullable(1) != ResultSetMetaData.columnNoNulls || rmd.isNullable(2) != ResultSetMetaData.columnNullable)
      throw new Exception("ResultSetMetaData: " + rm.getBaseTableName(2) + "." + rm.getBaseColumnName(2) + " [" + rm.getBaseTableName(3) + "] " + rmd.isNullable(1) + rmd.isNullable(2));
    c.setAutoCommit(false);
    s.execute("delete from jdbc_t");
    c.rollback();
    c.setAutoCommit(true);
    c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
    DatabaseMetaData md = c.getMetaData();
    ResultSet t = md.getTables(null, "public", "jdbc_t", null);
    if (!t.next()) throw new Exception("getTables");
    ResultSet cols = md.getColumns(null, "public", "jdbc_t", null);
    int n = 0; while (cols.next()) n++;
    ResultSet pk = md.getPrimaryKeys(null, "public", "jdbc_t");
    if (!pk.next() || !pk.getString("COLUMN_NAME").equals("id")) throw new Exception("getPrimaryKeys");
    // A composite key comes back in key order, numbered.
    s.execute("drop table if exists jdbc_pk2");
    s.execute("create table jdbc_pk2(a int, b int, c int, primary key (c, a))");
    ResultSet pk2 = md.getPrimaryKeys(null, "public", "jdbc_pk2");
    String keys = "";
    while (pk2.next()) keys += pk2.getString("COLUMN_NAME") + pk2.getInt("KEY_SEQ") + ";";
    if (!keys.equals("c1;a2;")) throw new Exception("getPrimaryKeys composite: " + keys);
    // autosave=always: a failed statement inside a transaction rolls back
    // to the driver's savepoint and the transaction goes on; plus the
    // java.sql.Savepoint API.
    Connection c2 = DriverManager.getConnection("jdbc:postgresql://` + host + `:` + port + `/` + s.Database + `?` + s.jdbcParams() + `&autosave=always");
    c2.createStatement().execute("drop table if exists jdbc_sp");
    c2.createStatement().execute("create table jdbc_sp(id int primary key)");
    c2.setAutoCommit(false);
    c2.createStatement().execute("insert into jdbc_sp values (1)");
    try { c2.createStatement().execute("insert into jdbc_sp values (1)"); throw new Exception("duplicate accepted"); }
    catch (SQLException e) { if (!"23505".equals(e.getSQLState())) throw e; }
    c2.createStatement().execute("insert into jdbc_sp values (2)");
    Savepoint sp = c2.setSavepoint("before3");
    c2.createStatement().execute("insert into jdbc_sp values (3)");
    c2.rollback(sp);
    c2.commit();
    ResultSet spr = c2.createStatement().executeQuery("select string_agg(id::text, ',' order by id) from jdbc_sp");
    if (!spr.next() || !spr.getString(1).equals("1,2")) throw new Exception("savepoints: " + spr.getString(1));
    c2.close();
    ResultSet cnt = c.createStatement().executeQuery("select count(*) from jdbc_t");
    cnt.next();
    System.out.println("OK " + n + " " + cnt.getInt(1) + " " + md.getDatabaseProductVersion());
  }
}`
	if err := os.WriteFile(filepath.Join(dir, "JdbcCheck.java"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := strings.TrimSpace(runTool(t, s, "", "java", "-cp", jar, filepath.Join(dir, "JdbcCheck.java")))
	if out != "OK 3 6 "+s.serverVersion(t) {
		t.Errorf("pgjdbc: %q", out)
	}
}
