// Package gatewaytest holds reusable fixtures for testing a pgwire server
// with real clients: the SQL psql 15 sends for its meta-commands (captured on
// the wire against PostgreSQL 15.18, see shared/testdata/clients/README.md),
// the schema those captures ran against, and a helper that runs psql's
// meta-commands and returns what psql prints.
//
// The gateway's own tests run these through the gateway with a
// PostgreSQL-backed protocol-test engine; the engine's tests run the same
// fixtures against RockStream's catalog (issue 6, item 4) and compare with
// PostgreSQL's answers.
package gatewaytest

import (
	_ "embed"
	"os/exec"
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

//go:embed psql15_meta_queries.sql
var psqlMetaSQL string

// MetaSchema is the schema of the captures (README "Database used"),
// preceded by DROPs so that it can be run repeatedly.
const MetaSchema = `drop materialized view if exists totals; drop view if exists big_orders; drop table if exists orders;
CREATE TABLE orders (
  id       integer PRIMARY KEY,
  customer text NOT NULL,
  amount   numeric(10,2),
  ts       timestamptz DEFAULT now()
);
CREATE INDEX orders_customer_idx ON orders (customer);
CREATE VIEW big_orders AS SELECT id, customer, amount, ts FROM orders WHERE amount > 100;
CREATE MATERIALIZED VIEW totals AS SELECT customer, sum(amount) AS s FROM orders GROUP BY customer;`

// MetaCommands are the psql meta-commands of issue 6's acceptance list.
//
//lint:immutable a constant list.
var MetaCommands = []string{`\l`, `\dn`, `\d`, `\dt`, `\dv`, `\dm`, `\di`, `\d orders`, `\d+ orders`, `\d totals`, `\d+ totals`, `\df`, `\du`, `\dT`}

// MetaQuery is one catalog query psql 15 sends.
type MetaQuery struct {
	// Command is the meta-command, e.g. `\d orders`.
	Command string
	// SQL is one statement, as psql sent it (OIDs in `\d orders` queries
	// are those of the capture: 16384 for orders, 16397 for totals).
	SQL string
}

// PsqlMetaQueries returns every query of the capture, in order.
func PsqlMetaQueries() ([]MetaQuery, error) {
	var out []MetaQuery
	const header = "-- ===== psql 15.18 meta-command: "
	for _, section := range strings.Split(psqlMetaSQL, header)[1:] {
		title, body, _ := strings.Cut(section, "\n")
		command := strings.TrimSuffix(title, " =====")
		stmts, err := pg_query.SplitWithScanner(body, true)
		if err != nil {
			return nil, err
		}
		for _, q := range stmts {
			if strings.TrimSpace(q) != "" {
				out = append(out, MetaQuery{Command: command, SQL: q})
			}
		}
	}
	return out, nil
}

// PsqlMetaOutput runs psql once with every MetaCommands entry (each preceded
// by an `== command` echo line) against host:port (host may be a Unix socket
// directory, then port may be "") and returns what psql printed. It fails
// the test, with the install command, when psql is missing.
func PsqlMetaOutput(t testing.TB, host, port, user, database string) string {
	t.Helper()
	if _, err := exec.LookPath("psql"); err != nil {
		t.Fatalf("psql is not installed; install it with: apt-get install -y postgresql-client-15")
	}
	args := []string{"-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", host, "-U", user, "-d", database}
	if port != "" {
		args = append(args, "-p", port)
	}
	for _, cmd := range MetaCommands {
		args = append(args, "-c", `\echo '== `+cmd+`'`, "-c", cmd)
	}
	out, err := exec.Command("psql", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("psql meta-commands against %s:%s: %v\n%s", host, port, err, out)
	}
	return string(out)
}
