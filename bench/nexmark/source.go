package nexmark

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/bench/internal/benchutil"
)

// SourceDDL is the three tables as NEXMARK sources over one event stream.
func SourceDDL(events, rate int64, seed uint64, mode TimeMode) []string {
	tm := "feldera"
	if mode == FlinkTime {
		tm = "flink"
	}
	var out []string
	for _, t := range []string{"person", "auction", "bid"} {
		out = append(out, fmt.Sprintf("CREATE SOURCE %s FROM NEXMARK (events = %d, rate = %d, seed = %d, time = '%s')", t, events, rate, seed, tm))
	}
	return out
}

// runSource measures query q with the tables fed by NEXMARK sources inside
// the server: the clock runs from creating the sources until the views
// reflect every event.
func runSource(ctx context.Context, o Options, q, view string, w, rd *pgx.Conn, dir string, r Result) (Result, error) {
	rate := o.Rate
	if rate <= 0 {
		rate = 10_000_000
	}
	// The logical input size and bid count, from the same generator.
	g := Generator{Seed: o.Seed, Mode: o.Mode}
	var b Batch
	var bids int64
	for n := int64(0); n < o.Events; n += 10_000 {
		b.Reset()
		b.Append(g, n, min(n+10_000, o.Events))
		r.InputBytes += int64(b.Bytes())
		bids += int64(b.Bids)
	}
	// The sources start at once; the views, created right after, backfill
	// what was committed before them and maintain the rest.
	runtime.GC()
	benchutil.ResetPeakRSS()
	w0, cpu0 := benchutil.WriteBytes(), benchutil.CPUSeconds()
	start := time.Now()
	for _, s := range SourceDDL(o.Events, rate, o.Seed, o.Mode) {
		if o.Watermark != "" && strings.HasPrefix(s, "CREATE SOURCE bid ") {
			s = strings.TrimSuffix(s, ")") + fmt.Sprintf(", watermark = 'date_time - interval ''%s''')", strings.ReplaceAll(o.Watermark, "'", ""))
		}
		if _, err := w.Exec(ctx, s); err != nil {
			return r, fmt.Errorf("%s: %w", s, err)
		}
	}
	if CopyOnly(q) {
		return r, fmt.Errorf("%s reads bid's p_time, which COPY fills: run it with --ingest=copy", q)
	}
	for _, s := range append(SetupFor(view), view, "CREATE MATERIALIZED VIEW nexmark_probe AS SELECT count(*) AS n FROM bid") {
		if _, err := w.Exec(ctx, s); err != nil {
			return r, fmt.Errorf("%s: %w", s, err)
		}
	}
	lastProgress := start
	// StateEvery counts events; the probe counts bids, which the generator
	// spreads evenly over the events (46 of every 50).
	nextState := o.StateEvery
	for {
		var n int64
		if err := rd.QueryRow(ctx, "SELECT coalesce(max(n), 0) FROM nexmark_probe").Scan(&n); err != nil {
			return r, err
		}
		for o.Progress != nil && o.StateEvery > 0 && nextState <= o.Events && n*o.Events >= nextState*bids {
			if err := printState(ctx, o.Progress, rd, q, nextState, time.Since(start)); err != nil {
				return r, err
			}
			nextState += o.StateEvery
		}
		if n >= bids {
			break
		}
		if err := ctx.Err(); err != nil {
			return r, err
		}
		if o.Progress != nil && time.Since(lastProgress) > 500*time.Millisecond {
			lastProgress = time.Now()
			fmt.Fprintf(o.Progress, "\r%s %s %d/%d bids  %.0f ev/s   ", q, bar(n, bids), n, bids, float64(n)/float64(bids)*float64(o.Events)/time.Since(start).Seconds())
		}
		time.Sleep(5 * time.Millisecond)
	}
	r.Elapsed = time.Since(start)
	r.CPUSeconds = benchutil.CPUSeconds() - cpu0
	r.EventsPerSec = float64(o.Events) / r.Elapsed.Seconds()
	r.EventsPerSecCore = r.EventsPerSec / float64(runtime.GOMAXPROCS(0))
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "\r%s done: %d events from NEXMARK sources in %.2fs, %.0f ev/s (%.0f ev/s/core)\n",
			q, o.Events, r.Elapsed.Seconds(), r.EventsPerSec, r.EventsPerSecCore)
	}
	if err := finish(ctx, w, dir, w0, &r); err != nil {
		return r, err
	}
	return r, explain(ctx, o, rd, q)
}

// finish records state, storage and memory figures after a run.
func finish(ctx context.Context, w *pgx.Conn, dir string, w0 int64, r *Result) error {
	if err := w.QueryRow(ctx, "SELECT coalesce(sum(state_bytes), 0)::bigint FROM rockstream_catalog.views").Scan(&r.StateBytes); err != nil {
		return fmt.Errorf("state bytes: %w", err)
	}
	r.WriteBytes = benchutil.WriteBytes() - w0
	r.StorageBytes = benchutil.DirBytes(dir)
	r.PeakRSS = benchutil.PeakRSS()
	if r.InputBytes > 0 {
		r.StoragePerLogical = float64(r.StorageBytes) / float64(r.InputBytes)
		r.WritesPerLogical = float64(r.WriteBytes) / float64(r.InputBytes)
	}
	return nil
}
