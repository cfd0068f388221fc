package main

import (
	"github.com/spf13/cobra"

	"github.com/rockstream/rockstream/engine"
	"github.com/rockstream/rockstream/slate"
)

// newDebugSlateCommand is `rockstream debug slate`: it prints a slate
// database's manifest, SSTs with key counts, WAL range and checkpoints, for
// operators diagnosing a shard. It only reads.
//
// Wire it under a `debug` parent: root.AddCommand(newDebugCommand()).
func newDebugSlateCommand() *cobra.Command {
	var storage, path string
	cmd := &cobra.Command{
		Use:   "slate",
		Short: "Describe a slate database (manifest, SSTs, WAL range, checkpoints)",
		Long: "Describe a slate database stored at --storage (file:///dir, s3://bucket/prefix?endpoint=...&path_style=true, " +
			"or a plain directory) under --path (the database's key prefix, e.g. shards/7).",
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := engine.OpenStore(cmd.Context(), storage)
			if err != nil {
				return err
			}
			return slate.Describe(cmd.Context(), store, path, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&storage, "storage", "./data", "object store URL or directory")
	cmd.Flags().StringVar(&path, "path", "", "database path (key prefix) inside the store")
	cmd.AddCommand(newDebugSlateVerifyCommand())
	return cmd
}

// newDebugSlateVerifyCommand is `rockstream debug slate verify`: it reads
// every object of one slate database (or of every database in the store)
// and checks every checksum, printing each damaged or missing object and
// whether a restart needs it. It only reads, so it is safe while the
// server runs (objects written meanwhile may be reported missing or not
// yet seen); run it with the server stopped for a definite answer. It
// exits non-zero with the first damaged object's RS-5002 error.
func newDebugSlateVerifyCommand() *cobra.Command {
	var storage, path string
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check every checksum of every object of slate databases; name the damaged ones",
		Long: "Read every manifest, WAL object and SST (every block, filter, index and footer) of the slate database " +
			"under --path, or of every database in --storage when --path is empty (the server's are control and " +
			"shards/<n>), and check every checksum. Prints one line per damaged or missing object, marked NEEDED " +
			"when a restart reads it; exits non-zero if any is found.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := engine.OpenStore(cmd.Context(), storage)
			if err != nil {
				return err
			}
			_, err = slate.Verify(cmd.Context(), store, path, cmd.OutOrStdout())
			return err
		},
	}
	cmd.Flags().StringVar(&storage, "storage", "./data", "object store URL or directory")
	cmd.Flags().StringVar(&path, "path", "", "database path (key prefix) inside the store; empty: every database")
	return cmd
}

// newDebugCommand groups diagnostic subcommands.
func newDebugCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "debug", Short: "Diagnostic commands for operators"}
	cmd.AddCommand(newDebugSlateCommand(), newDebugBundleCommand())
	return cmd
}
