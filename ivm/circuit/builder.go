package circuit

import (
	"fmt"
	"strconv"

	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/op"
	"github.com/rockstream/rockstream/ivm/types"
)

// SourceID names a circuit input: a base table's (or upstream view's)
// delta stream.
type SourceID uint64

// ViewID names a circuit output: a view whose integrated output is stored
// in the view_output namespace.
type ViewID uint64

// Node is a handle to a node of a Builder. The zero Node is invalid.
type Node struct{ index int }

// Valid reports whether n refers to a node.
func (n Node) Valid() bool { return n.index > 0 }

// Builder builds a circuit. Methods never fail: the first error is kept and
// returned by Build, so a compiler can chain calls.
type Builder struct {
	nodes   []*nodeSpec
	sources []SourceID
	sinks   []sinkSpec
	err     error
}

type nodeSpec struct {
	label  string
	inputs []int // node indexes (0-based)
	// make constructs the operator; it is called once at declaration (with
	// a zero State, to compute the schema and validate) and once by Build.
	make   func(state op.State) (op.Operator, error)
	schema types.Schema
	source *SourceID
	id     *arrange.ID
}

type sinkSpec struct {
	view ViewID
	node int
}

// NewBuilder returns an empty builder.
func NewBuilder() *Builder { return &Builder{} }

// Err returns the first error recorded so far.
func (b *Builder) Err() error { return b.err }

// Schema returns the output schema of n (nil if n is invalid).
func (b *Builder) Schema(n Node) types.Schema {
	if !n.Valid() || n.index > len(b.nodes) {
		return nil
	}
	return b.nodes[n.index-1].schema
}

// SetID gives node n an explicit stable operator id (its state keys start
// with it). By default Build derives ids from Config.ID and the node's
// position, which is stable as long as the compiler declares nodes in the
// same order.
func (b *Builder) SetID(n Node, id arrange.ID) {
	if b.check(n) {
		b.nodes[n.index-1].id = &id
	}
}

func (b *Builder) check(ns ...Node) bool {
	if b.err != nil {
		return false
	}
	for _, n := range ns {
		if !n.Valid() || n.index > len(b.nodes) {
			b.err = fmt.Errorf("circuit: invalid node handle %d", n.index)
			return false
		}
	}
	return true
}

func (b *Builder) add(label string, inputs []Node, make func(state op.State) (op.Operator, error)) Node {
	if !b.check(inputs...) {
		return Node{}
	}
	o, err := make(op.State{})
	if err != nil {
		b.err = fmt.Errorf("circuit: %s: %w", label, err)
		return Node{}
	}
	spec := &nodeSpec{label: label, make: make, schema: o.Schema()}
	for _, in := range inputs {
		spec.inputs = append(spec.inputs, in.index-1)
	}
	b.nodes = append(b.nodes, spec)
	return Node{index: len(b.nodes)}
}

func (b *Builder) in(n Node) types.Schema { return b.nodes[n.index-1].schema }

// Source declares an input whose deltas Step receives under id.
func (b *Builder) Source(id SourceID, schema types.Schema) Node {
	if b.err != nil {
		return Node{}
	}
	for _, s := range b.sources {
		if s == id {
			b.err = fmt.Errorf("circuit: source %d declared twice", id)
			return Node{}
		}
	}
	n := b.add("source "+strconv.FormatUint(uint64(id), 10), nil, func(op.State) (op.Operator, error) {
		return op.NewSource(schema), nil
	})
	if n.Valid() {
		src := id
		b.nodes[n.index-1].source = &src
		b.sources = append(b.sources, id)
	}
	return n
}

// Filter keeps rows where pred is true.
func (b *Builder) Filter(in Node, pred expr.Expr) Node {
	if !b.check(in) {
		return Node{}
	}
	schema := b.in(in)
	return b.add("filter", []Node{in}, func(op.State) (op.Operator, error) {
		return op.NewFilter(schema, pred), nil
	})
}

// TemporalFilter keeps the rows whose temporal bounds hold at each step's
// time (op.TemporalFilter; the circuit's SetNow).
func (b *Builder) TemporalFilter(in Node, spec op.TemporalFilterSpec) Node {
	if !b.check(in) {
		return Node{}
	}
	schema := b.in(in)
	return b.add("temporal_filter", []Node{in}, func(s op.State) (op.Operator, error) {
		return op.NewTemporalFilter(s, schema, spec), nil
	})
}

// Map computes one output column per expression.
func (b *Builder) Map(in Node, exprs []expr.Expr, names []string) Node {
	if !b.check(in) {
		return Node{}
	}
	if len(exprs) != len(names) {
		b.err = fmt.Errorf("circuit: map: %d expressions but %d names", len(exprs), len(names))
		return Node{}
	}
	return b.add("map", []Node{in}, func(op.State) (op.Operator, error) {
		return op.NewMap(exprs, names), nil
	})
}

// FlatMap expands each input row by set-returning functions (see
// op.FlatMap).
func (b *Builder) FlatMap(in Node, spec op.FlatMapSpec) Node {
	if !b.check(in) {
		return Node{}
	}
	schema := b.in(in)
	return b.add("flatmap", []Node{in}, func(op.State) (op.Operator, error) {
		return op.NewFlatMap(schema, spec), nil
	})
}

// Project keeps columns cols (in that order).
func (b *Builder) Project(in Node, cols []int) Node {
	if !b.check(in) {
		return Node{}
	}
	schema := b.in(in)
	for _, c := range cols {
		if c < 0 || c >= len(schema) {
			b.err = fmt.Errorf("circuit: project: column %d out of range", c)
			return Node{}
		}
	}
	return b.add("project", []Node{in}, func(op.State) (op.Operator, error) {
		return op.NewProject(schema, cols), nil
	})
}

// Aggregate groups and aggregates (see op.AggregateSpec).
func (b *Builder) Aggregate(in Node, spec op.AggregateSpec) Node {
	if !b.check(in) {
		return Node{}
	}
	schema := b.in(in)
	label := "aggregate"
	if spec.Watermark != nil {
		// EXPLAIN ANALYZE INCREMENTAL shows which operators forget closed
		// windows (op.AggregateWatermark).
		label += " (closes windows at the watermark)"
	}
	return b.add(label, []Node{in}, func(s op.State) (op.Operator, error) {
		return op.NewAggregate(s, schema, spec)
	})
}

// Join joins left and right (see op.JoinSpec).
func (b *Builder) Join(left, right Node, spec op.JoinSpec) Node {
	if !b.check(left, right) {
		return Node{}
	}
	ls, rs := b.in(left), b.in(right)
	label := "join " + spec.Kind.String()
	if spec.Watermark != nil {
		label += " (closes windows at the watermark)"
	}
	return b.add(label, []Node{left, right}, func(s op.State) (op.Operator, error) {
		return op.NewJoin(s, ls, rs, spec)
	})
}

// Distinct turns the input into a set (rows with positive weight, weight 1).
func (b *Builder) Distinct(in Node) Node {
	if !b.check(in) {
		return Node{}
	}
	schema := b.in(in)
	return b.add("distinct", []Node{in}, func(s op.State) (op.Operator, error) {
		return op.NewDistinct(s, schema), nil
	})
}

// UnionAll sums its inputs (all of the same schema).
func (b *Builder) UnionAll(ins ...Node) Node {
	if !b.check(ins...) {
		return Node{}
	}
	if len(ins) == 0 {
		b.err = fmt.Errorf("circuit: union all of no inputs")
		return Node{}
	}
	schemas := make([]types.Schema, len(ins))
	for i, n := range ins {
		schemas[i] = b.in(n)
	}
	return b.add("union all", ins, func(op.State) (op.Operator, error) {
		return op.NewUnionAll(schemas)
	})
}

// Union is UNION (set semantics): Distinct(UnionAll(ins...)).
func (b *Builder) Union(ins ...Node) Node { return b.Distinct(b.UnionAll(ins...)) }

// SetOp is INTERSECT [ALL] / EXCEPT [ALL] of left and right.
func (b *Builder) SetOp(kind op.SetOpKind, left, right Node) Node {
	if !b.check(left, right) {
		return Node{}
	}
	ls, rs := b.in(left), b.in(right)
	return b.add("setop", []Node{left, right}, func(s op.State) (op.Operator, error) {
		return op.NewSetOp(s, kind, ls, rs)
	})
}

// TopK is ORDER BY … LIMIT … OFFSET …, optionally per partition.
func (b *Builder) TopK(in Node, spec op.TopKSpec) Node {
	if !b.check(in) {
		return Node{}
	}
	schema := b.in(in)
	return b.add("topk", []Node{in}, func(s op.State) (op.Operator, error) {
		return op.NewTopK(s, schema, spec)
	})
}

// Integrate outputs, at every step, the sum of all inputs so far (DBSP I).
func (b *Builder) Integrate(in Node) Node {
	if !b.check(in) {
		return Node{}
	}
	schema := b.in(in)
	return b.add("integrate", []Node{in}, func(s op.State) (op.Operator, error) {
		return op.NewIntegrate(s, schema), nil
	})
}

// Differentiate outputs the input minus the previous step's input (DBSP D).
func (b *Builder) Differentiate(in Node) Node {
	if !b.check(in) {
		return Node{}
	}
	schema := b.in(in)
	return b.add("differentiate", []Node{in}, func(s op.State) (op.Operator, error) {
		return op.NewDifferentiate(s, schema), nil
	})
}

// Delay outputs the previous step's input (DBSP z⁻¹; empty at step 0).
func (b *Builder) Delay(in Node) Node {
	if !b.check(in) {
		return Node{}
	}
	schema := b.in(in)
	return b.add("delay", []Node{in}, func(s op.State) (op.Operator, error) {
		return op.NewDelay(s, schema), nil
	})
}

// Sink makes node the output of view: every step its delta is added to the
// view's stored output and returned by Step. Several views may share
// upstream nodes (views-on-views); a node may feed several sinks.
func (b *Builder) Sink(view ViewID, n Node) {
	if !b.check(n) {
		return
	}
	for _, s := range b.sinks {
		if s.view == view {
			b.err = fmt.Errorf("circuit: view %d has two sinks", view)
			return
		}
	}
	b.sinks = append(b.sinks, sinkSpec{view: view, node: n.index - 1})
}
