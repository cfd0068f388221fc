package circuit

import (
	"encoding/binary"
	"fmt"

	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/op"
	"github.com/rockstream/rockstream/ivm/zset"
)

// RecursiveWorkSource is the source id, in a recursive node's step
// builder, of the recursive relation itself; invariant input k (0-based)
// is source k+1.
const RecursiveWorkSource SourceID = 0

// Recursive declares WITH RECURSIVE (op.Recursive): init is the
// non-recursive term, and the recursive term is built in step, a builder
// of its own whose source RecursiveWorkSource reads the recursive relation
// and whose source k+1 reads invariants[k] (a node of b computing
// something the recursion does not change, e.g. the edges table); out is
// the step's output node. The step becomes a nested circuit that the
// recursive node steps once per round of the fixpoint, all inside one
// epoch of b's circuit:
//
//	          ┌──────────── recursive node (one epoch) ─────────────┐
//	init ───► │ ΔR ──► [ step circuit: work ⋈ invariants … ] ──► ΔS │ ──► ΔR (epoch)
//	invariants│  ▲                                              │   │
//	 ───────► │  └──────── next round's ΔR (semi-naive) ◄───────┘   │
//	          └─────────────────────────────────────────────────────┘
//
// The nested circuit's operators get op ids derived from the recursive
// node's, so its state lives, and is dropped, with the view's.
func (b *Builder) Recursive(init Node, invariants []Node, step *Builder, out Node, spec op.RecursiveSpec) Node {
	ins := append([]Node{init}, invariants...)
	if !b.check(ins...) {
		return Node{}
	}
	if step.err != nil {
		b.err = fmt.Errorf("circuit: recursive term: %w", step.err)
		return Node{}
	}
	if !out.Valid() || out.index > len(step.nodes) {
		b.err = fmt.Errorf("circuit: recursive: invalid step output %d", out.index)
		return Node{}
	}
	schema := b.in(init)
	if got := step.Schema(out); len(got) != len(schema) {
		b.err = fmt.Errorf("circuit: recursive: step has %d columns, init %d", len(got), len(schema))
		return Node{}
	}
	for k, inv := range invariants {
		src, ok := step.sourceNode(SourceID(k + 1))
		if !ok {
			// The step does not read this invariant (pruned away).
			continue
		}
		if got, want := len(step.Schema(src)), len(b.in(inv)); got != want {
			b.err = fmt.Errorf("circuit: recursive: invariant %d has %d columns, the step reads %d", k, want, got)
			return Node{}
		}
	}
	return b.add("recursive "+spec.Mode.String(), ins, func(s op.State) (op.Operator, error) {
		body, err := step.buildNested(s, out)
		if err != nil {
			return nil, err
		}
		return op.NewRecursive(s, schema, body, spec)
	})
}

// sourceNode returns the node of source id.
func (b *Builder) sourceNode(id SourceID) (Node, bool) {
	for i, n := range b.nodes {
		if n.source != nil && *n.source == id {
			return Node{index: i + 1}, true
		}
	}
	return Node{}, false
}

// nestedID is the op id of node i of the step circuit of the recursive
// node with id parent: the parent's circuit id (so the state is owned by
// the same view) and, in the node half, a marker bit, the parent's node
// number and i.
func nestedID(parent arrange.ID, i int) arrange.ID {
	id := parent
	node := binary.BigEndian.Uint64(parent[8:])
	binary.BigEndian.PutUint64(id[8:], 1<<63|(node&0xffffffff)<<24|uint64(i+1))
	return id
}

// buildNested builds the step circuit of the recursive node with state s.
func (b *Builder) buildNested(s op.State, out Node) (*nestedBody, error) {
	parent := s.ID
	c, err := b.Build(Config{
		CacheEntriesMax: s.CacheEntriesMax,
		nodeID:          func(i int) arrange.ID { return nestedID(parent, i) },
	})
	if err != nil {
		return nil, err
	}
	c.nested = true
	return &nestedBody{circuit: c, out: out.index - 1}, nil
}

// nestedBody adapts a step circuit to op.RecursiveBody.
type nestedBody struct {
	circuit *Circuit
	out     int
}

// Step implements op.RecursiveBody: one round of the inner clock.
func (n *nestedBody) Step(ctx *op.Context, work zset.Batch, invariants []zset.Batch) (zset.Batch, error) {
	c := n.circuit
	c.cfg.Env = ctx.Env
	inputs := map[SourceID]zset.Delta{}
	if _, ok := c.sources[RecursiveWorkSource]; ok {
		inputs[RecursiveWorkSource] = zset.RowDelta(work)
	}
	for k, d := range invariants {
		if _, ok := c.sources[SourceID(k+1)]; ok {
			inputs[SourceID(k+1)] = zset.RowDelta(d)
		}
	}
	outs, errs, err := c.stepNodes(ctx.Txn, inputs)
	if err != nil {
		return zset.Batch{}, err
	}
	// Evaluation errors inside the step are the recursive node's: they
	// flow on to the view like any operator's.
	ctx.Errors.AddBatch(errs[n.out], 1)
	return c.materialize(outs[n.out]), nil
}

// Arrangements implements op.RecursiveBody.
func (n *nestedBody) Arrangements() []*arrange.Arrangement {
	var out []*arrange.Arrangement
	for _, nd := range n.circuit.nodes {
		if st, ok := nd.operator.(op.Stateful); ok {
			out = append(out, st.Arrangements()...)
		}
	}
	return out
}

// StateFormat implements op.RecursiveBody: the step circuit's record.
func (n *nestedBody) StateFormat() string { return string(n.circuit.format) }
