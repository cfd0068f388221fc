package op

import (
	"errors"

	"github.com/rockstream/rockstream/ivm/types"
)

var errNotYet = errors.New("operator not implemented yet")

// NewAggregate returns an incremental Aggregate.
func NewAggregate(state State, in types.Schema, spec AggregateSpec) (Operator, error) {
	return nil, errNotYet
}

// NewJoin returns an incremental Join.
func NewJoin(state State, left, right types.Schema, spec JoinSpec) (Operator, error) {
	return nil, errNotYet
}

// NewTopK returns an incremental TopK.
func NewTopK(state State, in types.Schema, spec TopKSpec) (Operator, error) {
	return nil, errNotYet
}
