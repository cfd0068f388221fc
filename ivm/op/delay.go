package op

import (
	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Delay is DBSP's z⁻¹: the output at time t is the input at t−1 (empty at
// t = 0). Its state is the held input, so a delay survives a restart.
//
//	z⁻¹(s)[t] = s[t−1]
//
//	time | input   | output
//	-----|---------|--------
//	0    | {a:+1}  | {}
//	1    | {b:+1}  | {a:+1}
//	2    | {}      | {b:+1}
type Delay struct {
	schema types.Schema
	state  *arrange.Arrangement
}

// NewDelay returns a Delay.
func NewDelay(state State, in types.Schema) *Delay {
	return &Delay{schema: in, state: state.arrangement(arrange.KindPrevious)}
}

// Schema implements Operator.
func (o *Delay) Schema() types.Schema { return o.schema }

// Arrangements implements Stateful.
func (o *Delay) Arrangements() []*arrange.Arrangement { return []*arrange.Arrangement{o.state} }

// Step implements Operator.
func (o *Delay) Step(ctx *Context, inputs []zset.Batch) (zset.Batch, error) {
	return replaceRows(ctx.Txn, o.state, zset.Consolidate(inputs[0]))
}

// StreamDelay delays a whole stream by one step.
func StreamDelay(stream []zset.Batch) []zset.Batch {
	out := make([]zset.Batch, len(stream))
	for t := 1; t < len(stream); t++ {
		out[t] = stream[t-1]
	}
	return out
}
