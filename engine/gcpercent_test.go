package engine_test

import (
	"io"
	"log/slog"
	"runtime/debug"
	"testing"
	"time"

	"github.com/rockstream/rockstream/engine"
)

// TestServerGCPercent: the server collects garbage once the heap grew by
// twice what the last collection kept (GOGC 200), under its memory
// limit, unless GOGC is set in its environment, which wins.
func TestServerGCPercent(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	start := func() {
		t.Helper()
		run, err := engine.Start(engine.ServerOptions{
			Storage: t.TempDir(), Listen: "127.0.0.1:0", HTTP: "",
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Out: io.Discard,
		}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := run.Stop(time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("GOGC", "")
	start()
	if got := debug.SetGCPercent(77); got != 200 {
		t.Fatalf("GOGC unset: the server's GC percent is %d, want 200", got)
	}
	t.Setenv("GOGC", "77")
	start()
	if got := debug.SetGCPercent(100); got != 77 {
		t.Fatalf("GOGC=77 in the environment: the server set the GC percent to %d", got)
	}
}
