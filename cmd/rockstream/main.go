// Command rockstream is the single RockStream binary: `rockstream start`
// runs a server; further subcommands (sql, explain, ...) join it as they are
// built.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "rockstream:", err)
		os.Exit(1)
	}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "rockstream",
		Short:         "RockStream: streaming SQL with incremental view maintenance",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newStartCommand(), newSQLCommand(), newExplainCommand(), newDebugCommand(), newBenchCommand(), newDevCommand())
	return root
}
