package seeds

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSelectSeeds(t *testing.T) {
	if got := selectSeeds(0, 0, 3, 99); len(got) != 3 || got[0] != 1 || got[2] != 3 {
		t.Fatalf("default seeds %v, want [1 2 3]", got)
	}
	if got := selectSeeds(123, 5, 3, 99); len(got) != 1 || got[0] != 123 {
		t.Fatalf("-seed=123 gave %v", got)
	}
	a, b := selectSeeds(0, 4, 3, 99), selectSeeds(0, 4, 3, 100)
	if len(a) != 4 || a[1] != b[0] || a[0] == b[0] {
		t.Fatalf("fresh seeds %v %v: not derived from the base", a, b)
	}
}

func TestMixIsNeverZeroAndSpreads(t *testing.T) {
	seen := map[uint64]bool{}
	for i := range uint64(1000) {
		m := Mix(i)
		if m == 0 || seen[m] {
			t.Fatalf("Mix(%d) = %d: zero or repeated", i, m)
		}
		seen[m] = true
	}
}

func TestReplayCommandAndPanics(t *testing.T) {
	cmd := ReplayCommand(t, 42)
	want := "go test ./seeds -run '^TestReplayCommandAndPanics$' -seed=42 -v"
	if cmd != want {
		t.Fatalf("replay command %q, want %q", cmd, want)
	}
	res := RunOne(7, func(uint64) Result { panic("assertion failed: boom") })
	if res.Err == nil || !strings.Contains(res.Err.Error(), "boom") || !strings.HasPrefix(res.Header, "SEED=7") {
		t.Fatalf("a panic did not become a failure with a header: %+v", res)
	}
	res = RunOne(8, func(uint64) Result { return Result{Err: errors.New("x")} })
	if res.Err == nil {
		t.Fatal("an error was lost")
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	r := Regression{Workload: "register", Variant: "correct", Seed: 9, ExpectFailure: true, Error: "e", OpLog: "log\n"}
	path, err := Save(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != "register-correct-9.json" {
		t.Fatalf("path %s", path)
	}
	got, paths, err := Load(dir)
	if err != nil || len(got) != 1 || len(paths) != 1 || got[0].OpLog != "log\n" || got[0].Seed != 9 {
		t.Fatalf("load: %+v %v", got, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"nope":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(dir); err == nil {
		t.Fatal("unknown fields accepted")
	}
}
