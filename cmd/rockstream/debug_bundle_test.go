package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/engine"
)

// TestDebugBundle: `rockstream debug bundle` writes a .tar.gz with the
// server's config, settings, catalog, status, operator statistics,
// metrics and recent log lines, and none of its rows.
func TestDebugBundle(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	type addrs struct{ pg, http string }
	ready := make(chan addrs, 1)
	done := make(chan error, 1)
	dir := t.TempDir() // before the stop's cleanup, which then runs first
	go func() {
		done <- engine.Serve(ctx, engine.ServerOptions{
			Storage: dir, Listen: "127.0.0.1:0", HTTP: "127.0.0.1:0",
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Out: io.Discard,
			Ready: func(pg, h string) { ready <- addrs{pg, h} },
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	var a addrs
	select {
	case a = <-ready:
	case err := <-done:
		t.Fatalf("server did not start: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("server did not start")
	}
	pgURL := "postgres://rockstream@" + a.pg + "/default?sslmode=disable"
	conn, err := pgx.Connect(context.Background(), pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	// The row values are distinctive: the bundle must not contain them.
	for _, sql := range []string{
		"CREATE TABLE orders (id int PRIMARY KEY, customer text)",
		"CREATE MATERIALIZED VIEW by_customer AS SELECT customer, count(*) FROM orders GROUP BY customer",
		"INSERT INTO orders VALUES (1, 'zanzibar-customer-7781'), (2, 'zanzibar-customer-7781'), (3, 'quixotic-customer-4410')",
		"SELECT * FROM by_customer",
	} {
		if _, err := conn.Exec(context.Background(), sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}

	out := filepath.Join(t.TempDir(), "bundle.tar.gz")
	cmd := newRootCommand()
	var stdout bytes.Buffer
	cmd.SetOut(&stdout)
	cmd.SetArgs([]string{"debug", "bundle", "--url", pgURL, "--http", a.http, "--out", out})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("debug bundle: %v", err)
	}
	if !strings.Contains(stdout.String(), out) {
		t.Fatalf("debug bundle said %q, not where it wrote", stdout.String())
	}
	files := readBundle(t, out)
	for name, want := range map[string]string{
		"MANIFEST.txt":                               "catalog/views.tsv",
		"config.json":                                `"Listen": "127.0.0.1:0"`,
		"settings.tsv":                               "server_version",
		"catalog/tables.tsv":                         "orders",
		"catalog/views.tsv":                          "by_customer",
		"status/views.tsv":                           "freshness_met",
		"status/sessions.tsv":                        "backend_start",
		"views/view-by_customer/explain.txt":         "SCAN  orders",
		"views/view-by_customer/explain_analyze.txt": "rows in 3",
		"metrics.txt":                                `rockstream_view_rows{view="by_customer"} 2`,
		"logs.txt":                                   "opening storage",
	} {
		got, ok := files[name]
		if !ok {
			t.Errorf("the bundle has no %s (it has %v)", name, keys(files))
			continue
		}
		if !strings.Contains(got, want) {
			t.Errorf("%s lacks %q:\n%s", name, want, got)
		}
	}
	for name, text := range files {
		if strings.HasSuffix(name, ".error") {
			t.Errorf("part %s could not be collected: %s", name, text)
		}
		for _, row := range []string{"zanzibar-customer-7781", "quixotic-customer-4410"} {
			if strings.Contains(text, row) {
				t.Errorf("%s contains the row value %q", name, row)
			}
		}
	}
	// An existing file is not overwritten.
	cmd = newRootCommand()
	cmd.SetOut(io.Discard)
	cmd.SetArgs([]string{"debug", "bundle", "--url", pgURL, "--http", a.http, "--out", out})
	if err := cmd.Execute(); err == nil || !os.IsExist(unwrapAll(err)) {
		t.Errorf("a second bundle to the same file: %v, want it refused", err)
	}
}

// unwrapAll is err's innermost error.
func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return err
		}
		err = u.Unwrap()
	}
}

// readBundle returns a bundle's files by their name under
// rockstream-bundle/.
func readBundle(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		name, ok := strings.CutPrefix(h.Name, "rockstream-bundle/")
		if !ok {
			t.Fatalf("bundle entry %q is outside rockstream-bundle/", h.Name)
		}
		out[name] = string(data)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
