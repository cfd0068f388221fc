package op

import (
	"fmt"

	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// UnionAll is the Z-set sum of its inputs (UNION ALL). It is linear:
//
//	UnionAll(Δa, Δb) = Δa + Δb
//
//	time | a       | b       | output
//	-----|---------|---------|----------------
//	0    | {x:+1}  | {x:+1}  | {x:+2}
//	1    | {x:-1}  | {}      | {x:-1}
type UnionAll struct{ schema types.Schema }

// NewUnionAll returns a union of inputs with the given schemas, which must
// have the same number of columns.
func NewUnionAll(inputs []types.Schema) (*UnionAll, error) {
	for _, s := range inputs[1:] {
		if len(s) != len(inputs[0]) {
			return nil, fmt.Errorf("union inputs have %d and %d columns", len(inputs[0]), len(s))
		}
	}
	return &UnionAll{schema: inputs[0]}, nil
}

// Schema implements Operator.
func (u *UnionAll) Schema() types.Schema { return u.schema }

// Step implements Operator.
func (u *UnionAll) Step(_ *Context, inputs []zset.Batch) (zset.Batch, error) {
	return StreamUnionAll(inputs...), nil
}

// StreamUnionAll is the non-incremental UnionAll.
func StreamUnionAll(inputs ...zset.Batch) zset.Batch {
	if len(inputs) == 1 {
		return inputs[0]
	}
	return zset.Sum(inputs...)
}
