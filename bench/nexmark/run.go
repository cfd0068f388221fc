package nexmark

import (
	"bytes"
	"cmp"
	"context"
	"embed"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/bench/internal/benchutil"
	"github.com/rockstream/rockstream/engine"
)

//go:embed queries/*.sql
var queryFS embed.FS

// QueryNames lists the queries with a SQL file, in numeric order.
func QueryNames() []string {
	ents, _ := queryFS.ReadDir("queries")
	var names []string
	for _, e := range ents {
		names = append(names, strings.TrimSuffix(e.Name(), ".sql"))
	}
	sort.Slice(names, func(i, j int) bool {
		a, _ := strconv.Atoi(names[i][1:])
		b, _ := strconv.Atoi(names[j][1:])
		return a < b
	})
	return names
}

// CopyOnly reports whether query q runs only with COPY ingestion: it
// reads bid's p_time (TablesFor), which the NEXMARK sources do not have.
func CopyOnly(q string) bool {
	view, err := QuerySQL(q)
	return err == nil && strings.Contains(view, "p_time")
}

// QuerySQL returns the CREATE MATERIALIZED VIEW statement of query q: a
// query of the suite, or a file whose name ends in .sql holding one (its
// view named as the file, without .sql: QueryName).
func QuerySQL(q string) (string, error) {
	read := func() ([]byte, error) { return queryFS.ReadFile("queries/" + q + ".sql") }
	if strings.HasSuffix(q, ".sql") {
		read = func() ([]byte, error) { return os.ReadFile(q) }
	}
	b, err := read()
	if err != nil {
		if why, ok := Blocked[q]; ok {
			return "", fmt.Errorf("nexmark %s is not runnable yet: %s", q, why)
		}
		return "", fmt.Errorf("unknown nexmark query %q (have %s)", q, strings.Join(QueryNames(), ","))
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "--") && strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n"), nil
}

// Options configures a run.
type Options struct {
	Events     int64    // events per query
	Queries    []string // each runs alone on a fresh server
	Out        string   // CSV and SVG go here ("" : none)
	Batch      int64    // events per COPY round (default 20,000)
	Probes     int      // commit→visible samples after the throughput phase (default 50)
	Seed       uint64
	Mode       TimeMode
	Progress   io.Writer // progress lines (nil: none)
	StorageDir string    // parent for the per-query storage dirs ("" : system temp)
	// Source feeds the tables from CREATE SOURCE … FROM NEXMARK inside the
	// server (at Rate events/s, default 10M: as fast as commits go)
	// instead of COPY over pgwire; there are no freshness probes then.
	Source bool
	Rate   int64
	// Shards lays RockStream's store out over this many shards (0: one).
	Shards int
	// PartitionTables partitions the tables over the first half of the
	// shards (rockstream start --partition-tables).
	PartitionTables bool
	// ExchangeStages: engine.Config.ExchangeStages (experimental).
	ExchangeStages bool
	// Watermark, when set (an interval such as "4 seconds"), declares the
	// bid table WITH (watermark = 'date_time - interval ...'): late bids
	// are dropped and windowed aggregates over date_time forget closed
	// windows (docs/sql.md); with Source, the bid source's watermark
	// option.
	Watermark string
	// StateEvery, when positive, prints the query view's rows, state
	// rows and state bytes (rockstream_catalog.views) to Progress every
	// StateEvery events.
	StateEvery int64
	// Explain, when set, prints EXPLAIN ANALYZE INCREMENTAL of the query's
	// view to Progress after the run: each operator's rows and time.
	Explain bool
}

// Result is one query's measurements.
type Result struct {
	Query            string
	Events           int64
	Elapsed          time.Duration
	EventsPerSec     float64
	EventsPerSecCore float64
	CPUSeconds       float64
	// DriverCPUSeconds is the part of CPUSeconds the event generator
	// (the benchmark's driver, not RockStream) spent making the COPY text.
	DriverCPUSeconds   float64
	P50, P99           time.Duration
	PeakRSS            int64
	StateBytes         int64
	InputBytes         int64
	StorageBytes       int64
	WriteBytes         int64
	StoragePerLogical  float64
	WritesPerLogical   float64
	GeneratorEventsSec float64
	// Busy is the wall time each actor spent handling messages during the
	// throughput phase (benchutil.Server.ActorBusy), by actor.
	Busy map[string]benchutil.ActorTime
}

// Run runs every query of o and writes results.csv and events_per_core.svg
// into o.Out.
func Run(ctx context.Context, o Options) ([]Result, error) {
	if o.Batch <= 0 {
		o.Batch = 20_000
	}
	if o.Probes <= 0 {
		o.Probes = 50
	}
	if len(o.Queries) == 0 {
		o.Queries = []string{"q0", "q1", "q2"}
	}
	var res []Result
	for _, q := range o.Queries {
		r, err := runOne(ctx, o, q)
		if err != nil {
			return res, fmt.Errorf("%s: %w", q, err)
		}
		res = append(res, r)
	}
	if o.Out != "" {
		if err := writeOut(o.Out, res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// GeneratorRate measures the generator alone (events/s on one goroutine).
func GeneratorRate(g Generator, n int64) float64 {
	var b Batch
	start := time.Now()
	for i := int64(0); i < n; i += 10_000 {
		b.Reset()
		b.Append(g, i, min(i+10_000, n))
	}
	return float64(n) / time.Since(start).Seconds()
}

// QueryName is the view name of query q (a suite query, or a .sql file).
func QueryName(q string) string { return strings.TrimSuffix(filepath.Base(q), ".sql") }

func runOne(ctx context.Context, o Options, q string) (Result, error) {
	r := Result{Query: QueryName(q), Events: o.Events}
	view, err := QuerySQL(q)
	if err != nil {
		return r, err
	}
	q = QueryName(q)
	dir, err := os.MkdirTemp(o.StorageDir, "rockstream-nexmark-"+q+"-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	srv, err := benchutil.StartServerWith(dir, engine.ServerOptions{Shards: o.Shards, PartitionTables: o.PartitionTables, ExchangeStages: o.ExchangeStages})
	if err != nil {
		return r, err
	}
	defer srv.Stop()
	w, err := pgx.Connect(ctx, srv.URL)
	if err != nil {
		return r, err
	}
	defer w.Close(ctx)
	rd, err := pgx.Connect(ctx, srv.URL)
	if err != nil {
		return r, err
	}
	defer rd.Close(ctx)
	if _, err := rd.Exec(ctx, "SET rockstream.session_wait_for = off"); err != nil {
		return r, err
	}
	if o.Source {
		return runSource(ctx, o, q, view, w, rd, dir, r)
	}
	tables := append([]string{}, TablesFor(view)...)
	if o.Watermark != "" {
		opt := fmt.Sprintf("watermark = 'date_time - interval ''%s'''", strings.ReplaceAll(o.Watermark, "'", ""))
		for i, s := range tables {
			if strings.HasPrefix(s, "CREATE TABLE bid (") {
				tables[i] = strings.Replace(s, "WITH (insert_only = true)", "WITH ("+opt+")", 1)
			}
		}
	}
	stmts := append(append(tables, SetupFor(view)...), view,
		// The freshness probe: a one-row count over bid, maintained in the
		// same pipeline as the query's view.
		"CREATE MATERIALIZED VIEW nexmark_probe AS SELECT count(*) AS n FROM bid")
	for _, s := range stmts {
		if _, err := w.Exec(ctx, s); err != nil {
			return r, fmt.Errorf("%s: %w", s, err)
		}
	}
	g := Generator{Seed: o.Seed, Mode: o.Mode}
	copyIn := func(b *Batch) error {
		for _, t := range []struct {
			name string
			data []byte
		}{{"person", b.Person}, {"auction", b.Auction}, {"bid", b.Bid}} {
			if len(t.data) == 0 {
				continue
			}
			if _, err := w.PgConn().CopyFrom(ctx, bytes.NewReader(t.data), CopySQL(t.name)); err != nil {
				return fmt.Errorf("COPY %s: %w", t.name, err)
			}
		}
		return nil
	}
	probe := func(want int64) error {
		for {
			var n int64
			if err := rd.QueryRow(ctx, "SELECT coalesce(max(n), 0) FROM nexmark_probe").Scan(&n); err != nil {
				return err
			}
			if n >= want {
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	runtime.GC()
	benchutil.ResetPeakRSS()
	w0, cpu0 := benchutil.WriteBytes(), benchutil.CPUSeconds()
	busy0, err := srv.ActorBusy()
	if err != nil {
		return r, err
	}
	var bids int64
	start := time.Now()
	lastProgress := start
	// The driver generates the next batch while the server ingests this
	// one, so the measurement is of RockStream, not of the generator (it
	// was a tenth of the run's CPU, serialized with every COPY).
	batches, genCPU, stopGen := generate(g, o.Events, o.Batch)
	defer stopGen()
	nextState := o.StateEvery
	for n := int64(0); n < o.Events; n += o.Batch {
		b := <-batches
		r.InputBytes += int64(b.Bytes())
		bids += int64(b.Bids)
		if err := copyIn(b); err != nil {
			return r, err
		}
		if done := n + o.Batch; o.Progress != nil && o.StateEvery > 0 && done >= nextState {
			nextState += o.StateEvery
			if err := probe(bids); err != nil {
				return r, err
			}
			if err := printState(ctx, o.Progress, rd, q, done, time.Since(start)); err != nil {
				return r, err
			}
		}
		if o.Progress != nil && (time.Since(lastProgress) > 500*time.Millisecond || n+o.Batch >= o.Events) {
			lastProgress = time.Now()
			done := min(n+o.Batch, o.Events)
			fmt.Fprintf(o.Progress, "\r%s %s %d/%d events  %.0f ev/s   ", q, bar(done, o.Events), done, o.Events,
				float64(done)/time.Since(start).Seconds())
		}
	}
	// Throughput counts until the views reflect every event.
	if err := probe(bids); err != nil {
		return r, err
	}
	if o.Shards > 1 {
		// The probe may run on another view shard than the query's view
		// (placed on the view shard running the fewest, or spread): a
		// read of the view waits until its shards have every commit.
		var n int64
		if err := rd.QueryRow(ctx, "SELECT count(*) FROM "+q).Scan(&n); err != nil {
			return r, err
		}
	}
	r.Elapsed = time.Since(start)
	r.CPUSeconds = benchutil.CPUSeconds() - cpu0
	busy1, err := srv.ActorBusy()
	if err != nil {
		return r, err
	}
	r.Busy = map[string]benchutil.ActorTime{}
	for actor, d := range busy1 { //lint:maprange filled into a map keyed the same way
		r.Busy[actor] = benchutil.ActorTime{Busy: d.Busy - busy0[actor].Busy, Store: d.Store - busy0[actor].Store}
	}
	r.DriverCPUSeconds = genCPU()
	r.EventsPerSec = float64(o.Events) / r.Elapsed.Seconds()
	r.EventsPerSecCore = r.EventsPerSec / float64(runtime.GOMAXPROCS(0))
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "\r%s done: %d events in %.2fs, %.0f ev/s (%.0f ev/s/core); measuring freshness\n",
			q, o.Events, r.Elapsed.Seconds(), r.EventsPerSec, r.EventsPerSecCore)
	}
	// Freshness: small commits (one probe round of 100 events each), each
	// timed from the COPY's acknowledgement to the probe view showing it.
	var lat []time.Duration
	var b Batch
	next := o.Events
	for i := 0; i < o.Probes; i++ {
		b.Reset()
		b.Append(g, next, next+100)
		next += 100
		r.InputBytes += int64(b.Bytes())
		bids += int64(b.Bids)
		if err := copyIn(&b); err != nil {
			return r, err
		}
		t := time.Now()
		if err := probe(bids); err != nil {
			return r, err
		}
		lat = append(lat, time.Since(t))
	}
	r.P50, r.P99 = benchutil.Percentile(lat, 0.5), benchutil.Percentile(lat, 0.99)
	if err := finish(ctx, w, dir, w0, &r); err != nil {
		return r, err
	}
	return r, explain(ctx, o, rd, q)
}

// generate produces the COPY batches of events [0, events) in order on its
// own goroutine, at most two ahead of the consumer; stop ends it early.
//
// cpu returns the CPU time the generator has used so far (its own OS
// thread's, RUSAGE_THREAD), so results can leave the driver out.
func generate(g Generator, events, batch int64) (batches <-chan *Batch, cpu func() float64, stop func()) {
	out := make(chan *Batch, 1)
	done := make(chan struct{})
	var used atomic.Int64 // nanoseconds
	go func() {
		defer close(out)
		// NB: the goroutine keeps its thread, so the thread's CPU time is
		// the generator's (blocked on the channel it uses none).
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		// Three buffers in rotation (one being sent, one queued, one being
		// filled), so their capacity is reused: regrowing a fresh batch's
		// buffers cost a third of the generator's time.
		var bufs [3]Batch
		for i, n := 0, int64(0); n < events; i, n = i+1, n+batch {
			b := &bufs[i%len(bufs)]
			b.Reset()
			t0 := threadCPU()
			b.Append(g, n, min(n+batch, events))
			used.Add(threadCPU() - t0)
			select {
			case out <- b:
			case <-done:
				return
			}
		}
	}()
	return out, func() float64 { return float64(used.Load()) / 1e9 }, func() { close(done) }
}

// threadCPU is the calling OS thread's user+system CPU time in nanoseconds.
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// rusageThread is Linux's RUSAGE_THREAD (not in package syscall).
const rusageThread = 1

func bar(done, total int64) string {
	const w = 30
	k := int(done * w / max(total, 1))
	return "[" + strings.Repeat("#", k) + strings.Repeat(".", w-k) + "]"
}

// CSVHeader is the column list of results.csv.
var CSVHeader = []string{"query", "events", "elapsed_s", "events_per_s", "events_per_s_per_core", "cores", "cpu_s", //lint:immutable column names
	"p50_ms", "p99_ms", "peak_rss_bytes", "state_bytes", "input_bytes", "storage_bytes", "write_bytes",
	"storage_per_logical", "writes_per_logical", "driver_cpu_s", "events_per_cpu_s", "feldera_per_core", "ratio_to_feldera"}

func writeOut(dir string, res []Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "nexmark.csv"))
	if err != nil {
		return err
	}
	cw := csv.NewWriter(f)
	_ = cw.Write(CSVHeader)
	ff := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	ms := func(d time.Duration) string { return ff(float64(d.Microseconds()) / 1000) }
	for _, r := range res {
		_ = cw.Write([]string{r.Query, strconv.FormatInt(r.Events, 10), ff(r.Elapsed.Seconds()), ff(r.EventsPerSec),
			ff(r.EventsPerSecCore), strconv.Itoa(runtime.GOMAXPROCS(0)), ff(r.CPUSeconds), ms(r.P50), ms(r.P99),
			strconv.FormatInt(r.PeakRSS, 10), strconv.FormatInt(r.StateBytes, 10), strconv.FormatInt(r.InputBytes, 10),
			strconv.FormatInt(r.StorageBytes, 10), strconv.FormatInt(r.WriteBytes, 10), ff(r.StoragePerLogical), ff(r.WritesPerLogical), ff(r.DriverCPUSeconds),
			ff(r.EventsPerCPUSecond()), ff(FelderaPerCore[r.Query]), ff(r.FelderaRatio())})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	var cats []string
	var vals []float64
	for _, r := range res {
		cats = append(cats, r.Query)
		vals = append(vals, r.EventsPerSecCore)
	}
	var sb strings.Builder
	title := fmt.Sprintf("Nexmark on RockStream: events/s per core (%d cores, %d events per query)", runtime.GOMAXPROCS(0), res[0].Events)
	if err := benchutil.BarChartSVG(&sb, title, "events/s/core", cats, []benchutil.Series{{Name: "RockStream", Values: vals}}, false); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "nexmark.svg"), []byte(sb.String()), 0o644)
}

// WriteTable prints results as an aligned text table. ev/cpu-s is events
// per second of this process's CPU time without the event generator's
// (EventsPerCPUSecond): on a shared machine it moves far less than the
// wall-clock ev/s/core. ×feldera is ev/cpu-s over Feldera's published
// per-core figure (FelderaPerCore; "-" where it publishes none).
func WriteTable(w io.Writer, res []Result) {
	fmt.Fprintf(w, "%-5s %10s %9s %12s %12s %10s %9s %8s %8s %9s %11s %10s %10s\n", "query", "events", "elapsed", "events/s", "ev/s/core", "ev/cpu-s", "×feldera", "p50 ms", "p99 ms", "peakRSS", "state B", "disk/in", "writes/in")
	for _, r := range res {
		ratio := "-"
		if f := r.FelderaRatio(); f > 0 {
			ratio = strconv.FormatFloat(f, 'f', 3, 64)
		}
		fmt.Fprintf(w, "%-5s %10d %8.2fs %12.0f %12.0f %10.0f %9s %8.2f %8.2f %8.0fM %11d %10.2f %10.2f\n", r.Query, r.Events, r.Elapsed.Seconds(),
			r.EventsPerSec, r.EventsPerSecCore, r.EventsPerCPUSecond(), ratio, float64(r.P50.Microseconds())/1000, float64(r.P99.Microseconds())/1000,
			float64(r.PeakRSS)/(1<<20), r.StateBytes, r.StoragePerLogical, r.WritesPerLogical)
	}
	fmt.Fprintln(w, "cores: process CPU over the run's elapsed time; busy: each actor's time handling messages as a share of it (of which in object-store calls)")
	for _, r := range res {
		fmt.Fprintf(w, "%-5s cores %.2f  busy %s\n", r.Query, r.CPUSeconds/r.Elapsed.Seconds(), busyShares(r))
	}
}

// busyShares lists r's busiest actors (each at least 1% of the run) with
// their share of its elapsed time, busiest first.
func busyShares(r Result) string {
	actors := slices.Collect(maps.Keys(r.Busy))
	slices.SortFunc(actors, func(a, b string) int {
		if c := cmp.Compare(r.Busy[b].Busy, r.Busy[a].Busy); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, a := range actors {
		if share := r.Busy[a].Busy.Seconds() / r.Elapsed.Seconds(); share >= 0.01 {
			parts = append(parts, fmt.Sprintf("%s %.0f%% (store %.0f%%)", a, 100*share, 100*r.Busy[a].Store.Seconds()/r.Elapsed.Seconds()))
		}
	}
	return strings.Join(parts, ", ")
}

// explain prints EXPLAIN ANALYZE INCREMENTAL of view q to o.Progress
// (Options.Explain).
func explain(ctx context.Context, o Options, rd *pgx.Conn, q string) error {
	if !o.Explain || o.Progress == nil {
		return nil
	}
	rows, err := rd.Query(ctx, "EXPLAIN ANALYZE INCREMENTAL "+q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return err
		}
		fmt.Fprintln(o.Progress, line)
	}
	return rows.Err()
}

// printState prints the view's rows and state (StateEvery).
func printState(ctx context.Context, out io.Writer, rd *pgx.Conn, q string, events int64, took time.Duration) error {
	var rows, stateRows, stateBytes int64
	err := rd.QueryRow(ctx, "SELECT rows, state_rows, state_bytes FROM rockstream_catalog.views WHERE name = $1", q).Scan(&rows, &stateRows, &stateBytes)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\r%s %10d events %7.1fs: view %9d rows, state %9d rows %12d bytes\n", q, events, took.Seconds(), rows, stateRows, stateBytes)
	return nil
}
