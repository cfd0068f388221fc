package nexmark

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestGeneratorDeterministicAndProportions(t *testing.T) {
	g := Generator{Seed: 7}
	var a, b Batch
	a.Append(g, 0, 5000)
	// Batching must not change the stream.
	for i := int64(0); i < 5000; i += 333 {
		b.Append(g, i, min(i+333, 5000))
	}
	if !bytes.Equal(a.Bid, b.Bid) || !bytes.Equal(a.Person, b.Person) || !bytes.Equal(a.Auction, b.Auction) {
		t.Fatal("stream depends on batching")
	}
	if a.People != 100 || a.Auctions != 300 || a.Bids != 4600 {
		t.Fatalf("mix %d:%d:%d, want 100:300:4600", a.People, a.Auctions, a.Bids)
	}
}

func TestQueriesParseable(t *testing.T) {
	for _, q := range QueryNames() {
		s, err := QuerySQL(q)
		// q11 opts in to windows that never close: WITH (windows = ...).
		if err != nil || !regexp.MustCompile(`^CREATE MATERIALIZED VIEW `+q+`( WITH \([^)]*\))? AS `).MatchString(s) {
			t.Fatalf("%s: %q %v", q, s, err)
		}
		if _, ok := Blocked[q]; ok {
			t.Fatalf("%s both has SQL and is listed blocked", q)
		}
	}
}

// TestRunSmoke runs the command's whole code path (server, DDL, COPY,
// probes, CSV, SVG) on a tiny stream for a stateless, a windowed and a
// top-k query (TestQueriesMatchPostgres runs every query file).
func TestRunSmoke(t *testing.T) {
	out := t.TempDir()
	queries := []string{"q0", "q5", "q19"}
	res, err := Run(context.Background(), Options{Events: 3000, Batch: 1000, Probes: 3, Queries: queries, Out: out, StorageDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(queries) {
		t.Fatalf("%d results", len(res))
	}
	for _, r := range res {
		if r.EventsPerSec <= 0 || r.InputBytes <= 0 {
			t.Fatalf("%+v", r)
		}
	}
	for _, f := range []string{"nexmark.csv", "nexmark.svg"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil || len(b) == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
}

// TestRunSourceSmoke runs the command's --ingest=source path: the tables
// are NEXMARK sources inside the server.
func TestRunSourceSmoke(t *testing.T) {
	var progress bytes.Buffer
	res, err := Run(context.Background(), Options{Events: 3000, Queries: []string{"q1", "q19"}, Source: true, StorageDir: t.TempDir(), StateEvery: 1000, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	// --state-every: one line per 1000 events and query.
	if n := strings.Count(progress.String(), " rows, state "); n != 6 {
		t.Fatalf("%d state lines, want 6:\n%s", n, progress.String())
	}
	for _, r := range res {
		if r.EventsPerSec <= 0 || r.InputBytes <= 0 || r.StateBytes <= 0 {
			t.Fatalf("%+v", r)
		}
	}
}
