//go:build tools

// Package deps pins the modules ARCHITECTURE.md §10 chose, so `go mod tidy` keeps them
// before every one has a first user.
package deps

import (
	_ "github.com/anishathalye/porcupine"
	_ "github.com/apache/arrow-go/v18/arrow"
	_ "github.com/aws/aws-sdk-go-v2/config"
	_ "github.com/aws/aws-sdk-go-v2/service/s3"
	_ "github.com/cockroachdb/apd/v3"
	_ "github.com/cockroachdb/datadriven"
	_ "github.com/cockroachdb/pebble/v2"
	_ "github.com/jackc/pgx/v5"
	_ "github.com/jeroenrinzema/psql-wire"
	_ "github.com/johannesboyne/gofakes3"
	_ "github.com/lib/pq"
	_ "github.com/pganalyze/pg_query_go/v6"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/spf13/cobra"
	_ "pgregory.net/rapid"
)
