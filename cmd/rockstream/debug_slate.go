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
	return cmd
}

// newDebugCommand groups diagnostic subcommands.
func newDebugCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "debug", Short: "Diagnostic commands for operators"}
	cmd.AddCommand(newDebugSlateCommand())
	return cmd
}
