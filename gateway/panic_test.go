package gateway

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestPanicIsRecoveredEverywhere extends TestPanicIsRecovered (a panic in
// the simple protocol's Prepare) to the other paths a statement takes: the
// extended protocol's Parse and Execute, COPY FROM's data path and COPY
// TO. Each gets XX000 and the connection and the server keep serving.
func TestPanicIsRecoveredEverywhere(t *testing.T) {
	ctx := context.Background()
	c := connectGateway(t, "")
	isPanicError := func(what string, err error) {
		t.Helper()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "XX000" || !strings.HasPrefix(pe.Detail, "RS-9000 internal.unexpected") {
			t.Errorf("%s: %v, want XX000 RS-9000", what, err)
		}
		if got := scalar(t, c, "select 41 + 1"); got != "42" {
			t.Fatalf("connection after a panic in %s: %q", what, got)
		}
	}
	_, err := c.Prepare(ctx, "panicky", "select 1 /*panic*/", nil)
	isPanicError("Parse", err)
	res := c.ExecParams(ctx, "select $1::int as panic_next", [][]byte{[]byte("1")}, nil, nil, nil).Read()
	isPanicError("Execute", res.Err)
	_, err = c.Exec(ctx, "select 1 as panic_next").ReadAll()
	isPanicError("a simple query's rows", err)

	if _, err := c.Exec(ctx, "drop table if exists panic_copy; create table panic_copy (v text)").ReadAll(); err != nil {
		t.Fatal(err)
	}
	_, err = c.CopyFrom(ctx, strings.NewReader("ok\npanic\nok\n"), "COPY panic_copy FROM STDIN")
	isPanicError("COPY FROM", err)
	var out bytes.Buffer
	_, err = c.CopyTo(ctx, &out, "COPY (select 1 as panic_next) TO STDOUT")
	isPanicError("COPY TO", err)
	if _, err := c.CopyFrom(ctx, strings.NewReader("a\nb\n"), "COPY panic_copy FROM STDIN"); err != nil {
		t.Errorf("COPY FROM after the panics: %v", err)
	}
	if got := scalar(t, c, "select count(*) from panic_copy"); got != "2" {
		t.Errorf("rows after the panicking COPY rolled back: %s, want 2", got)
	}
	other := connectGateway(t, "")
	if got := scalar(t, other, "select 1"); got != "1" {
		t.Error("server after the panics")
	}
}
