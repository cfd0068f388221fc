package clients_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/engine"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/gateway/gatewaytest"
)

const bootstrapPassword = "boot-Pw'1"

// writeSelfSignedCert writes a PEM certificate and key for 127.0.0.1.
func writeSelfSignedCert(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// startAuthServer runs `rockstream start --auth=password` (with opts' TLS
// files and bootstrap password) on storage; stop ends it. metrics is the
// /metrics URL.
func startAuthServer(t *testing.T, storage string, opts engine.ServerOptions) (s gatewaytest.Server, metrics string, stop func()) {
	t.Helper()
	opts.Storage, opts.Auth, opts.HTTP = storage, engine.AuthPassword, "127.0.0.1:0"
	host, port, httpAddr, stop := serve(t, opts)
	return gatewaytest.Server{Host: host, Port: port, User: "rockstream", Database: "default", Notices: true,
		Password: bootstrapPassword, SSLMode: "require"}, "http://" + httpAddr + "/metrics", stop
}

func wantPgError(t *testing.T, what string, err error, code, message string) {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != code || (message != "" && pe.Message != message) {
		t.Errorf("%s: want %s %q, got %v", what, code, message, err)
	}
}

// TestClientsPasswordTLS is the client matrix with --auth=password over
// TLS, then authentication failures, roles and privileges, the reserved
// superuser slots and a restart that keeps the roles.
func TestClientsPasswordTLS(t *testing.T) {
	certFile, keyFile := writeSelfSignedCert(t)
	storage := t.TempDir()
	base := engine.ServerOptions{TLSCertFile: certFile, TLSKeyFile: keyFile, BootstrapPassword: bootstrapPassword,
		Gateway: gateway.Options{MaxConnections: 8}}
	s, metrics, stop := startAuthServer(t, storage, base)
	ctx := context.Background()

	t.Run("matrix", func(t *testing.T) {
		for _, cl := range gatewaytest.Clients {
			t.Run(cl.Name, func(t *testing.T) {
				t.Parallel()
				cl.Check(t, s)
			})
		}
	})

	t.Run("authentication", func(t *testing.T) {
		bad := s
		bad.Password = "wrong"
		_, err := pgconn.Connect(ctx, bad.ConnString(""))
		wantPgError(t, "wrong password", err, "28P01", `password authentication failed for user "rockstream"`)
		bad = s
		bad.User = "nosuchuser"
		_, err = pgconn.Connect(ctx, bad.ConnString(""))
		wantPgError(t, "unknown user", err, "28P01", `password authentication failed for user "nosuchuser"`)
		bad = s
		bad.Password = ""
		_, err = pgconn.Connect(ctx, bad.ConnString(""))
		if err == nil {
			t.Error("no password: connected")
		}
		// Without TLS the server still authenticates with SCRAM (never
		// cleartext), so a client that does not ask for TLS still works.
		plain := s
		plain.SSLMode = "disable"
		c, err := pgconn.Connect(ctx, plain.ConnString(""))
		if err != nil {
			t.Fatalf("SCRAM without TLS: %v", err)
		}
		c.Close(ctx)
		// sslmode=require gives an encrypted connection.
		c = connect(t, s)
		if _, ok := c.Conn().(*tls.Conn); !ok {
			t.Errorf("sslmode=require: the connection is %T, not TLS", c.Conn())
		}
		if got := scalar(t, c, "SELECT current_user"); got != "rockstream" {
			t.Errorf("current_user: %s", got)
		}
	})

	t.Run("metrics", func(t *testing.T) {
		// /metrics asks for a role's password; /healthz stays open.
		for _, tc := range []struct {
			user, password string
			status         int
		}{{"", "", http.StatusUnauthorized}, {"rockstream", "wrong", http.StatusUnauthorized}, {"nosuch", bootstrapPassword, http.StatusUnauthorized}, {"rockstream", bootstrapPassword, http.StatusOK}} {
			req, err := http.NewRequest("GET", metrics, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.user != "" {
				req.SetBasicAuth(tc.user, tc.password)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("/metrics as %q/%q: status %d, want %d", tc.user, tc.password, resp.StatusCode, tc.status)
			}
		}
		resp, err := http.Get(strings.TrimSuffix(metrics, "/metrics") + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("/healthz: %d", resp.StatusCode)
		}
	})

	admin := connect(t, s)
	execAll(t, admin, `CREATE TABLE acct (id int PRIMARY KEY, owner text, balance int);
		INSERT INTO acct VALUES (1, 'a', 10), (2, 'b', 20);
		CREATE TABLE other (id int PRIMARY KEY);
		CREATE VIEW acct_v AS SELECT id, balance FROM acct;
		CREATE MATERIALIZED VIEW acct_sum AS SELECT sum(balance) AS total FROM acct`)
	execAll(t, admin, `CREATE ROLE app WITH LOGIN PASSWORD 'app-pw'; CREATE USER viewer PASSWORD 'SCRAM-SHA-256$4096:bPWymv6++QWdaeFkRiqXnA==$STu4spgjntIWWi8+EuXeItcAJal42cjMtLLOh8O9ht8=:XXLgtujU3VnY740NNzLVBtx5b5sj32Sa1581H7pRelM='`)
	app := s
	app.User, app.Password = "app", "app-pw"
	// viewer's password was given pre-hashed (PostgreSQL 15's verifier
	// for 'pw'): stored as it is, so 'pw' logs in.
	viewer := s
	viewer.User, viewer.Password = "viewer", "pw"

	t.Run("roles", func(t *testing.T) {
		_, err := admin.Exec(ctx, "CREATE ROLE app").ReadAll()
		wantPgError(t, "duplicate role", err, "42710", `role "app" already exists`)
		_, err = admin.Exec(ctx, "ALTER ROLE nosuch PASSWORD 'x'").ReadAll()
		wantPgError(t, "alter unknown", err, "42704", `role "nosuch" does not exist`)
		_, err = admin.Exec(ctx, "DROP ROLE nosuch").ReadAll()
		wantPgError(t, "drop unknown", err, "42704", `role "nosuch" does not exist`)
		execAll(t, admin, "DROP ROLE IF EXISTS nosuch")
		_, err = admin.Exec(ctx, "CREATE ROLE pg_foo").ReadAll()
		wantPgError(t, "reserved name", err, "42939", `role name "pg_foo" is reserved`)
		_, err = admin.Exec(ctx, "DROP ROLE rockstream").ReadAll()
		wantPgError(t, "drop current user", err, "55006", "current user cannot be dropped")
		if got := scalar(t, admin, "SELECT string_agg(rolname || ':' || rolsuper || ':' || rolcanlogin, ',' ORDER BY rolname) FROM pg_roles"); got != "app:false:true,rockstream:true:true,viewer:false:true" {
			t.Errorf("pg_roles: %s", got)
		}
		if got := scalar(t, admin, "SELECT rolpassword FROM pg_authid WHERE rolname = 'viewer'"); !strings.HasPrefix(got, "SCRAM-SHA-256$4096:bPWymv6") {
			t.Errorf("pg_authid keeps the verifier: %s", got)
		}
		if got := scalar(t, admin, "SELECT count(*) FROM pg_authid WHERE rolpassword LIKE '%app-pw%'"); got != "0" {
			t.Error("a password is stored in clear")
		}
		// psql's \du.
		contains(t, `\du`, psqlAs(t, s, `\du`), "app | | {}", "viewer | | {}",
			"rockstream | Superuser, Create role, Create DB, Replication, Bypass RLS | {}")
		v := connect(t, viewer)
		if got := scalar(t, v, "SELECT current_user"); got != "viewer" {
			t.Errorf("viewer: %s", got)
		}
		// Only superusers manage roles.
		for _, q := range []struct{ sql, msg string }{
			{"CREATE ROLE x", "permission denied to create role"},
			{"ALTER ROLE app SUPERUSER", "permission denied"},
			{"DROP ROLE app", "permission denied to drop role"},
			{"GRANT SELECT ON acct TO viewer", "permission denied for table acct"},
		} {
			_, err := v.Exec(ctx, q.sql).ReadAll()
			wantPgError(t, q.sql, err, "42501", q.msg)
		}
		_, err = v.Exec(ctx, "SELECT * FROM pg_authid").ReadAll()
		wantPgError(t, "pg_authid", err, "42501", "permission denied for table pg_authid")
		if got := scalar(t, v, "SELECT count(*) FROM pg_roles"); got != "3" {
			t.Errorf("pg_roles for a non-superuser: %s", got)
		}
	})

	t.Run("signal backends", func(t *testing.T) {
		a, v := connect(t, app), connect(t, viewer)
		pid := func(c *pgconn.PgConn) string { return scalar(t, c, "SELECT pg_backend_pid()") }
		appPid, adminPid := pid(a), pid(admin)
		for _, q := range []struct{ sql, msg string }{
			{"SELECT pg_cancel_backend(" + appPid + ")", "must be a member of the role whose query is being canceled or member of pg_signal_backend"},
			{"SELECT pg_terminate_backend(" + appPid + ")", "must be a member of the role whose process is being terminated or member of pg_signal_backend"},
			{"SELECT pg_cancel_backend(" + adminPid + ")", "must be a superuser to cancel superuser query"},
			{"SELECT pg_terminate_backend(" + adminPid + ")", "must be a superuser to terminate superuser process"},
		} {
			_, err := v.Exec(ctx, q.sql).ReadAll()
			wantPgError(t, q.sql, err, "42501", q.msg)
		}
		if got := scalar(t, v, "SELECT query FROM pg_stat_activity WHERE pid = "+adminPid); got != "<insufficient privilege>" {
			t.Errorf("another role's statement shown to viewer: %q", got)
		}
		// Its own session: the statement cancels itself, as in PostgreSQL.
		_, err := v.Exec(ctx, "SELECT pg_cancel_backend(pg_backend_pid())").ReadAll()
		wantPgError(t, "canceling its own statement", err, "57014", "canceling statement due to user request")
		if got := scalar(t, admin, "SELECT pg_terminate_backend("+appPid+")"); got != "t" {
			t.Errorf("a superuser terminating another role's session: %s", got)
		}
	})

	t.Run("privileges", func(t *testing.T) {
		c := connect(t, app)
		denied := func(sql, msg string) {
			t.Helper()
			// Bounded: a SUBSCRIBE that is wrongly allowed never ends.
			sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			_, err := c.Exec(sctx, sql).ReadAll()
			wantPgError(t, sql, err, "42501", msg)
			if sctx.Err() != nil {
				t.Fatalf("%s: did not finish", sql)
			}
		}
		allowed := func(sql string) {
			t.Helper()
			if _, err := c.Exec(ctx, sql).ReadAll(); err != nil {
				t.Errorf("%s: %v", sql, err)
			}
		}
		denied("SELECT * FROM acct", "permission denied for table acct")
		denied("SELECT * FROM acct_v", "permission denied for view acct_v")
		denied("SELECT * FROM acct_sum", "permission denied for materialized view acct_sum")
		denied("SELECT (SELECT count(*) FROM acct)", "permission denied for table acct")
		denied("WITH x AS (SELECT * FROM acct) SELECT * FROM x", "permission denied for table acct")
		denied("INSERT INTO acct VALUES (3, 'c', 30)", "permission denied for table acct")
		denied("UPDATE acct SET balance = 0", "permission denied for table acct")
		denied("DELETE FROM acct", "permission denied for table acct")
		denied("TRUNCATE acct", "permission denied for table acct")
		denied("CREATE TABLE mine (id int PRIMARY KEY)", "permission denied for schema public")
		denied("DROP TABLE acct", "must be owner of table acct")
		denied("SUBSCRIBE TO acct_sum", "permission denied for materialized view acct_sum")
		_, err := c.CopyTo(ctx, io.Discard, "COPY acct TO STDOUT")
		wantPgError(t, "COPY TO", err, "42501", "permission denied for table acct")
		_, err = c.CopyFrom(ctx, strings.NewReader("3\tc\t30\n"), "COPY acct FROM STDIN")
		wantPgError(t, "COPY FROM", err, "42501", "permission denied for table acct")
		// System catalogs stay readable.
		allowed("SELECT count(*) FROM pg_class")

		execAll(t, admin, "GRANT SELECT ON acct_v, acct_sum TO app")
		// A view is readable with SELECT on the view alone.
		allowed("SELECT * FROM acct_v")
		allowed("SELECT * FROM acct_sum")
		denied("SELECT * FROM acct", "permission denied for table acct")
		denied("SELECT * FROM acct_v JOIN acct USING (id)", "permission denied for table acct")

		execAll(t, admin, "GRANT INSERT ON TABLE acct TO app")
		allowed("INSERT INTO acct VALUES (3, 'c', 30)")
		if _, err := c.CopyFrom(ctx, strings.NewReader("4\td\t40\n"), "COPY acct FROM STDIN"); err != nil {
			t.Errorf("COPY FROM with INSERT: %v", err)
		}
		denied("INSERT INTO acct VALUES (5, 'e', 50) RETURNING id", "permission denied for table acct")
		// INSERT ... SELECT needs SELECT on the source.
		denied("INSERT INTO acct SELECT id + 100, 'x', 0 FROM other", "permission denied for table other")
		// UPDATE with a WHERE reads the table: UPDATE alone is not enough.
		execAll(t, admin, "GRANT UPDATE ON acct TO app")
		allowed("UPDATE acct SET balance = 0")
		denied("UPDATE acct SET balance = 1 WHERE id = 1", "permission denied for table acct")
		denied("UPDATE acct SET balance = balance + 1", "permission denied for table acct")
		execAll(t, admin, "GRANT SELECT, DELETE ON acct TO app")
		allowed("UPDATE acct SET balance = 1 WHERE id = 1")
		allowed("DELETE FROM acct WHERE id = 4")
		if _, err := c.CopyTo(ctx, io.Discard, "COPY acct TO STDOUT"); err != nil {
			t.Errorf("COPY TO with SELECT: %v", err)
		}
		denied("UPDATE acct SET balance = 2 FROM other WHERE other.id = acct.id", "permission denied for table other")
		denied("DELETE FROM acct USING other WHERE other.id = acct.id", "permission denied for table other")
		if got := scalar(t, c, "SELECT count(*) FROM acct"); got != "3" {
			t.Errorf("rows: %s", got)
		}
		// A role with privileges cannot be dropped (2BP01), as in PostgreSQL.
		_, err = admin.Exec(ctx, "DROP ROLE app").ReadAll()
		wantPgError(t, "drop role with privileges", err, "2BP01", `role "app" cannot be dropped because some objects depend on it`)
		// REVOKE applies to the next statement of a live session.
		execAll(t, admin, "REVOKE ALL ON acct FROM app")
		denied("SELECT * FROM acct", "permission denied for table acct")
		denied("INSERT INTO acct VALUES (6, 'f', 60)", "permission denied for table acct")
		// NOLOGIN: the next connection is refused.
		execAll(t, admin, "ALTER ROLE app NOLOGIN")
		_, err = pgconn.Connect(ctx, app.ConnString(""))
		wantPgError(t, "NOLOGIN", err, "28000", `role "app" is not permitted to log in`)
		execAll(t, admin, "ALTER ROLE app LOGIN PASSWORD 'new-pw'")
		_, err = pgconn.Connect(ctx, app.ConnString(""))
		wantPgError(t, "old password", err, "28P01", `password authentication failed for user "app"`)
	})

	t.Run("reserved-slots", func(t *testing.T) {
		// max_connections 8, 3 reserved: with the admin connection open,
		// four more non-superusers fill the unreserved slots.
		var open []*pgconn.PgConn
		defer func() {
			for _, c := range open {
				c.Close(ctx)
			}
		}()
		for i := 0; ; i++ {
			c, err := pgconn.Connect(ctx, viewer.ConnString(""))
			if err != nil {
				wantPgError(t, "non-superuser beyond the unreserved slots", err, "53300", "remaining connection slots are reserved for non-replication superuser connections")
				if i == 0 || i > 8 {
					t.Fatalf("refused after %d connections", i)
				}
				break
			}
			open = append(open, c)
		}
		su := connect(t, s)
		if got := scalar(t, su, "SELECT 1"); got != "1" {
			t.Error(got)
		}
	})

	// A restart keeps the roles; the bootstrap password is needed only
	// on the first start.
	stop()
	restarted := base
	restarted.BootstrapPassword = ""
	s2, _, _ := startAuthServer(t, storage, restarted)
	app2 := s2
	app2.User, app2.Password = "app", "new-pw"
	if got := scalar(t, connect(t, app2), "SELECT current_user"); got != "app" {
		t.Errorf("after restart: %s", got)
	}
	c := connect(t, s2)
	if got := scalar(t, c, "SELECT count(*) FROM pg_roles"); got != "3" {
		t.Errorf("roles after restart: %s", got)
	}
}

// psqlAs runs one meta-command with psql as s's user over s's sslmode.
func psqlAs(t *testing.T, s gatewaytest.Server, cmd string) string {
	t.Helper()
	c := exec.Command("psql", "-X", "-v", "ON_ERROR_STOP=1", "-h", s.Host, "-p", s.Port, "-U", s.User, "-d", s.Database, "-c", cmd)
	c.Env = append(os.Environ(), "PGPASSWORD="+s.Password, "PGSSLMODE="+s.SSLMode)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("psql %s: %v\n%s", cmd, err, out)
	}
	return string(out)
}

// TestStartRefusals: the options that must stop `rockstream start` before
// it opens anything.
func TestStartRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts engine.ServerOptions
		code *errcode.Code
	}{
		{"trust on a non-loopback pgwire address", engine.ServerOptions{Listen: "0.0.0.0:0"}, errcode.ListenWithoutAuth},
		{"trust on a non-loopback HTTP address", engine.ServerOptions{Listen: "127.0.0.1:0", HTTP: ":0"}, errcode.ListenWithoutAuth},
		{"unknown auth", engine.ServerOptions{Listen: "127.0.0.1:0", Auth: "md5"}, errcode.InvalidConfiguration},
		{"cert without key", engine.ServerOptions{Listen: "127.0.0.1:0", TLSCertFile: "x.crt"}, errcode.InvalidConfiguration},
		{"first password start without a password", engine.ServerOptions{Listen: "127.0.0.1:0", Auth: engine.AuthPassword}, errcode.BootstrapPasswordMissing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.Storage = t.TempDir()
			opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			opts.Out = io.Discard
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			err := engine.Serve(ctx, opts)
			if e, ok := errcode.As(err); !ok || e.Code != tc.code {
				t.Fatalf("want %s, got %v", tc.code.ID, err)
			}
		})
	}
}
