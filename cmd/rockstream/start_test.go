package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestStartSaysNotBuilt pins the README promise: until the server exists,
// `start` fails loudly instead of pretending to serve.
func TestStartSaysNotBuilt(t *testing.T) {
	root := newRootCommand()
	var stderr bytes.Buffer
	root.SetErr(&stderr)
	root.SetOut(&stderr)
	root.SetArgs([]string{"start"})
	err := root.Execute()
	if !errors.Is(err, errServerNotBuilt) {
		t.Fatalf("start returned %v, want errServerNotBuilt", err)
	}
	if !strings.Contains(stderr.String(), "NOT AVAILABLE YET") {
		t.Fatalf("start output does not say what is missing: %q", stderr.String())
	}
}
