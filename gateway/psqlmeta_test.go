package gateway

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/gateway/gatewaytest"
)

// The psql 15 meta-command fixtures (package gatewaytest). With the
// protocol-test engine these are protocol tests: every catalog query psql
// sends travels through the gateway and back unchanged. Plugged into
// RockStream's engine, the same fixtures are the catalog acceptance test of
// issue 6.

func TestPsqlMetaQueriesFixture(t *testing.T) {
	queries, err := gatewaytest.PsqlMetaQueries()
	if err != nil {
		t.Fatal(err)
	}
	perCommand := map[string]int{}
	for _, q := range queries {
		perCommand[q.Command]++
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
	execOne(t, c, gatewaytest.MetaSchema)
	direct := connectDirect(t)
	for _, q := range queries {
		want, err := direct.Exec(ctx, q.SQL).ReadAll()
		if err != nil {
			t.Fatalf("%s on postgres: %v", q.Command, err)
		}
		got, err := c.Exec(ctx, q.SQL).ReadAll()
		if err != nil {
			t.Fatalf("%s through the gateway: %v\n%s", q.Command, err, q.SQL)
		}
		// Compare what psql shows: values and column names (catalog
		// types the protocol-test engine maps to text differ in OID).
		for _, r := range append(want, got...) {
			for i := range r.FieldDescriptions {
				r.FieldDescriptions[i].DataTypeOID, r.FieldDescriptions[i].DataTypeSize, r.FieldDescriptions[i].TypeModifier = 0, 0, 0
			}
		}
		if d := diffResults(want, got); d != "" {
			t.Errorf("%s:\n%s", q.Command, d)
		}
	}
}

func TestPsqlMetaCommands(t *testing.T) {
	c := connectGateway(t, "")
	execOne(t, c, gatewaytest.MetaSchema)
	host, port, _ := net.SplitHostPort(testAddr)
	got := gatewaytest.PsqlMetaOutput(t, host, port, "postgres", "postgres")
	want := gatewaytest.PsqlMetaOutput(t, testPG.socketDir, "", "postgres", "postgres")
	if got != want {
		t.Errorf("psql meta-commands through the gateway:\n%s\ndirect:\n%s", got, want)
	}
	if !strings.Contains(got, "orders_customer_idx") || !strings.Contains(got, "big_orders") || !strings.Contains(got, "totals") {
		t.Errorf("meta-command output lacks the schema's objects:\n%s", got)
	}
}
