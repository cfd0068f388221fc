package gateway

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/errcode"
)

// startServer runs a gateway with opts on a fresh loopback port.
func startServer(t *testing.T, opts Options) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, testEngine, opts) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

func connTo(addr, extra string) string {
	host, port, _ := net.SplitHostPort(addr)
	return "host=" + host + " port=" + port + " dbname=postgres " + extra
}

func TestSCRAMAuth(t *testing.T) {
	addr := startServer(t, Options{Users: map[string]string{"alice": "s3cret"}})
	ctx := context.Background()
	c, err := pgconn.Connect(ctx, connTo(addr, "user=alice password=s3cret sslmode=disable"))
	if err != nil {
		t.Fatalf("SCRAM with the right password: %v", err)
	}
	if got := scalar(t, c, "select current_user"); got == "" {
		t.Error("no current_user")
	}
	c.Close(ctx)
	for _, extra := range []string{"user=alice password=wrong", "user=mallory password=s3cret", "user=alice"} {
		_, err := pgconn.Connect(ctx, connTo(addr, extra+" sslmode=disable"))
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "28P01" || pe.Severity != "FATAL" || !strings.HasPrefix(pe.Detail, "RS-2410") {
			t.Errorf("%s: want 28P01, got %v", extra, err)
		}
	}
}

func TestTrustLoopbackAndListenCheck(t *testing.T) {
	addr := startServer(t, Options{Users: map[string]string{"alice": "pw"}, TrustLoopback: true})
	c, err := pgconn.Connect(context.Background(), connTo(addr, "user=bob sslmode=disable"))
	if err != nil {
		t.Fatalf("trusted loopback: %v", err)
	}
	c.Close(context.Background())

	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = Serve(context.Background(), ln, testEngine, Options{})
	e, ok := errcode.As(err)
	if !ok || e.Code != errcode.ListenWithoutAuth {
		t.Fatalf("non-loopback without auth: %v", err)
	}
	opts := Options{AllowInsecureNonLoopback: true}
	if err := opts.CheckListenAddr(ln.Addr()); err != nil {
		t.Errorf("explicitly allowed: %v", err)
	}
}

func selfSignedTLS(t *testing.T) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

func TestTLSAndCleartext(t *testing.T) {
	addr := startServer(t, Options{Users: map[string]string{"alice": "pw"}, TLS: selfSignedTLS(t), AllowCleartextOverTLS: true})
	ctx := context.Background()
	c, err := pgconn.Connect(ctx, connTo(addr, "user=alice password=pw sslmode=require"))
	if err != nil {
		t.Fatalf("TLS + cleartext: %v", err)
	}
	if got := scalar(t, c, "select 1"); got != "1" {
		t.Error(got)
	}
	c.Close(ctx)
	// Without TLS the same server uses SCRAM, never cleartext.
	c, err = pgconn.Connect(ctx, connTo(addr, "user=alice password=pw sslmode=disable"))
	if err != nil {
		t.Fatalf("plain + SCRAM: %v", err)
	}
	c.Close(ctx)
	// A server without TLS answers SSLRequest 'N'; sslmode=require fails,
	// sslmode=prefer falls back.
	plain := startServer(t, Options{})
	if _, err := pgconn.Connect(ctx, connTo(plain, "user=x sslmode=require")); err == nil {
		t.Error("sslmode=require succeeded without TLS")
	}
	c, err = pgconn.Connect(ctx, connTo(plain, "user=x sslmode=prefer"))
	if err != nil {
		t.Fatalf("sslmode=prefer: %v", err)
	}
	c.Close(ctx)
}

// rolesOf builds a RoleSource with real verifiers for password "pw".
func rolesOf(t *testing.T, roles map[string]Role) usersSource {
	t.Helper()
	out := usersSource{}
	for name, r := range roles { //lint:maprange building a map
		v, err := NewSCRAMVerifier("pw")
		if err != nil {
			t.Fatal(err)
		}
		r.Verifier = v.String()
		out[name] = r
	}
	return out
}

func TestReservedSuperuserSlots(t *testing.T) {
	roles := rolesOf(t, map[string]Role{"su": {Superuser: true, Login: true}, "app": {Login: true}, "nologin": {}})
	addr := startServer(t, Options{Roles: roles, MaxConnections: 5, SuperuserReservedConnections: 3})
	ctx := context.Background()
	var open []*pgconn.PgConn
	defer func() {
		for _, c := range open {
			c.Close(ctx)
		}
	}()
	for i := 0; i < 2; i++ {
		c, err := pgconn.Connect(ctx, connTo(addr, "user=app password=pw sslmode=disable"))
		if err != nil {
			t.Fatalf("non-superuser %d within max_connections - reserved: %v", i, err)
		}
		open = append(open, c)
	}
	_, err := pgconn.Connect(ctx, connTo(addr, "user=app password=pw sslmode=disable"))
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "53300" || !strings.Contains(pe.Message, "reserved for non-replication superuser") {
		t.Fatalf("third non-superuser: want 53300 reserved, got %v", err)
	}
	for i := 0; i < 3; i++ {
		c, err := pgconn.Connect(ctx, connTo(addr, "user=su password=pw sslmode=disable"))
		if err != nil {
			t.Fatalf("superuser %d in a reserved slot: %v", i, err)
		}
		open = append(open, c)
	}
	_, err = pgconn.Connect(ctx, connTo(addr, "user=su password=pw sslmode=disable"))
	if !errors.As(err, &pe) || pe.Code != "53300" || pe.Message != "sorry, too many clients already" {
		t.Fatalf("superuser over max_connections: want 53300 too many clients, got %v", err)
	}
	// A role without LOGIN authenticates and is then refused (28000), as
	// in PostgreSQL; a wrong password for it still says 28P01. (On a
	// server of its own: the full one frees a slot only once it has seen
	// a close.)
	addr = startServer(t, Options{Roles: roles})
	_, err = pgconn.Connect(ctx, connTo(addr, "user=nologin password=pw sslmode=disable"))
	if !errors.As(err, &pe) || pe.Code != "28000" || pe.Message != `role "nologin" is not permitted to log in` {
		t.Fatalf("NOLOGIN role: want 28000, got %v", err)
	}
	_, err = pgconn.Connect(ctx, connTo(addr, "user=nologin password=bad sslmode=disable"))
	if !errors.As(err, &pe) || pe.Code != "28P01" {
		t.Fatalf("NOLOGIN role, wrong password: want 28P01, got %v", err)
	}
}

func TestSCRAMVerifierText(t *testing.T) {
	// A verifier PostgreSQL 15 stored for password 'pw' (SELECT rolpassword
	// FROM pg_authid after CREATE ROLE ... PASSWORD 'pw').
	const fromPG = "SCRAM-SHA-256$4096:bPWymv6++QWdaeFkRiqXnA==$STu4spgjntIWWi8+EuXeItcAJal42cjMtLLOh8O9ht8=:XXLgtujU3VnY740NNzLVBtx5b5sj32Sa1581H7pRelM="
	v, err := ParseSCRAMVerifier(fromPG)
	if err != nil {
		t.Fatal(err)
	}
	if v.String() != fromPG {
		t.Errorf("round trip: %s", v)
	}
	storedKey, serverKey := scramKeys("pw", v.Salt, v.Iterations)
	if string(storedKey) != string(v.StoredKey) || string(serverKey) != string(v.ServerKey) {
		t.Error("keys derived from 'pw' differ from PostgreSQL's verifier")
	}
	for _, bad := range []string{"", "pw", "SCRAM-SHA-256$", "SCRAM-SHA-256$0:AA==$AA==:AA==", "md5abc"} {
		if LooksLikeSCRAMVerifier(bad) {
			t.Errorf("%q accepted as a verifier", bad)
		}
	}
}
