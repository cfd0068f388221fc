package sim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/slate/objstore"
)

// funcActor adapts a function to runtime.Actor.
type funcActor func(ctx runtime.Context, msg runtime.Message)

func (f funcActor) Receive(ctx runtime.Context, msg runtime.Message) { f(ctx, msg) }

func quiet(seed uint64) *Sim {
	cfg := QuietConfig()
	return New(Options{Seed: seed, Config: &cfg})
}

func TestEventsRunInTimeThenScheduleOrder(t *testing.T) {
	s := quiet(1)
	var order []string
	s.At(2*time.Millisecond, func() { order = append(order, "t2-a") })
	s.At(time.Millisecond, func() { order = append(order, "t1") })
	s.At(2*time.Millisecond, func() { order = append(order, "t2-b") })
	s.At(0, func() { order = append(order, "t0") })
	if err := s.RunFor(10 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(order); got != "[t0 t1 t2-a t2-b]" {
		t.Fatalf("order %s", got)
	}
	if s.Now() != 10*time.Millisecond {
		t.Fatalf("RunFor did not advance to its end: %v", s.Now())
	}
}

type echo struct{ N int }

// TestCrashDiscardsMemoryAndTimersRestartRecreates: a crash loses memory,
// timers and queued messages; restart re-creates roots from their factory
// with Started; the durable store survives; Asks to the crashed actor fail.
func TestCrashDiscardsMemoryAndTimersRestartRecreates(t *testing.T) {
	s := quiet(1)
	if err := s.AddProcess("p", ProcessOptions{Crashable: true}); err != nil {
		t.Fatal(err)
	}
	instances, timersFired := 0, 0
	factory := func() runtime.Actor {
		instances++
		count := 0
		return funcActor(func(ctx runtime.Context, msg runtime.Message) {
			switch m := msg.(type) {
			case runtime.Started:
				ctx.After(50*time.Millisecond, "tick")
			case string:
				timersFired++
			case echo:
				count++
				if _, err := ctx.Store().Put(context.Background(), "k", []byte(fmt.Sprint(m.N))); err != nil {
					t.Errorf("put: %v", err)
				}
				ctx.Reply(count)
			case struct{}:
				// never replies
			}
		})
	}
	if err := s.Spawn("p", "a", factory); err != nil {
		t.Fatal(err)
	}
	if err := s.Spawn("p", "a", factory); !errors.Is(err, runtime.ErrDuplicateActor) {
		t.Fatalf("duplicate spawn: %v", err)
	}
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		got, err := s.Ask(ctx, "a", echo{N: i})
		if err != nil || got != i {
			t.Fatalf("ask %d: %v %v", i, got, err)
		}
	}
	var pendingErr error
	s.AskAsync("a", struct{}{}, func(_ runtime.Message, err error) { pendingErr = err })
	s.Crash("p")
	if s.ProcessUp("p") {
		t.Fatal("crashed process still up")
	}
	if _, err := s.Ask(ctx, "a", echo{}); !errors.Is(err, runtime.ErrActorGone) {
		t.Fatalf("ask of crashed actor: %v", err)
	}
	if err := s.RunFor(100 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(pendingErr, runtime.ErrActorGone) {
		t.Fatalf("pending ask on crash: %v", pendingErr)
	}
	if timersFired != 0 {
		t.Fatalf("a timer of the crashed process fired")
	}
	s.Restart("p")
	if instances != 2 {
		t.Fatalf("restart made %d instances, want 2", instances)
	}
	got, err := s.Ask(ctx, "a", echo{N: 9})
	if err != nil || got != 1 {
		t.Fatalf("memory survived the crash: count %v %v", got, err)
	}
	obj, err := s.Durable("p").Get(ctx, "k")
	if err != nil || string(obj.Data) != "9" {
		t.Fatalf("durable store: %q %v", obj.Data, err)
	}
	if err := s.RunFor(100 * time.Millisecond); err != nil || timersFired != 1 {
		t.Fatalf("restarted actor's timer: fired %d, %v", timersFired, err)
	}
	if err := s.Stop("a"); err != nil {
		t.Fatal(err)
	}
	if err := s.RunFor(time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ask(ctx, "a", echo{}); !errors.Is(err, runtime.ErrActorGone) {
		t.Fatalf("ask of stopped actor: %v", err)
	}
}

// TestPartitions: a symmetric partition cuts both directions, a one-way
// partition only one, and healing restores delivery.
func TestPartitions(t *testing.T) {
	s := quiet(1)
	received := map[string]int{}
	for _, name := range []string{"a", "b"} {
		name := name
		peer := map[string]runtime.ActorID{"a": "b", "b": "a"}[name]
		if err := s.Spawn(name, runtime.ActorID(name), func() runtime.Actor {
			return funcActor(func(ctx runtime.Context, msg runtime.Message) {
				switch msg.(type) {
				case string:
					ctx.Send(peer, echo{})
				case echo:
					received[name]++
				}
			})
		}); err != nil {
			t.Fatal(err)
		}
	}
	poke := func() {
		s.AskAsync("a", "send", func(runtime.Message, error) {})
		s.AskAsync("b", "send", func(runtime.Message, error) {})
		if err := s.RunFor(100 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	poke()
	if received["a"] != 1 || received["b"] != 1 {
		t.Fatalf("no partition: %v", received)
	}
	links := s.Partition([]string{"a"}, false)
	poke()
	if received["a"] != 1 || received["b"] != 1 {
		t.Fatalf("symmetric partition leaked: %v", received)
	}
	s.HealPartition(links)
	oneWay := s.Partition([]string{"a"}, true) // a -> b cut, b -> a open
	poke()
	if received["a"] != 2 || received["b"] != 1 {
		t.Fatalf("one-way partition: %v", received)
	}
	s.HealPartition(oneWay)
	poke()
	if received["a"] != 3 || received["b"] != 2 {
		t.Fatalf("healed: %v", received)
	}
}

// TestClocksAreSkewedDriftingAndMonotonic checks per-process clocks.
func TestClocksAreSkewedDriftingAndMonotonic(t *testing.T) {
	cfg := QuietConfig()
	cfg.ClockSkewMax = time.Second
	cfg.ClockDriftPPMMax = 500
	s := New(Options{Seed: 3, Config: &cfg})
	nows := map[string][]time.Time{}
	for _, p := range []string{"x", "y"} {
		p := p
		if err := s.Spawn(p, runtime.ActorID(p), func() runtime.Actor {
			return funcActor(func(ctx runtime.Context, msg runtime.Message) {
				nows[p] = append(nows[p], ctx.Now())
				if len(nows[p]) < 5 {
					ctx.After(time.Second, "tick")
				}
			})
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RunFor(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if nows["x"][0].Equal(nows["y"][0]) {
		t.Fatal("two processes share a clock reading: no skew")
	}
	for _, p := range []string{"x", "y"} {
		for i := 1; i < len(nows[p]); i++ {
			d := nows[p][i].Sub(nows[p][i-1])
			if d <= 0 {
				t.Fatalf("%s clock went backwards", p)
			}
			// A 1s timer measured on the process's own clock is 1s give or
			// take nothing but rounding (drift applies to both).
			if diff := d - time.Second; diff < -time.Microsecond || diff > time.Microsecond {
				t.Fatalf("%s: 1s timer measured %v on its own clock", p, d)
			}
		}
	}
}

// TestStoreLatencyIsChargedToTheCaller: latency advances the caller's
// ctx.Now and delays its next message.
func TestStoreLatencyIsChargedToTheCaller(t *testing.T) {
	cfg := QuietConfig()
	cfg.Store = FaultConfig{LatencyBase: 10 * time.Millisecond}
	s := New(Options{Seed: 1, Config: &cfg})
	var before, after time.Time
	if err := s.Spawn("p", "a", func() runtime.Actor {
		return funcActor(func(ctx runtime.Context, msg runtime.Message) {
			if _, ok := msg.(string); ok {
				before = ctx.Now()
				_, _ = ctx.Store().Put(context.Background(), "k", nil)
				_, _ = ctx.Store().Get(context.Background(), "k")
				after = ctx.Now()
				ctx.Reply(nil)
			}
		})
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ask(context.Background(), "a", "go"); err != nil {
		t.Fatal(err)
	}
	if d := after.Sub(before); d < 20*time.Millisecond || d > 21*time.Millisecond {
		t.Fatalf("two 10ms calls advanced the actor's clock by %v", d)
	}
}

func TestMailboxOverflowDrops(t *testing.T) {
	cfg := QuietConfig()
	cfg.MailboxMessagesMax = 4
	s := New(Options{Seed: 1, Config: &cfg})
	got := 0
	if err := s.Spawn("p", "sink", func() runtime.Actor {
		return funcActor(func(ctx runtime.Context, msg runtime.Message) {
			if _, ok := msg.(echo); ok {
				got++
			}
		})
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Spawn("p", "flood", func() runtime.Actor {
		return funcActor(func(ctx runtime.Context, msg runtime.Message) {
			if _, ok := msg.(runtime.Started); ok {
				for range 10 {
					ctx.Send("sink", echo{})
				}
			}
		})
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.RunFor(time.Second); err != nil {
		t.Fatal(err)
	}
	if got != 4 || s.Stats().Dropped != 6 {
		t.Fatalf("got %d, dropped %d; want 4 and 6", got, s.Stats().Dropped)
	}
}

func TestNamedStreamsAreIndependent(t *testing.T) {
	a1 := NewStream(1, "a").Uint64()
	a2 := NewStream(1, "a").Uint64()
	b := NewStream(1, "b").Uint64()
	a3 := NewStream(2, "a").Uint64()
	if a1 != a2 || a1 == b || a1 == a3 {
		t.Fatalf("streams: %x %x %x %x", a1, a2, b, a3)
	}
}

func TestInvariantViolationStopsTheRun(t *testing.T) {
	s := quiet(1)
	n := 0
	s.Invariant("n below 3", func() error {
		if n >= 3 {
			return fmt.Errorf("n=%d", n)
		}
		return nil
	})
	for i := range 10 {
		s.At(time.Duration(i)*time.Millisecond, func() { n++ })
	}
	err := s.RunFor(time.Second)
	if err == nil || n != 3 {
		t.Fatalf("err %v n %d: the run did not stop at the first violation", err, n)
	}
}

func TestLivenessFailsWhenNotConverged(t *testing.T) {
	s := quiet(1)
	s.Heal()
	if err := s.RunUntil(func() bool { return false }, time.Second); !errors.Is(err, ErrLiveness) {
		t.Fatalf("RunUntil: %v, want ErrLiveness", err)
	}
}

// TestFaultyStoreAlone exercises every injected object-store fault through
// the standalone constructor slate's tests use.
func TestFaultyStoreAlone(t *testing.T) {
	ctx := context.Background()
	t.Run("transient", func(t *testing.T) {
		f := NewFaultyStore(objstore.NewMemory(), NewStream(1, "t"), FaultConfig{TransientProbability: 1})
		if _, err := f.Put(ctx, "k", nil); !errors.Is(err, objstore.ErrTransient) {
			t.Fatalf("put: %v", err)
		}
		if _, err := f.Inner().Get(ctx, "k"); !errors.Is(err, objstore.ErrNotFound) {
			t.Fatal("a transient write was applied")
		}
		if _, err := f.Get(ctx, "k"); !errors.Is(err, objstore.ErrTransient) || !IsInjected(err) {
			t.Fatalf("get: %v", err)
		}
	})
	t.Run("ambiguous", func(t *testing.T) {
		inner := objstore.NewMemory()
		f := NewFaultyStore(inner, NewStream(1, "a"), FaultConfig{AmbiguousProbability: 1, AmbiguousAppliedFraction: 1})
		if _, err := f.PutIfAbsent(ctx, "k", []byte("v")); !errors.Is(err, objstore.ErrAmbiguous) {
			t.Fatalf("put: %v", err)
		}
		if obj, err := inner.Get(ctx, "k"); err != nil || string(obj.Data) != "v" {
			t.Fatal("an ambiguous-applied write was not applied")
		}
		lost := NewFaultyStore(objstore.NewMemory(), NewStream(1, "a"), FaultConfig{AmbiguousProbability: 1, AmbiguousAppliedFraction: 0})
		if _, err := lost.Put(ctx, "k", nil); !errors.Is(err, objstore.ErrAmbiguous) {
			t.Fatalf("put: %v", err)
		}
		if _, err := lost.Inner().Get(ctx, "k"); !errors.Is(err, objstore.ErrNotFound) {
			t.Fatal("an ambiguous-lost write was applied")
		}
	})
	t.Run("crash-after-write", func(t *testing.T) {
		f := NewFaultyStore(objstore.NewMemory(), NewStream(1, "c"), FaultConfig{CrashAfterWriteProbability: 1})
		if _, err := f.Put(ctx, "k", nil); err != nil {
			t.Fatalf("without a crash hook the fault is off: %v", err)
		}
		crashed := false
		f.SetCrashHook(func() { crashed = true })
		if _, err := f.Put(ctx, "k2", nil); err != nil || !crashed {
			t.Fatalf("crash hook not called: %v %v", crashed, err)
		}
		if _, err := f.Inner().Get(ctx, "k2"); err != nil {
			t.Fatal("crash-after-write lost the write")
		}
	})
	t.Run("stale-list", func(t *testing.T) {
		f := NewFaultyStore(objstore.NewMemory(), NewStream(1, "s"), FaultConfig{StaleListWindow: 1})
		_, _ = f.Put(ctx, "p/a", []byte("1"))
		f.cfg.StaleListProbability = 1
		_, _ = f.Put(ctx, "p/b", []byte("2"))
		if err := f.Delete(ctx, "p/a"); err != nil {
			t.Fatal(err)
		}
		list, err := f.List(ctx, "p/")
		if err != nil {
			t.Fatal(err)
		}
		// Undoing the last write (the delete) brings p/a back.
		if len(list) != 2 || list[0].Key != "p/a" || list[1].Key != "p/b" {
			t.Fatalf("stale list %+v, want p/a and p/b", list)
		}
		f.SetFaultsEnabled(false)
		list, _ = f.List(ctx, "p/")
		if len(list) != 1 || list[0].Key != "p/b" {
			t.Fatalf("fresh list %+v, want p/b", list)
		}
	})
	t.Run("latency", func(t *testing.T) {
		var total time.Duration
		f := NewFaultyStore(objstore.NewMemory(), NewStream(1, "l"), FaultConfig{LatencyBase: time.Millisecond, LatencyTailMean: time.Millisecond})
		f.SetLatencySink(func(d time.Duration) { total += d })
		for range 100 {
			_, _ = f.Get(ctx, "k")
		}
		if total < 100*time.Millisecond || total != f.Stats().Latency {
			t.Fatalf("latency %v, stats %v", total, f.Stats().Latency)
		}
	})
}

func TestEventLog(t *testing.T) {
	var log strings.Builder
	cfg := QuietConfig()
	s := New(Options{Seed: 1, Config: &cfg, EventLog: &log})
	if err := s.Spawn("p", "a", func() runtime.Actor {
		return funcActor(func(ctx runtime.Context, msg runtime.Message) {
			if _, ok := msg.(echo); ok {
				ctx.Reply(msg)
			}
		})
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ask(context.Background(), "a", echo{N: 5}); err != nil {
		t.Fatal(err)
	}
	s.Crash("p")
	for _, want := range []string{"deliver  -> a runtime.Started", "deliver  -> a sim.echo {N:5}", "crash p"} {
		if !strings.Contains(log.String(), want) {
			t.Fatalf("event log lacks %q:\n%s", want, log.String())
		}
	}
}

func TestAskFromInsideTheSimulationPanics(t *testing.T) {
	s := quiet(1)
	if err := s.Spawn("p", "a", func() runtime.Actor {
		return funcActor(func(ctx runtime.Context, msg runtime.Message) { ctx.Reply(msg) })
	}); err != nil {
		t.Fatal(err)
	}
	var recovered any
	s.At(time.Millisecond, func() {
		defer func() { recovered = recover() }()
		_, _ = s.Ask(context.Background(), "a", echo{})
	})
	if err := s.RunFor(10 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if recovered == nil {
		t.Fatal("a nested Ask did not panic")
	}
	if got, err := s.Ask(context.Background(), "a", echo{N: 1}); err != nil || got != (echo{N: 1}) {
		t.Fatalf("Ask from outside after the panic: %v %v", got, err)
	}
}
