package sim

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/rockstream/rockstream/runtime"
)

// TestRequestRepliesCarryTheRequestID: a Request is delivered unwrapped,
// and both a Reply and a deferred reply come back as a Response with the
// request's ID; a plain message's reply stays plain.
func TestRequestRepliesCarryTheRequestID(t *testing.T) {
	s := quiet(1)
	var seen []runtime.Message
	var got []runtime.Message
	var later runtime.Deferred
	if err := s.Spawn("p", "server", func() runtime.Actor {
		return funcActor(func(ctx runtime.Context, msg runtime.Message) {
			seen = append(seen, msg)
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
	if err := s.Spawn("p", "client", func() runtime.Actor {
		return funcActor(func(ctx runtime.Context, msg runtime.Message) {
			switch msg.(type) {
			case runtime.Started:
			case string:
				if msg == "go" {
					ctx.Send("server", runtime.Request{ID: 7, Msg: "later"})
					ctx.Send("server", runtime.Request{ID: 8, Msg: "now"})
					ctx.Send("server", "plain")
					ctx.Send("server", "flush")
					ctx.Reply(nil)
					return
				}
				got = append(got, msg)
			default:
				got = append(got, msg)
			}
		})
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ask(context.Background(), "client", "go"); err != nil {
		t.Fatal(err)
	}
	if err := s.RunFor(time.Second); err != nil {
		t.Fatal(err)
	}
	want := []runtime.Message{runtime.Response{ID: 8, Msg: "now!"}, "plain!", runtime.Response{ID: 7, Msg: "later!"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("client got %#v, want %#v", got, want)
	}
	for _, m := range seen {
		if _, ok := m.(runtime.Request); ok {
			t.Fatalf("the server saw a wrapped request: %#v", seen)
		}
	}
}
