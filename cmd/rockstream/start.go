package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// errServerNotBuilt is returned by `start` until the embedded server exists.
// README.md promises that start says clearly what is missing; it must never
// pretend to serve.
var errServerNotBuilt = errors.New("the RockStream server is not built yet: `start` cannot serve SQL in this version")

func newStartCommand() *cobra.Command {
	var storage string
	var listen string
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Start RockStream (embedded profile: one process, storage under --storage)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.ErrOrStderr(), "rockstream start: storage=%s listen=%s\n", storage, listen)
			fmt.Fprintln(cmd.ErrOrStderr(), "rockstream start: NOT AVAILABLE YET: the pgwire gateway, SQL engine and storage are still being built; nothing is listening.")
			return errServerNotBuilt
		},
	}
	cmd.Flags().StringVar(&storage, "storage", "./data", "directory holding all durable state")
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:5432", "PostgreSQL wire protocol address")
	return cmd
}
