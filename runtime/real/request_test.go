package real

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/rockstream/rockstream/runtime"
)

// TestRequestRepliesCarryTheRequestID: as in the simulator, a Request
// arrives unwrapped and its immediate and deferred replies come back as
// Responses with its ID; a plain message's reply stays plain.
func TestRequestRepliesCarryTheRequestID(t *testing.T) {
	rt := newTestRuntime(Options{})
	defer shutdown(t, rt)
	var later runtime.Deferred
	if err := rt.Spawn("p", "server", func() runtime.Actor {
		return funcActor(func(ctx runtime.Context, msg runtime.Message) {
			if _, wrapped := msg.(runtime.Request); wrapped {
				ctx.Reply("wrapped request delivered")
				return
			}
			switch msg {
			case "now", "plain":
				ctx.Reply(msg.(string) + "!")
			case "later":
				later = ctx.Defer()
			case "flush":
				later.Reply("later!")
			}
		})
	}); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	if err := rt.Spawn("p", "client", func() runtime.Actor {
		return funcActor(func(ctx runtime.Context, msg runtime.Message) {
			switch msg.(type) {
			case runtime.Started:
			case getLog:
				rec.Receive(ctx, msg)
			default:
				if msg == "go" {
					ctx.Send("server", runtime.Request{ID: 7, Msg: "later"})
					ctx.Send("server", runtime.Request{ID: 8, Msg: "now"})
					ctx.Send("server", "plain")
					ctx.Send("server", "flush")
					ctx.Reply(nil)
					return
				}
				rec.Receive(ctx, msg)
			}
		})
	}); err != nil {
		t.Fatal(err)
	}
	goctx := context.Background()
	if _, err := rt.Ask(goctx, "client", "go"); err != nil {
		t.Fatal(err)
	}
	want := []runtime.Message{runtime.Response{ID: 8, Msg: "now!"}, "plain!", runtime.Response{ID: 7, Msg: "later!"}}
	deadline := time.Now().Add(10 * time.Second)
	for {
		m, err := rt.Ask(goctx, "client", getLog{})
		if err != nil {
			t.Fatal(err)
		}
		got := m.([]runtime.Message)
		if reflect.DeepEqual(got, want) {
			return
		}
		if len(got) >= len(want) || time.Now().After(deadline) {
			t.Fatalf("client got %#v, want %#v", got, want)
		}
		time.Sleep(time.Millisecond)
	}
}
