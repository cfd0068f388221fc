// Package ivm is the IVM-vs-recompute benchmark: a base table of N rows
// with a group-by, a join and a filter view; change sets of a fraction of N
// (0.01%, 0.1%, 1%, 10% by default) are applied, and in the same run we
// time RockStream's incremental maintenance against PostgreSQL 15's
// REFRESH MATERIALIZED VIEW and against a hand-written PostgreSQL upsert
// of the change into tables holding the same results.
//
// Change sets are inserts of new base rows (ids after N), identical for
// both systems. What each timing covers:
//   - rockstream: COPY of the change into the base table plus the first
//     read of a view in the same session (which waits until the views
//     reflect the write): ingest + maintenance of all three views;
//   - rockstream_ingest_only: the same into an identical table without
//     views (the ingest floor);
//   - pg_refresh: REFRESH MATERIALIZED VIEW of the three views (the change
//     is already in the base table; its COPY is timed as pg_insert);
//   - pg_upsert: one transaction upserting the change (staged in a table,
//     untimed) into the three result tables.
//
// A first row times the backfill: creating the three views over the
// loaded base table, until a read of each shows it (RockStream), against
// PostgreSQL's CREATE MATERIALIZED VIEW of the same three.
package ivm

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/bench/internal/benchutil"
)

// DefaultFractions are the change-set sizes, as fractions of N.
var DefaultFractions = []float64{0.0001, 0.001, 0.01, 0.1} //lint:immutable default flag value

// Options configures a run.
type Options struct {
	Rows      int64
	Fractions []float64
	Reps      int    // repetitions per change size; the median is reported (default 3)
	PGURL     string // PostgreSQL 15 connection string
	Out       string // CSV and SVG folder ("" : none)
	Progress  io.Writer
	// Shards lays RockStream's store out over this many shards (0: one).
	Shards int
	// BeforeChanges, if set, runs once after loading and before the first
	// change is applied (rockstream bench ivm --profile=changes starts the
	// CPU profile there, so loading does not drown the measured phase).
	BeforeChanges func()
	// BeforeBackfill and AfterBackfill, if set, run just before and just
	// after RockStream's timed backfill (rockstream bench ivm
	// --profile=backfill profiles only it).
	BeforeBackfill, AfterBackfill func()
}

// Result is one change size's timings (medians), or the backfill's.
type Result struct {
	// Backfill marks the backfill row: RockStream is the creation of the
	// three views until each can be read, PGRefresh PostgreSQL's CREATE
	// MATERIALIZED VIEW of them; the other timings are zero.
	Backfill   bool
	Fraction   float64
	ChangeRows int64
	RockStream time.Duration
	PGRefresh  time.Duration
	PGUpsert   time.Duration
	PGInsert   time.Duration
	// RSIngest is the same COPY into a RockStream table of the same size
	// with no views (plus the waiting read): the ingest floor, so
	// RockStream - RSIngest approximates the maintenance cost.
	RSIngest time.Duration
	// RSCPU and RSIngestCPU are this process's CPU time (server and
	// client, user+system) over the same intervals as RockStream and
	// RSIngest: on a shared machine they move less than wall time.
	RSCPU, RSIngestCPU time.Duration
}

func cpuNow() time.Duration { return time.Duration(benchutil.CPUSeconds() * float64(time.Second)) }

const dimRows = 1000

const (
	baseDDL = "CREATE TABLE base (id bigint PRIMARY KEY, grp int, dim_id int, amount int, note text)"
	dimDDL  = "CREATE TABLE dim (id int PRIMARY KEY, name text, category int)"
	qGroup  = "SELECT grp, count(*) AS cnt, sum(amount) AS total FROM base GROUP BY grp"
	qJoin   = "SELECT b.id, b.amount, d.name FROM base b JOIN dim d ON b.dim_id = d.id WHERE d.category = 1"
	qFilter = "SELECT id, amount FROM base WHERE amount > 900"
)

func rows(from, to int64) []byte {
	var b []byte
	for i := from; i < to; i++ {
		b = strconv.AppendInt(b, i, 10)
		b = append(b, '\t')
		b = strconv.AppendInt(b, i%1000, 10)
		b = append(b, '\t')
		b = strconv.AppendInt(b, (i*31)%dimRows, 10)
		b = append(b, '\t')
		b = strconv.AppendInt(b, (i*7919)%1000, 10)
		b = append(b, "\tnote "...)
		b = strconv.AppendInt(b, i, 10)
		b = append(b, '\n')
	}
	return b
}

func dimData() []byte {
	var b []byte
	for i := 0; i < dimRows; i++ {
		b = fmt.Appendf(b, "%d\tname %d\t%d\n", i, i%50, i%10)
	}
	return b
}

func copyIn(ctx context.Context, c *pgx.Conn, table string, data []byte) error {
	_, err := c.PgConn().CopyFrom(ctx, bytes.NewReader(data), "COPY "+table+" FROM STDIN")
	if err != nil {
		return fmt.Errorf("COPY %s: %w", table, err)
	}
	return nil
}

func load(ctx context.Context, c *pgx.Conn, table string, n int64, progress io.Writer, who string) error {
	const chunk = 100_000
	for i := int64(0); i < n; i += chunk {
		if err := copyIn(ctx, c, table, rows(i, min(i+chunk, n))); err != nil {
			return err
		}
		if progress != nil {
			fmt.Fprintf(progress, "\rloading %s: %d/%d rows   ", who, min(i+chunk, n), n)
		}
	}
	if progress != nil {
		fmt.Fprintln(progress)
	}
	return nil
}

func execAll(ctx context.Context, c *pgx.Conn, stmts ...string) error {
	for _, s := range stmts {
		if _, err := c.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// Run runs the benchmark.
func Run(ctx context.Context, o Options) ([]Result, error) {
	if len(o.Fractions) == 0 {
		o.Fractions = DefaultFractions
	}
	if o.Reps <= 0 {
		o.Reps = 3
	}
	srv, err := benchutil.StartServer("", o.Shards)
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	rs, err := pgx.Connect(ctx, srv.URL)
	if err != nil {
		return nil, err
	}
	defer rs.Close(ctx)
	pg, err := pgx.Connect(ctx, o.PGURL)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	defer pg.Close(ctx)

	// RockStream: tables, base load, then the views (backfilled).
	if err := execAll(ctx, rs, baseDDL, dimDDL, strings.Replace(baseDDL, "base", "plain", 1)); err != nil {
		return nil, err
	}
	if err := copyIn(ctx, rs, "dim", dimData()); err != nil {
		return nil, err
	}
	if err := load(ctx, rs, "base", o.Rows, o.Progress, "rockstream"); err != nil {
		return nil, err
	}
	if err := load(ctx, rs, "plain", o.Rows, o.Progress, "rockstream (table without views)"); err != nil {
		return nil, err
	}
	// The backfill, timed: reads of a view wait until it is filled.
	if o.BeforeBackfill != nil {
		o.BeforeBackfill()
	}
	t, c := time.Now(), cpuNow()
	if err := execAll(ctx, rs,
		"CREATE MATERIALIZED VIEW v_group AS "+qGroup,
		"CREATE MATERIALIZED VIEW v_join AS "+qJoin,
		"CREATE MATERIALIZED VIEW v_filter AS "+qFilter,
		"SELECT count(*) FROM v_group", "SELECT count(*) FROM v_join", "SELECT count(*) FROM v_filter"); err != nil {
		return nil, err
	}
	backfill := Result{Backfill: true, Fraction: 1, ChangeRows: o.Rows, RockStream: time.Since(t), RSCPU: cpuNow() - c}
	if o.AfterBackfill != nil {
		o.AfterBackfill()
	}
	// PostgreSQL: a fresh schema so reruns start clean.
	if err := execAll(ctx, pg,
		"DROP SCHEMA IF EXISTS rsbench CASCADE", "CREATE SCHEMA rsbench", "SET search_path = rsbench",
		baseDDL, dimDDL); err != nil {
		return nil, err
	}
	if err := copyIn(ctx, pg, "dim", dimData()); err != nil {
		return nil, err
	}
	if err := load(ctx, pg, "base", o.Rows, o.Progress, "postgres"); err != nil {
		return nil, err
	}
	if err := execAll(ctx, pg, "ANALYZE"); err != nil {
		return nil, err
	}
	t = time.Now()
	if err := execAll(ctx, pg,
		"CREATE MATERIALIZED VIEW mv_group AS "+qGroup,
		"CREATE MATERIALIZED VIEW mv_join AS "+qJoin,
		"CREATE MATERIALIZED VIEW mv_filter AS "+qFilter); err != nil {
		return nil, err
	}
	backfill.PGRefresh = time.Since(t)
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "backfill (%d rows): rockstream %s (cpu %s), pg create materialized view %s\n", o.Rows, backfill.RockStream, backfill.RSCPU, backfill.PGRefresh)
	}
	if err := execAll(ctx, pg,
		"CREATE TABLE t_group AS "+qGroup, "ALTER TABLE t_group ADD PRIMARY KEY (grp)",
		"CREATE TABLE t_join AS "+qJoin,
		"CREATE TABLE t_filter AS "+qFilter,
		"CREATE UNLOGGED TABLE chg (LIKE base)",
		"ANALYZE"); err != nil {
		return nil, err
	}
	next := o.Rows
	res := []Result{backfill}
	if o.BeforeChanges != nil {
		o.BeforeChanges()
	}
	for _, f := range o.Fractions {
		k := max(int64(float64(o.Rows)*f), 1)
		var tRS, tRef, tUp, tIns, tPlain, cRS, cPlain []time.Duration
		for rep := 0; rep < o.Reps; rep++ {
			data := rows(next, next+k)
			next += k
			// RockStream: ingest + maintenance, until a read sees it.
			t, c := time.Now(), cpuNow()
			if err := copyIn(ctx, rs, "base", data); err != nil {
				return res, err
			}
			var n int64
			if err := rs.QueryRow(ctx, "SELECT count(*) FROM v_group").Scan(&n); err != nil {
				return res, err
			}
			tRS, cRS = append(tRS, time.Since(t)), append(cRS, cpuNow()-c)
			t, c = time.Now(), cpuNow()
			if err := copyIn(ctx, rs, "plain", data); err != nil {
				return res, err
			}
			if err := rs.QueryRow(ctx, "SELECT count(*) FROM v_group").Scan(&n); err != nil {
				return res, err
			}
			tPlain, cPlain = append(tPlain, time.Since(t)), append(cPlain, cpuNow()-c)
			// PostgreSQL: stage, insert, refresh, upsert.
			if err := execAll(ctx, pg, "TRUNCATE chg"); err != nil {
				return res, err
			}
			if err := copyIn(ctx, pg, "chg", data); err != nil {
				return res, err
			}
			t = time.Now()
			if err := copyIn(ctx, pg, "base", data); err != nil {
				return res, err
			}
			tIns = append(tIns, time.Since(t))
			t = time.Now()
			if err := execAll(ctx, pg, "REFRESH MATERIALIZED VIEW mv_group", "REFRESH MATERIALIZED VIEW mv_join", "REFRESH MATERIALIZED VIEW mv_filter"); err != nil {
				return res, err
			}
			tRef = append(tRef, time.Since(t))
			t = time.Now()
			if err := execAll(ctx, pg, "BEGIN",
				"INSERT INTO t_group SELECT grp, count(*), sum(amount) FROM chg GROUP BY grp ON CONFLICT (grp) DO UPDATE SET cnt = t_group.cnt + excluded.cnt, total = t_group.total + excluded.total",
				"INSERT INTO t_join SELECT b.id, b.amount, d.name FROM chg b JOIN dim d ON b.dim_id = d.id WHERE d.category = 1",
				"INSERT INTO t_filter SELECT id, amount FROM chg WHERE amount > 900",
				"COMMIT"); err != nil {
				return res, err
			}
			tUp = append(tUp, time.Since(t))
		}
		r := Result{Fraction: f, ChangeRows: k, RockStream: median(tRS), PGRefresh: median(tRef), PGUpsert: median(tUp), PGInsert: median(tIns), RSIngest: median(tPlain), RSCPU: median(cRS), RSIngestCPU: median(cPlain)}
		res = append(res, r)
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "change %s (%d rows): rockstream %s (cpu %s; ingest alone %s, cpu %s), pg refresh %s, pg upsert %s\n", pct(f), k, r.RockStream, r.RSCPU, r.RSIngest, r.RSIngestCPU, r.PGRefresh, r.PGUpsert)
		}
	}
	// Cross-check: the views agree with PostgreSQL's recomputation.
	if err := crossCheck(ctx, rs, pg); err != nil {
		return res, err
	}
	if o.Out != "" {
		if err := writeOut(o.Out, o.Rows, res); err != nil {
			return res, err
		}
	}
	return res, nil
}

func crossCheck(ctx context.Context, rs, pg *pgx.Conn) error {
	for _, q := range []struct{ rs, pg string }{
		{"SELECT count(*), coalesce(sum(cnt), 0), coalesce(sum(total), 0) FROM v_group", "SELECT count(*), coalesce(sum(cnt), 0), coalesce(sum(total), 0) FROM mv_group"},
		{"SELECT count(*), coalesce(sum(amount), 0), 0 FROM v_join", "SELECT count(*), coalesce(sum(amount), 0), 0 FROM mv_join"},
		{"SELECT count(*), coalesce(sum(amount), 0), 0 FROM v_filter", "SELECT count(*), coalesce(sum(amount), 0), 0 FROM t_filter"},
	} {
		var a, b [3]int64
		if err := rs.QueryRow(ctx, q.rs).Scan(&a[0], &a[1], &a[2]); err != nil {
			return fmt.Errorf("%s: %w", q.rs, err)
		}
		if err := pg.QueryRow(ctx, q.pg).Scan(&b[0], &b[1], &b[2]); err != nil {
			return fmt.Errorf("%s: %w", q.pg, err)
		}
		if a != b {
			return fmt.Errorf("views disagree: rockstream %v (%s) vs postgres %v (%s)", a, q.rs, b, q.pg)
		}
	}
	return nil
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func pct(f float64) string { return strconv.FormatFloat(f*100, 'g', 3, 64) + "%" }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func writeOut(dir string, n int64, res []Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b strings.Builder
	cw := csv.NewWriter(&b)
	_ = cw.Write([]string{"phase", "base_rows", "change_pct", "change_rows", "rockstream_ms", "rockstream_ingest_only_ms", "pg_refresh_ms", "pg_upsert_ms", "pg_insert_ms", "refresh_over_rockstream", "upsert_over_rockstream", "rockstream_cpu_ms", "rockstream_ingest_only_cpu_ms"})
	ff := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	var cats []string
	var s1, s2, s3 []float64
	for _, r := range res {
		if r.Backfill {
			// pg_refresh_ms is PostgreSQL's CREATE MATERIALIZED VIEW here.
			_ = cw.Write([]string{"backfill", strconv.FormatInt(n, 10), ff(100), strconv.FormatInt(r.ChangeRows, 10),
				ff(ms(r.RockStream)), "", ff(ms(r.PGRefresh)), "", "", ff(r.PGRefresh.Seconds() / r.RockStream.Seconds()), "", ff(ms(r.RSCPU)), ""})
			continue
		}
		_ = cw.Write([]string{"change", strconv.FormatInt(n, 10), ff(r.Fraction * 100), strconv.FormatInt(r.ChangeRows, 10),
			ff(ms(r.RockStream)), ff(ms(r.RSIngest)), ff(ms(r.PGRefresh)), ff(ms(r.PGUpsert)), ff(ms(r.PGInsert)),
			ff(r.PGRefresh.Seconds() / r.RockStream.Seconds()), ff(r.PGUpsert.Seconds() / r.RockStream.Seconds()),
			ff(ms(r.RSCPU)), ff(ms(r.RSIngestCPU))})
		cats = append(cats, pct(r.Fraction))
		s1, s2, s3 = append(s1, ms(r.RockStream)), append(s2, ms(r.PGRefresh)), append(s3, ms(r.PGUpsert))
	}
	cw.Flush()
	if err := os.WriteFile(filepath.Join(dir, "ivm.csv"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	var sb strings.Builder
	title := fmt.Sprintf("Maintaining 3 views after a change to %d rows (ms, log scale, lower is better)", n)
	if err := benchutil.BarChartSVG(&sb, title, "milliseconds", cats, []benchutil.Series{
		{Name: "RockStream IVM", Values: s1}, {Name: "PG REFRESH", Values: s2}, {Name: "PG hand upsert", Values: s3}}, true); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "ivm.svg"), []byte(sb.String()), 0o644)
}

// WriteTable prints results as an aligned text table (the backfill row's
// pg refresh column is PostgreSQL's CREATE MATERIALIZED VIEW).
func WriteTable(w io.Writer, n int64, res []Result) {
	fmt.Fprintf(w, "base rows %d (backfill: pg refresh ms = CREATE MATERIALIZED VIEW)\n%-8s %10s %14s %10s %14s %10s %14s %14s %14s %12s %12s\n", n, "change", "rows", "rockstream ms", "rs cpu ms", "rs ingest ms", "ingest cpu", "pg refresh ms", "pg upsert ms", "pg insert ms", "refresh/rs", "upsert/rs")
	for _, r := range res {
		if r.Backfill {
			fmt.Fprintf(w, "%-8s %10d %14.2f %10.2f %14s %10s %14.2f %14s %14s %11.1fx %12s\n", "backfill", r.ChangeRows, ms(r.RockStream), ms(r.RSCPU), "-", "-", ms(r.PGRefresh),
				"-", "-", r.PGRefresh.Seconds()/r.RockStream.Seconds(), "-")
			continue
		}
		fmt.Fprintf(w, "%-8s %10d %14.2f %10.2f %14.2f %10.2f %14.2f %14.2f %14.2f %11.1fx %11.2fx\n", pct(r.Fraction), r.ChangeRows, ms(r.RockStream), ms(r.RSCPU), ms(r.RSIngest), ms(r.RSIngestCPU), ms(r.PGRefresh),
			ms(r.PGUpsert), ms(r.PGInsert), r.PGRefresh.Seconds()/r.RockStream.Seconds(), r.PGUpsert.Seconds()/r.RockStream.Seconds())
	}
}
