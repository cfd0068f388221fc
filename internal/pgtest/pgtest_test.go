package pgtest

import (
	"context"
	"testing"
)

func TestMain(m *testing.M) { Main(m) }

func TestStartAndQuery(t *testing.T) {
	c := Connect(t)
	ctx := context.Background()
	text, isNull, state, err := QueryText(ctx, c, "SELECT 0.1::float8 + 0.2::float8")
	if err != nil || isNull || text != "0.30000000000000004" {
		t.Fatalf("got %q null=%v state=%q err=%v", text, isNull, state, err)
	}
	_, _, state, err = QueryText(ctx, c, "SELECT 1/0")
	if err == nil || state != "22012" {
		t.Fatalf("1/0: state %q err %v", state, err)
	}
	_, isNull, _, err = QueryText(ctx, c, "SELECT NULL::int")
	if err != nil || !isNull {
		t.Fatalf("NULL: null=%v err=%v", isNull, err)
	}
	// Reuse: a second Start returns the same server.
	if Start(t) != Start(t) {
		t.Fatal("Start booted a second server")
	}
}
