package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestStartPasswordAuth runs the binary with --auth=password and the
// bootstrap password from --password-file: the role rockstream logs in with
// it and nothing else does; a trusting server refuses a non-loopback
// address for pgwire and for HTTP.
func TestStartPasswordAuth(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte("file-secret\nignored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProcess(t, bin, filepath.Join(dir, "data"), "--auth=password", "--password-file="+pwFile)
	defer p.kill9()
	ctx := context.Background()
	withPassword := func(password string) string {
		return strings.Replace(p.url, "postgres://rockstream@", "postgres://rockstream:"+password+"@", 1)
	}
	c, err := pgconn.Connect(ctx, withPassword("file-secret"))
	if err != nil {
		t.Fatalf("the bootstrap password from --password-file: %v", err)
	}
	c.Close(ctx)
	for _, url := range []string{withPassword("wrong"), p.url, strings.Replace(p.url, "rockstream@", "nosuchuser:file-secret@", 1)} {
		_, err := pgconn.Connect(ctx, url)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "28P01" {
			t.Errorf("%s: want 28P01, got %v", url, err)
		}
	}

	for _, args := range [][]string{{"--listen=0.0.0.0:0", "--http="}, {"--listen=127.0.0.1:0", "--http=0.0.0.0:0"}} {
		out, err := exec.Command(bin, append([]string{"start", "--storage=" + filepath.Join(dir, "trust")}, args...)...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "RS-2412") {
			t.Errorf("trust with %v: want a refusal naming RS-2412, got %v\n%s", args, err, out)
		}
	}
}
