package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rockstream/rockstream/bench/ivm"
	"github.com/rockstream/rockstream/bench/nexmark"
	"github.com/rockstream/rockstream/internal/pgtest"
)

// newBenchCommand is `rockstream bench ...`: the benchmark suites in bench/.
func newBenchCommand() *cobra.Command {
	p := &benchProfile{}
	c := &cobra.Command{
		Use:   "bench",
		Short: "Run a benchmark suite (nexmark, ivm)",
		PersistentPreRunE: func(*cobra.Command, []string) error {
			if p.from == "run" {
				return p.start()
			}
			if p.from != "changes" && p.from != "backfill" {
				return fmt.Errorf("--profile must be run, changes or backfill, not %q", p.from)
			}
			return nil
		},
		PersistentPostRunE: func(*cobra.Command, []string) error { return p.stop() },
	}
	// The profile covers the whole process: the server AND the benchmark's
	// driver (client, generator), so the driver's share is visible.
	c.PersistentFlags().StringVar(&p.cpu, "cpuprofile", "", "write a CPU profile (go tool pprof) to this file")
	c.PersistentFlags().StringVar(&p.mem, "memprofile", "", "write an allocation profile (go tool pprof -sample_index=alloc_space) to this file at the end")
	c.PersistentFlags().StringVar(&p.from, "profile", "run", "what the profiles cover: run (the whole run), changes (ivm: only the measured change sets, not loading) or backfill (ivm: only RockStream's backfill of the views)")
	c.AddCommand(newBenchNexmarkCommand(), newBenchIVMCommand(p))
	// A failed run skips PersistentPostRunE: stop the profile anyway, the
	// profile of a failing run being the one most wanted.
	for _, sub := range c.Commands() {
		run := sub.RunE
		sub.RunE = func(cmd *cobra.Command, args []string) error {
			err := run(cmd, args)
			if err != nil {
				if perr := p.stop(); perr != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "profile: %v\n", perr)
				}
			}
			return err
		}
	}
	return c
}

// benchProfile is the --cpuprofile/--memprofile state of one bench run.
type benchProfile struct {
	cpu, mem, from string
	f              *os.File
}

// start starts the CPU profile (a no-op without --cpuprofile, or when
// already started).
func (p *benchProfile) start() error {
	if p.cpu == "" || p.f != nil {
		return nil
	}
	f, err := os.Create(p.cpu)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return err
	}
	p.f = f
	return nil
}

// stopCPU ends the CPU profile (a no-op when none runs).
func (p *benchProfile) stopCPU() error {
	if p.f == nil {
		return nil
	}
	pprof.StopCPUProfile()
	err := p.f.Close()
	p.f = nil
	return err
}

// stop ends the CPU profile and writes the allocation profile. NB: Go's
// allocation profile counts from process start, so --memprofile always
// covers the whole run, loading included.
func (p *benchProfile) stop() error {
	if err := p.stopCPU(); err != nil {
		return err
	}
	if p.mem == "" {
		return nil
	}
	f, err := os.Create(p.mem)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func newBenchNexmarkCommand() *cobra.Command {
	var (
		events  int64
		queries string
		out     string
		batch   int64
		probes  int
		seed    uint64
		mode    string
		ingest  string
		rate    int64
		shards  int
		wm      string
		every   int64
		explain bool
		stages  bool

		partitionTables bool
	)
	c := &cobra.Command{
		Use:   "nexmark",
		Short: "Nexmark: events/s (total, per core), commit→visible p50/p99, peak RSS, state and storage bytes",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			o := nexmark.Options{Events: events, Out: out, Batch: batch, Probes: probes, Seed: seed, Progress: cmd.ErrOrStderr(), Rate: rate, Shards: shards, PartitionTables: partitionTables, Watermark: wm, StateEvery: every, Explain: explain, ExchangeStages: stages}
			switch ingest {
			case "copy":
			case "source":
				o.Source = true
			default:
				return fmt.Errorf("--ingest must be copy or source, not %q", ingest)
			}
			switch mode {
			case "feldera":
				o.Mode = nexmark.FelderaTime
			case "flink":
				o.Mode = nexmark.FlinkTime
			default:
				return fmt.Errorf("--time must be feldera or flink, not %q", mode)
			}
			if queries == "all" {
				for _, q := range nexmark.QueryNames() {
					// NB: q12's p_time is filled by COPY; the sources
					// have no such column.
					if o.Source && nexmark.CopyOnly(q) {
						fmt.Fprintf(cmd.ErrOrStderr(), "skipping %s: it needs --ingest=copy\n", q)
						continue
					}
					o.Queries = append(o.Queries, q)
				}
			} else {
				o.Queries = strings.Split(queries, ",")
			}
			if o.Events > 0 {
				g := nexmark.Generator{Seed: seed, Mode: o.Mode}
				fmt.Fprintf(cmd.OutOrStdout(), "generator alone (COPY text, one goroutine): %.0f events/s\n", nexmark.GeneratorRate(g, min(o.Events, 200_000)))
			}
			res, err := nexmark.Run(ctx, o)
			nexmark.WriteTable(cmd.OutOrStdout(), res)
			if err == nil && out != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s/nexmark.csv and %s/nexmark.svg\n", out, out)
			}
			return err
		},
	}
	c.Flags().Int64Var(&events, "events", 1_000_000, "events per query")
	c.Flags().StringVar(&wm, "watermark", "", "declare bid's event-time watermark as date_time minus this interval (e.g. '4 seconds'): windowed views forget closed windows")
	c.Flags().BoolVar(&stages, "exchange-stages", false, "start the server with --exchange-stages (experimental)")
	c.Flags().BoolVar(&explain, "explain", false, "print EXPLAIN ANALYZE INCREMENTAL of each query's view after its run (rows and time per operator)")
	c.Flags().Int64Var(&every, "state-every", 0, "print the view's state rows and bytes every this many events (0: never)")
	c.Flags().StringVar(&queries, "queries", "q0,q1,q2", "comma-separated queries, or all")
	c.Flags().StringVar(&out, "out", "bench-out", "output folder for nexmark.csv and nexmark.svg")
	c.Flags().Int64Var(&batch, "batch", 20_000, "events per COPY round")
	c.Flags().IntVar(&probes, "probes", 50, "commit→visible samples")
	c.Flags().Uint64Var(&seed, "seed", 1, "generator seed")
	c.Flags().StringVar(&mode, "time", "feldera", "event-time spacing: feldera (10 ms/event) or flink (10M events/s)")
	c.Flags().StringVar(&ingest, "ingest", "copy", "copy: COPY over pgwire, with commit→visible probes; source: CREATE SOURCE … FROM NEXMARK inside the server")
	c.Flags().IntVar(&shards, "shards", 1, "shards of the RockStream server (tables on the first, views spread over the others)")
	c.Flags().BoolVar(&partitionTables, "partition-tables", false, "experimental: the tables partitioned over the first half of the shards, as rockstream start --partition-tables")
	c.Flags().Int64Var(&rate, "rate", 0, "events/s of the NEXMARK sources with --ingest=source (0: 10M, as fast as commits go)")
	return c
}

func newBenchIVMCommand(p *benchProfile) *cobra.Command {
	var (
		rows      int64
		fractions []float64
		reps      int
		pgURL     string
		out       string
		shards    int
	)
	c := &cobra.Command{
		Use:   "ivm",
		Short: "IVM vs recompute: RockStream view maintenance vs PostgreSQL 15 REFRESH MATERIALIZED VIEW and a hand-written upsert",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			if pgURL == "" {
				// A throwaway PostgreSQL 15, booted the way the tests do.
				u, err := pgtest.ConnString()
				if err != nil {
					return fmt.Errorf("starting PostgreSQL 15 (or pass --pg): %w", err)
				}
				defer pgtest.Stop()
				pgURL = u
			}
			o := ivm.Options{Rows: rows, Fractions: fractions, Reps: reps, PGURL: pgURL, Out: out, Progress: cmd.ErrOrStderr(), Shards: shards}
			var startErr error
			switch p.from {
			case "changes":
				o.BeforeChanges = func() { startErr = p.start() }
			case "backfill":
				o.BeforeBackfill = func() { startErr = p.start() }
				o.AfterBackfill = func() {
					if err := p.stopCPU(); err != nil && startErr == nil {
						startErr = err
					}
				}
			}
			res, err := ivm.Run(ctx, o)
			if err == nil {
				err = startErr
			}
			ivm.WriteTable(cmd.OutOrStdout(), rows, res)
			if err == nil && out != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s/ivm.csv and %s/ivm.svg\n", out, out)
			}
			return err
		},
	}
	c.Flags().Int64Var(&rows, "rows", 1_000_000, "base table rows")
	c.Flags().Float64SliceVar(&fractions, "changes", ivm.DefaultFractions, "change-set sizes as fractions of --rows")
	c.Flags().IntVar(&reps, "reps", 3, "repetitions per change size (median reported)")
	c.Flags().StringVar(&pgURL, "pg", "", "PostgreSQL 15 connection string (default: start a throwaway one)")
	c.Flags().StringVar(&out, "out", "bench-out", "output folder for ivm.csv and ivm.svg")
	c.Flags().IntVar(&shards, "shards", 1, "shards of the RockStream server (tables on the first, views spread over the others)")
	return c
}
