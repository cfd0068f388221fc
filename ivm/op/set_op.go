package op

import (
	"fmt"

	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// SetOp is INTERSECT [ALL] or EXCEPT [ALL]. With m and n a row's positive
// integrated multiplicities on the left and right:
//
//	INTERSECT ALL: min(m, n)      INTERSECT: [m > 0 ∧ n > 0]
//	EXCEPT ALL:    max(m − n, 0)  EXCEPT:    [m > 0 ∧ n = 0]
//
// The incremental form keeps (m, n) per row and emits the change of the
// formula for rows whose m or n changed:
//
//	time | left    | right   | output (INTERSECT ALL)
//	-----|---------|---------|-----------------------
//	0    | {a:+2}  | {a:+1}  | {a:+1}
//	1    | {}      | {a:+2}  | {a:+1}
//	2    | {a:-2}  | {}      | {a:-2}
type SetOp struct{ counting }

// NewSetOp returns an incremental set operation.
func NewSetOp(state State, kind SetOpKind, left, right types.Schema) (*SetOp, error) {
	if len(left) != len(right) {
		return nil, fmt.Errorf("set operation inputs have %d and %d columns", len(left), len(right))
	}
	f, err := setOpWeight(kind)
	if err != nil {
		return nil, err
	}
	return &SetOp{newCounting(left, state.arrangement(arrange.KindDistinct), f)}, nil
}

// StreamSetOp is the non-incremental set operation over integrated inputs.
func StreamSetOp(kind SetOpKind, schema types.Schema, left, right zset.Batch) zset.Batch {
	f, err := setOpWeight(kind)
	if err != nil {
		panic(err)
	}
	return streamCounting(f, schema, left, right)
}
