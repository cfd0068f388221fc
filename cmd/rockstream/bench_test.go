package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// TestBenchCommandsSmoke runs `rockstream bench nexmark` and `rockstream
// bench ivm` on tiny inputs: flag wiring, table output and files.
func TestBenchCommandsSmoke(t *testing.T) {
	out := t.TempDir()
	for _, args := range [][]string{
		{"bench", "nexmark", "--events=2000", "--batch=1000", "--probes=2", "--queries=q0,q2", "--out=" + out},
		{"bench", "ivm", "--rows=1000", "--changes=0.01", "--reps=1", "--pg=" + pgtest.Start(t), "--out=" + out},
	} {
		root := newRootCommand()
		var stdout, stderr bytes.Buffer
		root.SetOut(&stdout)
		root.SetErr(&stderr)
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
		if !strings.Contains(stdout.String(), "wrote ") {
			t.Fatalf("%v: output %q", args, stdout.String())
		}
	}
	for _, f := range []string{"nexmark.csv", "nexmark.svg", "ivm.csv", "ivm.svg"} {
		if b, err := os.ReadFile(filepath.Join(out, f)); err != nil || len(b) == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
}
