package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/rockstream/rockstream/engine"
)

// newSQLCommand is `rockstream sql "<query>"`: run statements against a
// running server and print the results as a table.
func newSQLCommand() *cobra.Command {
	var url string
	cmd := &cobra.Command{
		Use:   "sql <statements>",
		Short: "Run SQL against a running RockStream and print the results",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSQL(cmd.Context(), url, args[0], cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&url, "url", envOr("ROCKSTREAM_URL", "postgres://rockstream@"+engine.DefaultListen+"/default"), "server connection URL")
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
	if ctx == nil {
		ctx = context.Background()
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("cannot connect to %s (is `rockstream start` running?): %w", url, err)
	}
	defer conn.Close(ctx)
	results, err := conn.PgConn().Exec(ctx, sql).ReadAll()
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
