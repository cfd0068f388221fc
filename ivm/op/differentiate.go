package op

import (
	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Differentiate is DBSP's D: the output at time t is the input at t minus
// the input at t−1 (the input at −1 is empty). D is the inverse of I.
//
//	D(s)[t] = s[t] − s[t−1]
//
//	time | input          | output
//	-----|----------------|------------
//	0    | {a:+1}         | {a:+1}
//	1    | {a:+1, b:+1}   | {b:+1}
//	2    | {b:+1}         | {a:-1}
//
// Its state is the previous input.
type Differentiate struct {
	schema types.Schema
	state  *arrange.Arrangement
}

// NewDifferentiate returns a Differentiate.
func NewDifferentiate(state State, in types.Schema) *Differentiate {
	return &Differentiate{schema: in, state: state.arrangement(arrange.KindPrevious)}
}

// Schema implements Operator.
func (o *Differentiate) Schema() types.Schema { return o.schema }

// Arrangements implements Stateful.
func (o *Differentiate) Arrangements() []*arrange.Arrangement { return []*arrange.Arrangement{o.state} }

// Step implements Operator.
func (o *Differentiate) Step(ctx *Context, inputs []zset.Batch) (zset.Batch, error) {
	current := zset.Consolidate(inputs[0])
	previous, err := replaceRows(ctx.Txn, o.state, current)
	if err != nil {
		return zset.Batch{}, err
	}
	return zset.Sum(current, zset.Negate(previous)), nil
}

// StreamDifferentiate differentiates a whole stream.
func StreamDifferentiate(stream []zset.Batch) []zset.Batch {
	out := make([]zset.Batch, len(stream))
	var previous zset.Batch
	for t, s := range stream {
		out[t] = zset.Consolidate(zset.Sum(s, zset.Negate(previous)))
		previous = s
	}
	return out
}
