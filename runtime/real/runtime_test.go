package real

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/slate/objstore"
)

// funcActor adapts a function to runtime.Actor.
type funcActor func(ctx runtime.Context, msg runtime.Message)

func (f funcActor) Receive(ctx runtime.Context, msg runtime.Message) { f(ctx, msg) }

type ping struct{ n int }
type getLog struct{}

// recorder records every message it receives and answers getLog with a copy.
type recorder struct {
	mu  sync.Mutex
	log []runtime.Message
}

func (r *recorder) Receive(ctx runtime.Context, msg runtime.Message) {
	if _, ok := msg.(getLog); ok {
		r.mu.Lock()
		ctx.Reply(append([]runtime.Message(nil), r.log...))
		r.mu.Unlock()
		return
	}
	r.mu.Lock()
	r.log = append(r.log, msg)
	r.mu.Unlock()
}

func newTestRuntime(opts Options) *Runtime {
	if opts.Store == nil {
		opts.Store = objstore.NewMemory()
	}
	return New(opts)
}

func shutdown(t *testing.T, rt *Runtime) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

func TestStartedFirstFIFOAndStopping(t *testing.T) {
	rt := newTestRuntime(Options{})
	rec := &recorder{}
	if err := rt.Spawn("p", "a", func() runtime.Actor { return rec }); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 100 {
		if err := rt.Tell(ctx, "a", ping{i}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := rt.Ask(ctx, "a", getLog{})
	if err != nil {
		t.Fatal(err)
	}
	log := got.([]runtime.Message)
	if len(log) != 101 {
		t.Fatalf("got %d messages, want 101", len(log))
	}
	if _, ok := log[0].(runtime.Started); !ok {
		t.Fatalf("first message %T, want Started", log[0])
	}
	for i, m := range log[1:] {
		if m.(ping).n != i {
			t.Fatalf("message %d is %v: not FIFO", i, m)
		}
	}
	if err := rt.Spawn("p", "a", func() runtime.Actor { return rec }); !errors.Is(err, runtime.ErrDuplicateActor) {
		t.Fatalf("duplicate spawn: %v", err)
	}
	if err := rt.Stop("a"); err != nil {
		t.Fatal(err)
	}
	shutdown(t, rt)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if _, ok := rec.log[len(rec.log)-1].(runtime.Stopping); !ok {
		t.Fatalf("last message %T, want Stopping", rec.log[len(rec.log)-1])
	}
	if _, err := rt.Ask(ctx, "a", getLog{}); !errors.Is(err, runtime.ErrActorGone) {
		t.Fatalf("ask after stop: %v, want ErrActorGone", err)
	}
}

func TestAskCancellationAndGone(t *testing.T) {
	rt := newTestRuntime(Options{})
	defer shutdown(t, rt)
	release := make(chan struct{})
	silent := funcActor(func(ctx runtime.Context, msg runtime.Message) {
		if _, ok := msg.(ping); ok {
			<-release // never replies to ping, and holds the actor busy
		}
	})
	if err := rt.Spawn("p", "silent", func() runtime.Actor { return silent }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := rt.Ask(ctx, "silent", ping{})
		errc <- err
	}()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled ask: %v, want context.Canceled", err)
	}
	// An Ask queued behind the busy message fails with ErrActorGone when the
	// actor stops before handling it.
	go func() {
		_, err := rt.Ask(context.Background(), "silent", getLog{})
		errc <- err
	}()
	for rt.lookup("silent").mailbox.len() == 0 {
		time.Sleep(time.Millisecond)
	}
	if err := rt.Stop("silent"); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-errc; !errors.Is(err, runtime.ErrActorGone) {
		t.Fatalf("ask of stopped actor: %v, want ErrActorGone", err)
	}
	if _, err := rt.Ask(context.Background(), "nobody", ping{}); !errors.Is(err, runtime.ErrActorGone) {
		t.Fatalf("ask of unknown actor: %v", err)
	}
}

func TestBackpressureForExternalSenders(t *testing.T) {
	rt := newTestRuntime(Options{MailboxMessagesMax: 2, MailboxOverflowMessagesMax: 2})
	defer shutdown(t, rt)
	release := make(chan struct{})
	var handled sync.WaitGroup
	blocker := funcActor(func(ctx runtime.Context, msg runtime.Message) {
		if _, ok := msg.(ping); ok {
			<-release
			handled.Done()
		}
	})
	if err := rt.Spawn("p", "b", func() runtime.Actor { return blocker }); err != nil {
		t.Fatal(err)
	}
	handled.Add(3)
	ctx := context.Background()
	// The first ping occupies the actor; two more fill the mailbox.
	if err := rt.Tell(ctx, "b", ping{}); err != nil {
		t.Fatal(err)
	}
	for rt.lookup("b").mailbox.len() != 0 {
		time.Sleep(time.Millisecond)
	}
	for range 2 {
		if err := rt.Tell(ctx, "b", ping{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := rt.TrySend("b", ping{}); !errors.Is(err, runtime.ErrMailboxFull) {
		t.Fatalf("TrySend on a full mailbox: %v, want ErrMailboxFull", err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := rt.Tell(short, "b", ping{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Tell on a full mailbox: %v, want it to wait until the deadline", err)
	}
	// Freeing space lets a waiting sender through.
	errc := make(chan error, 1)
	go func() { errc <- rt.Tell(ctx, "b", ping{}) }()
	handled.Add(1)
	close(release)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	handled.Wait()
}

// TestActorSendsNeverDeadlock: an actor flooding itself, and two actors
// flooding each other through tiny mailboxes, must not deadlock; excess is
// dropped and counted.
func TestActorSendsNeverDeadlock(t *testing.T) {
	rt := newTestRuntime(Options{MailboxMessagesMax: 4, MailboxOverflowMessagesMax: 4})
	defer shutdown(t, rt)
	const rounds = 2000
	var mu sync.Mutex
	received := map[runtime.ActorID]int{}
	flood := func(peer runtime.ActorID) runtime.Factory {
		return func() runtime.Actor {
			return funcActor(func(ctx runtime.Context, msg runtime.Message) {
				switch m := msg.(type) {
				case runtime.Started:
					for range 100 {
						ctx.Send(ctx.Self(), ping{0})
					}
				case ping:
					mu.Lock()
					received[ctx.Self()]++
					mu.Unlock()
					if m.n < rounds {
						ctx.Send(peer, ping{m.n + 1})
						ctx.Send(peer, ping{m.n + 1})
						ctx.Send(ctx.Self(), ping{m.n + 1})
					}
				case getLog:
					ctx.Reply("alive")
				}
			})
		}
	}
	if err := rt.Spawn("p", "x", flood("y")); err != nil {
		t.Fatal(err)
	}
	if err := rt.Spawn("p", "y", flood("x")); err != nil {
		t.Fatal(err)
	}
	for rt.Dropped() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, id := range []runtime.ActorID{"x", "y"} {
		if got, err := rt.Ask(ctx, id, getLog{}); err != nil || got != "alive" {
			t.Fatalf("actor %s wedged: %v %v", id, got, err)
		}
	}
}

func TestTimersFireAndCancel(t *testing.T) {
	rt := newTestRuntime(Options{})
	defer shutdown(t, rt)
	fired := make(chan string, 4)
	a := funcActor(func(ctx runtime.Context, msg runtime.Message) {
		switch m := msg.(type) {
		case runtime.Started:
			cancelled := ctx.After(5*time.Millisecond, "cancelled")
			ctx.After(20*time.Millisecond, "kept")
			ctx.CancelTimer(cancelled)
			ctx.CancelTimer(9999) // unknown: no-op
		case string:
			fired <- m
		}
	})
	if err := rt.Spawn("p", "t", func() runtime.Actor { return a }); err != nil {
		t.Fatal(err)
	}
	if got := <-fired; got != "kept" {
		t.Fatalf("timer %q fired, want only \"kept\"", got)
	}
	select {
	case got := <-fired:
		t.Fatalf("extra timer %q fired", got)
	case <-time.After(30 * time.Millisecond):
	}
}

func TestNamedRandStreamsAndStores(t *testing.T) {
	draws := func(seed uint64) []uint64 {
		other := objstore.NewMemory()
		rt := newTestRuntime(Options{Seed: seed, ProcessStores: map[string]objstore.Store{"q": other}})
		defer shutdown(t, rt)
		a := funcActor(func(ctx runtime.Context, msg runtime.Message) {
			if _, ok := msg.(getLog); ok {
				if _, err := ctx.Store().Put(context.Background(), "k", []byte("v")); err != nil {
					t.Error(err)
				}
				ctx.Reply([]uint64{ctx.Rand("a").Uint64(), ctx.Rand("b").Uint64(), ctx.Rand("a").Uint64()})
			}
		})
		if err := rt.Spawn("q", "r", func() runtime.Actor { return a }); err != nil {
			t.Fatal(err)
		}
		got, err := rt.Ask(context.Background(), "r", getLog{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.Get(context.Background(), "k"); err != nil {
			t.Fatalf("process q did not use its own store: %v", err)
		}
		return got.([]uint64)
	}
	a, b, c := draws(7), draws(7), draws(8)
	if a[0] != b[0] || a[1] != b[1] || a[2] != b[2] {
		t.Fatalf("same seed, different draws: %v %v", a, b)
	}
	if a[0] == a[1] || a[0] == c[0] {
		t.Fatalf("streams not independent: %v %v", a, c)
	}
}

// TestBusyTimes: an actor's busy time counts the time its Receive took,
// its store time the part in object-store calls, and an idle actor's
// stays near zero.
func TestBusyTimes(t *testing.T) {
	rt := newTestRuntime(Options{})
	defer shutdown(t, rt)
	const hold = 30 * time.Millisecond
	busy := funcActor(func(ctx runtime.Context, msg runtime.Message) {
		if _, ok := msg.(ping); ok {
			time.Sleep(hold)
			if _, err := ctx.Store().Put(context.Background(), "k", []byte("v")); err != nil {
				panic(err)
			}
			ctx.Reply(msg)
		}
	})
	idle := funcActor(func(ctx runtime.Context, msg runtime.Message) {})
	if err := rt.Spawn("p", "busy/1", func() runtime.Actor { return busy }); err != nil {
		t.Fatal(err)
	}
	if err := rt.Spawn("p", "idle", func() runtime.Actor { return idle }); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := rt.Ask(context.Background(), "busy/1", ping{n: i}); err != nil {
			t.Fatal(err)
		}
	}
	// NB: the last reply leaves inside its Receive, before that Receive's
	// time is added: wait for it.
	got := rt.BusyTimes()
	for deadline := time.Now().Add(5 * time.Second); len(got) == 2 && got[0].Busy < 3*hold && time.Now().Before(deadline); got = rt.BusyTimes() {
		time.Sleep(time.Millisecond)
	}
	if len(got) != 2 || got[0].ID != "busy/1" || got[1].ID != "idle" {
		t.Fatalf("busy times %v: want busy/1 then idle", got)
	}
	if got[0].Busy < 3*hold {
		t.Fatalf("busy/1 was busy %v, handling 3 messages of %v each", got[0].Busy, hold)
	}
	if got[0].Store <= 0 || got[0].Store >= got[0].Busy-3*hold {
		t.Fatalf("busy/1 spent %v of %v in its 3 store calls", got[0].Store, got[0].Busy)
	}
	if got[1].Busy >= hold {
		t.Fatalf("idle was busy %v", got[1].Busy)
	}
}
