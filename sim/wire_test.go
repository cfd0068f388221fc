package sim

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/runtime"
)

// wireMsg is the only message testCodec carries.
type wireMsg struct{ Values []int }

// testCodec carries wireMsg as JSON and refuses everything else.
type testCodec struct{}

func (testCodec) Encode(m runtime.Message) ([]byte, error) {
	w, ok := m.(wireMsg)
	if !ok {
		return nil, errors.New("not a wireMsg")
	}
	return json.Marshal(w)
}

func (testCodec) Decode(b []byte) (runtime.Message, error) {
	var w wireMsg
	err := json.Unmarshal(b, &w)
	return w, err
}

// TestCodecIsolatesReceiver: with a codec, a receiver gets its own copy of
// a message (a sender changing its memory after Send changes nothing the
// receiver holds); without one it shares the sender's memory. A message
// the codec cannot carry fails the run.
func TestCodecIsolatesReceiver(t *testing.T) {
	run := func(codec Codec, msg func(shared []int) runtime.Message) ([]int, *Sim) {
		cfg := QuietConfig()
		s := New(Options{Seed: 1, Config: &cfg, Codec: codec})
		if err := s.AddProcess("p", ProcessOptions{}); err != nil {
			t.Fatal(err)
		}
		var got []int
		shared := []int{1, 2}
		_ = s.Spawn("p", "receiver", func() runtime.Actor {
			return funcActor(func(ctx runtime.Context, m runtime.Message) {
				if w, ok := m.(wireMsg); ok {
					got = w.Values
				}
			})
		})
		_ = s.Spawn("p", "sender", func() runtime.Actor {
			return funcActor(func(ctx runtime.Context, m runtime.Message) {
				if _, ok := m.(runtime.Started); ok {
					ctx.Send("receiver", msg(shared))
					shared[0] = 99 // after sending: must not reach the receiver
				}
			})
		})
		_ = s.RunFor(10 * time.Millisecond)
		return got, s
	}
	plain := func(shared []int) runtime.Message { return wireMsg{Values: shared} }
	if got, _ := run(nil, plain); len(got) != 2 || got[0] != 99 {
		t.Fatalf("without a codec the receiver should share the sender's slice: %v", got)
	}
	got, s := run(testCodec{}, plain)
	if len(got) != 2 || got[0] != 1 || s.Err() != nil || s.Stats().Encoded == 0 {
		t.Fatalf("with a codec: received %v (err %v, %d encoded), want [1 2] unshared", got, s.Err(), s.Stats().Encoded)
	}
	if !strings.Contains(s.Describe(), "wire round trip: true") {
		t.Fatalf("Describe does not say the wire round trip is on:\n%s", s.Describe())
	}
	_, s = run(testCodec{}, func([]int) runtime.Message { return "not encodable" })
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "cannot cross the wire") {
		t.Fatalf("an unencodable message: run error %v", err)
	}
	// Asks and replies cross the wire too.
	cfg := QuietConfig()
	s = New(Options{Seed: 1, Config: &cfg, Codec: testCodec{}})
	_ = s.AddProcess("p", ProcessOptions{})
	var asked []int
	_ = s.Spawn("p", "echo", func() runtime.Actor {
		return funcActor(func(ctx runtime.Context, m runtime.Message) {
			if w, ok := m.(wireMsg); ok {
				asked = w.Values
				ctx.Reply(wireMsg{Values: append(w.Values, 3)})
			}
		})
	})
	question := []int{7}
	reply, err := s.Ask(context.Background(), "echo", wireMsg{Values: question})
	if err != nil || len(reply.(wireMsg).Values) != 2 || &asked[0] == &question[0] {
		t.Fatalf("ask over the wire: %v %v (receiver shares the asker's slice: %t)", reply, err, len(asked) > 0 && &asked[0] == &question[0])
	}
}
