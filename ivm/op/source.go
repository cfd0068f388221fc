package op

import (
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Source is a circuit input: it outputs the delta it is given.
//
//	time | input  | output
//	-----|--------|-------
//	0    | {a:+1} | {a:+1}
type Source struct{ schema types.Schema }

// NewSource returns a source of rows of schema.
func NewSource(schema types.Schema) *Source { return &Source{schema: schema} }

// Schema implements Operator.
func (s *Source) Schema() types.Schema { return s.schema }

// Step implements Operator.
func (s *Source) Step(_ *Context, inputs []zset.Batch) (zset.Batch, error) {
	return inputs[0], nil
}
