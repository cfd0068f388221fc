package assert

import (
	"errors"
	"strings"
	"testing"
)

func expectFailure(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		failure, ok := r.(*Failure)
		if !ok {
			t.Fatalf("panic value %#v, want *Failure", r)
		}
		if !strings.Contains(failure.Error(), want) {
			t.Fatalf("failure %q does not mention %q", failure.Error(), want)
		}
	}()
	f()
}

func TestAssertions(t *testing.T) {
	That(true, "never")
	Equal(3, 3, "three")
	NoError(nil, "nil")
	expectFailure(t, "seq 4 not above 5", func() { That(false, "seq %d not above %d", 4, 5) })
	expectFailure(t, "rows: got 2, want 3", func() { Equal(2, 3, "rows") })
	expectFailure(t, "decoding: boom", func() { NoError(errors.New("boom"), "decoding") })
	expectFailure(t, "illegal a -> b", func() { Unreachable("illegal %s -> %s", "a", "b") })
}
