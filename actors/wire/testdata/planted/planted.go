// Package planted is a fixture of the message lint (messagelint_test.go):
// it sends types that are not registered, which the scan must report. It
// is never compiled (testdata).
package planted

import (
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/runtime"
)

// Bogus carries a callback: not a value, and not registered.
type Bogus struct{ Done func() }

type Hidden struct{ n int }

func send(ctx runtime.Context) {
	ctx.Send("shard/0", Bogus{Done: func() {}})
	ctx.Reply(&Hidden{})
	ctx.Send("shard/0", shard.NotAMessage{})
	// Registered: not reported.
	ctx.Send("shard/0", shard.GetStatus{})
	ctx.Reply(struct{}{})
}
