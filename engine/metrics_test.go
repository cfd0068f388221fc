package engine_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/engine"
)

// TestMetricsAndHealth: /healthz, /readyz and /metrics answer, and metrics
// carry per-view and object-store numbers.
func TestMetricsAndHealth(t *testing.T) {
	a := serveHTTP(t)
	rs := connect(t, "postgres://rockstream@"+a.pg+"/default?sslmode=disable")
	exec(t, rs, "CREATE TABLE m (id int PRIMARY KEY, g int)")
	exec(t, rs, "CREATE MATERIALIZED VIEW mg AS SELECT g, count(*) FROM m GROUP BY g")
	exec(t, rs, "INSERT INTO m VALUES (1, 1), (2, 1), (3, 2)")
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + a.http + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Fatalf("/healthz %d", code)
	}
	if code, _ := get("/readyz"); code != 200 {
		t.Fatalf("/readyz %d", code)
	}
	_, metrics := get("/metrics")
	for _, want := range []string{
		`rockstream_view_rows{view="mg"} 2`,
		`rockstream_commits_total 1`,
		`rockstream_object_store_requests_total{object="wal",op="put_if_absent"}`,
		`rockstream_view_freshness_lag_epochs{view="mg"} 0`,
		"rockstream_view_rebuilds_total 0\n",
		"go_goroutines ",
		"go_memstats_heap_alloc_bytes ",
		"process_resident_memory_bytes ",
		"process_cpu_seconds_total ",
	} {
		if !strings.Contains(metrics, want) {
			t.Fatalf("/metrics lacks %q", want)
		}
	}
	// Profiles are served on the loopback listener.
	if code, body := get("/debug/pprof/"); code != 200 || !strings.Contains(body, "goroutine") {
		t.Fatalf("/debug/pprof/ on loopback: %d", code)
	}
	// A healthy server's not-found probes and lost conditional-write races
	// are answers, not store errors.
	if i := strings.Index(metrics, "rockstream_object_store_errors_total{"); i >= 0 {
		t.Fatalf("a healthy server reports object-store errors: %s", metrics[i:i+120])
	}
}

// TestMetricsOverShards: each shard's epochs and the exchange's backlog and
// frames in flight are on /metrics, and they agree once a view read waited
// for every commit.
func TestMetricsOverShards(t *testing.T) {
	a := serveHTTPShards(t, 2)
	rs := connect(t, "postgres://rockstream@"+a.pg+"/default?sslmode=disable")
	exec(t, rs, "CREATE TABLE m (id int PRIMARY KEY, g int)")
	exec(t, rs, "CREATE MATERIALIZED VIEW mg AS SELECT g, count(*) FROM m GROUP BY g")
	for i := range 5 {
		exec(t, rs, fmt.Sprintf("INSERT INTO m VALUES (%d, %d)", i, i%2))
	}
	if got := rowsText(t, rs, "SELECT count(*) FROM mg"); fmt.Sprint(got) != "[2]" {
		t.Fatalf("mg has %v groups", got)
	}
	resp, err := http.Get("http://" + a.http + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	metrics := string(body)
	value := func(series string) string {
		t.Helper()
		i := strings.Index(metrics, series+" ")
		if i < 0 {
			t.Fatalf("/metrics lacks %s", series)
		}
		line := metrics[i+len(series)+1:]
		return line[:strings.IndexByte(line, '\n')]
	}
	last := value(`rockstream_shard_epoch{epoch="last",shard="0"}`)
	if last == "0" {
		t.Fatal("the table shard reports no epochs after five commits")
	}
	// The view read waited for every commit: the view shard has them all.
	if got := value(`rockstream_shard_epoch{epoch="last",shard="1"}`); got != last {
		t.Fatalf("view shard's last epoch %s, table shard's %s", got, last)
	}
	if got := value(`rockstream_shard_epoch{epoch="frontier",shard="1"}`); got != last {
		t.Fatalf("view shard's frontier %s, table shard's last epoch %s", got, last)
	}
	value(`rockstream_exchange_unacked_epochs{from="0",to="1"}`)
	value(`rockstream_exchange_frames_in_flight{from="0",to="1"}`)
	value(`rockstream_exchange_bytes_in_flight{from="0",to="1"}`)
	value(`rockstream_exchange_taken_bytes{shard="1"}`)
	if credit, err := strconv.Atoi(value(`rockstream_exchange_credit_frames{from="0",to="1"}`)); err != nil || credit < 0 || credit > 4 {
		t.Fatalf("exchange credit %d frames (%v), want 0 to 4", credit, err)
	}
	// Each shard handled the commits, the exchange and the reads.
	for _, s := range []string{"shard/0", "shard/1"} {
		if busy := value(`rockstream_actor_busy_seconds_total{actor="` + s + `"}`); busy == "0" {
			t.Fatalf("%s was never busy", s)
		}
		value(`rockstream_actor_store_seconds_total{actor="` + s + `"}`)
	}
}

// httpServer is a server with its HTTP endpoints (/metrics, /readyz).
type httpServer struct{ pg, http string }

// serveHTTP starts a server with its HTTP listener, stopped when the test
// ends.
func serveHTTP(t *testing.T) httpServer {
	t.Helper()
	return serveHTTPShards(t, 0)
}

// serveHTTPShards is serveHTTP over a new store of shards shards.
func serveHTTPShards(t *testing.T, shards int) httpServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan httpServer, 1)
	done := make(chan error, 1)
	// NB: the directory before the stop's cleanup, which then runs first
	// (a TempDir made in the goroutine was removed under the server).
	dir := t.TempDir()
	go func() {
		done <- engine.Serve(ctx, engine.ServerOptions{
			Storage: dir, Listen: "127.0.0.1:0", HTTP: "127.0.0.1:0", Shards: shards,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Out: io.Discard,
			Ready: func(pg, h string) { ready <- httpServer{pg, h} },
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case a := <-ready:
		return a
	case err := <-done:
		t.Fatalf("server did not start: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("server did not start")
	}
	return httpServer{}
}
