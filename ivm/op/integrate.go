package op

import (
	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Integrate is DBSP's I: the output at time t is the sum of all inputs up to
// and including t. Its state is the integral, stored in an arrangement.
//
//	I(s)[t] = Σ_{i ≤ t} s[i]
//
//	time | input   | output
//	-----|---------|---------------
//	0    | {a:+1}  | {a:+1}
//	1    | {b:+1}  | {a:+1, b:+1}
//	2    | {a:-1}  | {b:+1}
//
// NB: every step outputs the whole integral (that is what I means); use it
// where a full snapshot is wanted, not on a maintenance hot path.
type Integrate struct {
	schema types.Schema
	state  *arrange.Arrangement
}

// NewIntegrate returns an Integrate.
func NewIntegrate(state State, in types.Schema) *Integrate {
	return &Integrate{schema: in, state: state.arrangement(arrange.KindIntegral)}
}

// Schema implements Operator.
func (o *Integrate) Schema() types.Schema { return o.schema }

// Arrangements implements Stateful.
func (o *Integrate) Arrangements() []*arrange.Arrangement { return []*arrange.Arrangement{o.state} }

// Step implements Operator.
func (o *Integrate) Step(ctx *Context, inputs []zset.Batch) (zset.Batch, error) {
	if err := addRows(ctx.Txn, o.state, zset.Consolidate(inputs[0])); err != nil {
		return zset.Batch{}, err
	}
	return readRows(ctx.Txn, o.state)
}

// StreamIntegrate integrates a whole stream: the output at t is
// Σ_{i ≤ t} stream[i].
func StreamIntegrate(stream []zset.Batch) []zset.Batch {
	out := make([]zset.Batch, len(stream))
	var acc zset.Batch
	for t, s := range stream {
		acc = zset.Consolidate(zset.Sum(acc, s))
		out[t] = acc
	}
	return out
}
