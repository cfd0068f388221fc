package op

import (
	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Distinct is the incremental set conversion (SELECT DISTINCT, UNION): a
// row is in the output, with weight 1, while its integrated weight is
// positive. It keeps each row's integrated weight and emits a change only
// when the weight crosses zero:
//
//	Distinct(Δ)[r] = [I(Δ)[r] > 0] − [I(Δ)[r] − Δ[r] > 0]
//
//	time | input   | output
//	-----|---------|--------
//	0    | {a:+2}  | {a:+1}
//	1    | {a:-1}  | {}
//	2    | {a:-1}  | {a:-1}
type Distinct struct{ counting }

// NewDistinct returns an incremental Distinct.
func NewDistinct(state State, in types.Schema) *Distinct {
	return &Distinct{newCounting(in, state.arrangement(arrange.KindDistinct), distinctWeight)}
}

// StreamDistinct is the non-incremental Distinct: every row with positive
// weight, with weight 1.
func StreamDistinct(schema types.Schema, in zset.Batch) zset.Batch {
	return streamCounting(distinctWeight, schema, in, zset.Batch{})
}
