package gateway

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
)

// The psql 15 meta-command fixture (testdata/psql15_meta_queries.sql, the
// SQL psql 15.18 sends for each command, captured on the wire; see
// /work/shared/testdata/clients/README.md). The engine must answer these
// from its pg_catalog virtual tables (issue item 4). Two tests use it:
//
//   - TestPsqlMetaQueriesFixture checks the fixture's shape, and runs every
//     query through the gateway and directly against PostgreSQL, comparing
//     the rows the client sees.
//   - TestPsqlMetaCommands runs psql itself for every meta-command against
//     the gateway and against PostgreSQL and compares psql's output.
//
// With the protocol-test engine both are protocol tests; plugged into
// RockStream's engine (same schema created through the gateway), they are
// the catalog acceptance test of issue 6.

// metaSchema is the schema of the captures (README "Database used").
const metaSchema = `drop materialized view if exists totals; drop view if exists big_orders; drop table if exists orders;
CREATE TABLE orders (
  id       integer PRIMARY KEY,
  customer text NOT NULL,
  amount   numeric(10,2),
  ts       timestamptz DEFAULT now()
);
CREATE INDEX orders_customer_idx ON orders (customer);
CREATE VIEW big_orders AS SELECT id, customer, amount, ts FROM orders WHERE amount > 100;
CREATE MATERIALIZED VIEW totals AS SELECT customer, sum(amount) AS s FROM orders GROUP BY customer;`

// metaQuery is one query of the fixture.
type metaQuery struct {
	command string // the psql meta-command, e.g. `\d orders`
	sql     string
}

// loadPsqlMetaQueries reads the fixture.
func loadPsqlMetaQueries(t *testing.T) []metaQuery {
	t.Helper()
	raw, err := os.ReadFile("testdata/psql15_meta_queries.sql")
	if err != nil {
		t.Fatal(err)
	}
	var out []metaQuery
	const header = "-- ===== psql 15.18 meta-command: "
	for _, section := range strings.Split(string(raw), header)[1:] {
		title, body, _ := strings.Cut(section, "\n")
		command := strings.TrimSuffix(title, " =====")
		for _, q := range splitStatements(body) {
			out = append(out, metaQuery{command: command, sql: q})
		}
	}
	return out
}

func TestPsqlMetaQueriesFixture(t *testing.T) {
	queries := loadPsqlMetaQueries(t)
	perCommand := map[string]int{}
	for _, q := range queries {
		perCommand[q.command]++
	}
	// The counts the capture README states.
	want := map[string]int{`\l`: 1, `\dn`: 1, `\d`: 1, `\dt`: 1, `\dv`: 1, `\dm`: 1, `\di`: 1, `\d orders`: 9, `\d+ orders`: 9,
		`\d totals`: 8, `\df`: 1, `\du`: 1, `\dT`: 1}
	for cmd, n := range want {
		if perCommand[cmd] != n {
			t.Errorf("%s: %d queries in the fixture, want %d", cmd, perCommand[cmd], n)
		}
	}
	ctx := context.Background()
	c := connectGateway(t, "")
	execOne(t, c, metaSchema)
	direct := connectDirect(t)
	for _, q := range queries {
		want, err := direct.Exec(ctx, q.sql).ReadAll()
		if err != nil {
			t.Fatalf("%s on postgres: %v", q.command, err)
		}
		got, err := c.Exec(ctx, q.sql).ReadAll()
		if err != nil {
			t.Fatalf("%s through the gateway: %v\n%s", q.command, err, q.sql)
		}
		// Compare what psql shows: values and column names (catalog
		// types the protocol-test engine maps to text differ in OID).
		for _, r := range append(want, got...) {
			for i := range r.FieldDescriptions {
				r.FieldDescriptions[i].DataTypeOID, r.FieldDescriptions[i].DataTypeSize, r.FieldDescriptions[i].TypeModifier = 0, 0, 0
			}
		}
		if d := diffResults(want, got); d != "" {
			t.Errorf("%s:\n%s", q.command, d)
		}
	}
}

func TestPsqlMetaCommands(t *testing.T) {
	requireTool(t, "psql", "apt-get install -y postgresql-client-15")
	c := connectGateway(t, "")
	execOne(t, c, metaSchema)
	// One psql process per side, one -c per meta-command (the machine is
	// shared; psql start-up dominates otherwise).
	var args []string
	for _, cmd := range []string{`\l`, `\dn`, `\d`, `\dt`, `\dv`, `\dm`, `\di`, `\d orders`, `\d+ orders`, `\d totals`, `\d+ totals`, `\df`, `\du`, `\dT`} {
		args = append(args, "-c", `\echo '== `+cmd+`'`, "-c", cmd)
	}
	base := []string{"-X", "-q", "-v", "ON_ERROR_STOP=1", "-U", "postgres", "-d", "postgres"}
	host, port, _ := net.SplitHostPort(testAddr)
	got := runTool(t, "", "psql", append(append(base, "-h", host, "-p", port), args...)...)
	want := runTool(t, "", "psql", append(append(base, "-h", testPG.socketDir), args...)...)
	if got != want {
		t.Errorf("psql meta-commands through the gateway:\n%s\ndirect:\n%s", got, want)
	}
	if !strings.Contains(got, "orders_customer_idx") || !strings.Contains(got, "big_orders") || !strings.Contains(got, "totals") {
		t.Errorf("meta-command output lacks the schema's objects:\n%s", got)
	}
}
