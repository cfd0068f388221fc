package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/rockstream/rockstream/engine"
)

// envOr returns the ROCKSTREAM_* environment variable's value, or def.
func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}

func newStartCommand() *cobra.Command {
	var opts engine.ServerOptions
	var logFormat, memoryBudget string
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Start RockStream (embedded profile: one process, state under --storage)",
		Long: `Start RockStream in the embedded profile: the control plane, one shard and the
PostgreSQL wire protocol gateway in this process, with all durable state in
--storage (a directory, file:///path or s3://bucket/prefix).

Every flag falls back to an environment variable (ROCKSTREAM_STORAGE,
ROCKSTREAM_LISTEN, ROCKSTREAM_HTTP, ROCKSTREAM_MEMORY_BUDGET, ROCKSTREAM_LOG_FORMAT).`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var handler slog.Handler
			switch logFormat {
			case "json":
				handler = slog.NewJSONHandler(cmd.ErrOrStderr(), nil)
			case "text", "":
				handler = slog.NewTextHandler(cmd.ErrOrStderr(), nil)
			default:
				return usageError("--log-format must be text or json, not %q", logFormat)
			}
			opts.Logger = slog.New(handler)
			n, err := parseBytes(memoryBudget)
			if err != nil {
				return usageError("--memory-budget: %v", err)
			}
			opts.MemoryBudgetBytes = n
			opts.Out = cmd.OutOrStdout()
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return engine.Serve(ctx, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Storage, "storage", envOr("ROCKSTREAM_STORAGE", engine.DefaultStorage), "durable state: a directory, file:///path, s3://bucket/prefix or memory://")
	f.StringVar(&opts.Listen, "listen", envOr("ROCKSTREAM_LISTEN", engine.DefaultListen), "PostgreSQL wire protocol address")
	f.StringVar(&opts.HTTP, "http", envOr("ROCKSTREAM_HTTP", engine.DefaultHTTP), "HTTP address for /metrics, /healthz and /readyz (empty: off)")
	f.StringVar(&memoryBudget, "memory-budget", envOr("ROCKSTREAM_MEMORY_BUDGET", "2GiB"), "memory the process may use (e.g. 512MiB, 4GiB); storage budgets and the heap limit derive from it")
	f.BoolVar(&opts.Takeover, "takeover", false, "claim the storage even if another server holds it (that server stops writing); only when you know it is gone")
	f.StringVar(&logFormat, "log-format", envOr("ROCKSTREAM_LOG_FORMAT", "text"), "log format: text or json")
	return cmd
}
