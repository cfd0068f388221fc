package sim

import (
	"testing"
	"time"

	"github.com/rockstream/rockstream/runtime"
)

// TestCPUModelChargesWorkOnCores: two actors of one process each do 10ms
// of work per message; on one core they take turns (the second waits),
// on two they run side by side, and a reply leaves after its work.
func TestCPUModelChargesWorkOnCores(t *testing.T) {
	for _, c := range []struct {
		cores int
		want  time.Duration
	}{{1, 40 * time.Millisecond}, {2, 20 * time.Millisecond}} {
		cfg := QuietConfig()
		var per [runtime.WorkKinds]time.Duration
		per[runtime.WorkStepRow] = time.Millisecond
		s := New(Options{Seed: 1, Config: &cfg, CPU: &CPUModel{Cores: c.cores, PerUnit: per}})
		worker := func() runtime.Actor {
			return funcActor(func(ctx runtime.Context, msg runtime.Message) {
				if _, ok := msg.(string); ok {
					runtime.Report(ctx, runtime.WorkStepRow, 10)
					ctx.Reply("done")
				}
			})
		}
		for _, id := range []runtime.ActorID{"a", "b"} {
			if err := s.Spawn("p", id, worker); err != nil {
				t.Fatal(err)
			}
		}
		done := 0
		var last time.Duration
		for range 2 {
			for _, id := range []runtime.ActorID{"a", "b"} {
				s.AskAsync(id, "work", func(runtime.Message, error) { done++; last = s.Now() })
			}
		}
		if err := s.RunUntil(func() bool { return done == 4 }, time.Second); err != nil {
			t.Fatal(err)
		}
		if last != c.want {
			t.Fatalf("%d cores: the last reply left at %v, want %v", c.cores, last, c.want)
		}
		st := s.CPUStats("p")
		if st.Busy != 40*time.Millisecond || st.Units[runtime.WorkStepRow] != 40 {
			t.Fatalf("%d cores: stats %+v", c.cores, st)
		}
		if (st.Waits > 0) != (c.cores == 1) {
			t.Fatalf("%d cores: %d messages waited for a core", c.cores, st.Waits)
		}
	}
}
