package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/rockstream/rockstream/engine"
)

// newSQLCommand is `rockstream sql "<query>"`: run statements against a
// running server and print the results as a table.
//
// While a statement runs longer than a second, its progress is shown on
// stderr from rockstream_catalog.progress (read over a second
// connection): the rows a COPY took, the phase and percent of a view
// being filled. On a terminal it is one line redrawn; otherwise a line a
// second.
func newSQLCommand() *cobra.Command {
	var url string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "sql <statements>",
		Short: "Run SQL against a running RockStream and print the results",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var p *progress
			if !quiet {
				p = &progress{out: cmd.ErrOrStderr(), every: time.Second, tty: isTerminal(cmd.ErrOrStderr())}
			}
			return runSQLWith(cmd.Context(), url, args[0], cmd.OutOrStdout(), p)
		},
	}
	cmd.Flags().StringVar(&url, "url", envOr("ROCKSTREAM_URL", "postgres://rockstream@"+engine.DefaultListen+"/default"), "server connection URL")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "print no progress of long statements (a COPY, a view being filled) on stderr")
	return cmd
}

// newExplainCommand is `rockstream explain [--analyze] <view>`: EXPLAIN
// [ANALYZE] INCREMENTAL.
func newExplainCommand() *cobra.Command {
	var url string
	var analyze bool
	cmd := &cobra.Command{
		Use:   "explain <view>",
		Short: "Show how a materialized view is maintained (EXPLAIN INCREMENTAL; --analyze: with its operators' statistics)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			statement := "EXPLAIN INCREMENTAL "
			if analyze {
				statement = "EXPLAIN ANALYZE INCREMENTAL "
			}
			return runSQL(cmd.Context(), url, statement+args[0], cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&url, "url", envOr("ROCKSTREAM_URL", "postgres://rockstream@"+engine.DefaultListen+"/default"), "server connection URL")
	cmd.Flags().BoolVar(&analyze, "analyze", false, "show each operator's rows in and out, time and state (EXPLAIN ANALYZE INCREMENTAL)")
	return cmd
}

func runSQL(ctx context.Context, url, sql string, out io.Writer) error {
	return runSQLWith(ctx, url, sql, out, nil)
}

// runSQLWith is runSQL showing the statements' progress on p (nil: none).
func runSQLWith(ctx context.Context, url, sql string, out io.Writer, p *progress) error {
	if ctx == nil {
		ctx = context.Background()
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("cannot connect to %s (is `rockstream start` running?): %w", url, err)
	}
	defer conn.Close(ctx)
	stop := p.watch(ctx, url, conn.PgConn().PID())
	results, err := conn.PgConn().Exec(ctx, sql).ReadAll()
	stop()
	if err != nil {
		return err
	}
	for _, r := range results {
		if r.Err != nil {
			return r.Err
		}
		if len(r.FieldDescriptions) > 0 {
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			names := make([]string, len(r.FieldDescriptions))
			for i, f := range r.FieldDescriptions {
				names[i] = f.Name
			}
			fmt.Fprintln(tw, strings.Join(names, "\t"))
			for _, row := range r.Rows {
				vals := make([]string, len(row))
				for i, v := range row {
					if v == nil {
						vals[i] = "NULL"
					} else {
						vals[i] = string(v)
					}
				}
				fmt.Fprintln(tw, strings.Join(vals, "\t"))
			}
			tw.Flush()
		}
		fmt.Fprintln(out, r.CommandTag.String())
	}
	return nil
}

// progress shows the progress of a running statement (rockstream sql).
type progress struct {
	out   io.Writer
	every time.Duration
	// tty: redraw one line (\r) instead of printing a line each time.
	tty bool
}

// watch polls rockstream_catalog.progress for the session pid's COPY and
// for views being filled, after a first interval (short statements show
// nothing), until the returned stop is called.
func (p *progress) watch(ctx context.Context, url string, pid uint32) (stop func()) {
	if p == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var conn *pgx.Conn
		defer func() {
			if conn != nil {
				_ = conn.Close(context.Background())
			}
		}()
		shown := false
		for {
			select {
			case <-ctx.Done():
				if shown && p.tty {
					fmt.Fprintln(p.out)
				}
				return
			case <-time.After(p.every):
			}
			if conn == nil {
				c, err := pgx.Connect(ctx, url)
				if err != nil {
					continue
				}
				conn = c
			}
			line, err := progressLine(ctx, conn, pid)
			if err != nil || line == "" {
				continue
			}
			if p.tty {
				fmt.Fprintf(p.out, "\r\033[K%s", line)
			} else {
				fmt.Fprintln(p.out, line)
			}
			shown = true
		}
	}()
	return func() { cancel(); <-done }
}

// progressLine describes the long work of session pid now: its COPY, and
// every view being filled; "" when there is none.
func progressLine(ctx context.Context, conn *pgx.Conn, pid uint32) (string, error) {
	rows, err := conn.Query(ctx, `SELECT kind, coalesce(relation, ''), coalesce(phase, ''), coalesce(rows_done, 0), coalesce(rows_per_second, 0), percent
		FROM rockstream_catalog.progress WHERE pid = $1 OR kind = 'backfill'`, int32(pid))
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var parts []string
	for rows.Next() {
		var kind, rel, phase string
		var done, rate int64
		var pct *float32
		if err := rows.Scan(&kind, &rel, &phase, &done, &rate, &pct); err != nil {
			return "", err
		}
		switch kind {
		case "backfill":
			s := fmt.Sprintf("filling %s: %s", rel, phase)
			if pct != nil {
				s += fmt.Sprintf(" %s %.0f%%", bar(float64(*pct)), *pct)
			}
			parts = append(parts, fmt.Sprintf("%s, %d input rows", s, done))
		default:
			parts = append(parts, fmt.Sprintf("%s %s: %d rows, %d rows/s", kind, rel, done, rate))
		}
	}
	return strings.Join(parts, "; "), rows.Err()
}

// bar draws a 20-character progress bar of pct percent.
func bar(pct float64) string {
	n := int(max(0, min(100, pct)) / 5)
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", 20-n) + "]"
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
