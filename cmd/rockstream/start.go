package main

import (
	"log/slog"
	"os"
	"os/signal"
	"strings"
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
	var logFormat, memoryBudget, passwordFile string
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Start RockStream (embedded profile: one process, state under --storage)",
		Long: `Start RockStream in the embedded profile: the control plane, one shard and the
PostgreSQL wire protocol gateway in this process, with all durable state in
--storage (a directory, file:///path or s3://bucket/prefix).

Every flag falls back to an environment variable (ROCKSTREAM_STORAGE,
ROCKSTREAM_LISTEN, ROCKSTREAM_HTTP, ROCKSTREAM_MEMORY_BUDGET, ROCKSTREAM_LOG_FORMAT,
ROCKSTREAM_AUTH, ROCKSTREAM_TLS_CERT, ROCKSTREAM_TLS_KEY).

With --auth=trust (the default) every connection is a superuser and only
loopback addresses may be bound. With --auth=password clients authenticate
with SCRAM-SHA-256 against the roles created with CREATE ROLE; the first such
start creates the superuser role rockstream with the password from
ROCKSTREAM_PASSWORD or --password-file.`,
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
			if opts.Shards < 1 || opts.Shards > 64 {
				return usageError("--shards must be between 1 and 64, not %d", opts.Shards)
			}
			opts.BootstrapPassword = os.Getenv("ROCKSTREAM_PASSWORD")
			if passwordFile != "" {
				b, err := os.ReadFile(passwordFile)
				if err != nil {
					return usageError("--password-file: %v", err)
				}
				// The first line, as PostgreSQL's initdb --pwfile reads it.
				line, _, _ := strings.Cut(string(b), "\n")
				opts.BootstrapPassword = strings.TrimRight(line, "\r")
			}
			opts.Out = cmd.OutOrStdout()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
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
	f.StringVar(&opts.Auth, "auth", envOr("ROCKSTREAM_AUTH", engine.AuthTrust), "client authentication: trust (loopback only; every connection is a superuser) or password (SCRAM-SHA-256 against roles)")
	f.StringVar(&opts.TLSCertFile, "tls-cert", envOr("ROCKSTREAM_TLS_CERT", ""), "PEM certificate for TLS on the pgwire port (with --tls-key)")
	f.StringVar(&opts.TLSKeyFile, "tls-key", envOr("ROCKSTREAM_TLS_KEY", ""), "PEM private key for --tls-cert")
	f.StringVar(&passwordFile, "password-file", "", "file whose first line is the password of the superuser role rockstream, read on the first start with --auth=password (or set ROCKSTREAM_PASSWORD)")
	f.StringVar(&logFormat, "log-format", envOr("ROCKSTREAM_LOG_FORMAT", "text"), "log format: text or json")
	f.IntVar(&opts.Shards, "shards", 1, "shards a new data directory is laid out over: the table shard takes every commit, each materialized view runs on one of the others, or, keyed by its tables' columns, is spread over every shard, the table shard taking a smaller share (1: everything on one shard); a directory keeps the layout it was created with")
	f.BoolVar(&opts.PartitionTables, "partition-tables", false, "experimental: a new data directory with --shards=N spreads the rows of tables with a primary key, and of insert-only tables, over the first half of the shards (each takes the commits of its rows), and runs the materialized views on the others; a transaction over several shards commits on all or none (two-phase); UNIQUE indexes other than the primary key on partitioned tables are refused for now")
	f.BoolVar(&opts.ExchangeStages, "exchange-stages", false, "experimental: with 2 or more shards, also spread over the shards a new materialized view whose operators are co-partitioned by a subset of their keys (GROUP BY a, b over rows placed by a) or that joins a VALUES list; views keep the placement they were created with")
	return cmd
}
