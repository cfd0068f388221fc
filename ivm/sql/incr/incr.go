// Package incr lowers a PlanIR tree into an incremental ivm/circuit: one
// circuit operator per PlanIR node, with the same name at both layers
// (Filter → Filter, Join → Join, Aggregate → Aggregate, TopK → TopK, ...).
// The same circuit serves a materialized view (stepped once per epoch) and
// an ad-hoc query (RunOnce over a snapshot as one delta from empty).
//
// Walkthrough:
//
//	b := circuit.NewBuilder()
//	srcs := incr.NewSources(func(rel *catalog.Relation) circuit.SourceID { return idOf(rel) })
//	out, err := incr.Build(b, view.Plan, srcs, lowerer)
//	b.Sink(viewID, out)
//	c, err := b.Build(circuit.Config{ID: 7})
//
// Constant relations (VALUES, SELECT without FROM) become sources too:
// srcs.Constants lists them with their rows, which the caller feeds once,
// in the first step (a constant relation is one delta at time zero).
package incr

import (
	"fmt"
	"reflect"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/op"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Lowerer turns a bound scalar into an evaluable expression.
type Lowerer interface {
	Lower(s plan.Scalar) (expr.Expr, error)
}

// Constant is a constant relation the caller feeds once.
type Constant struct {
	ID     circuit.SourceID
	Schema types.Schema
	// Rows are the rows' expressions (constants or parameters), evaluated
	// with the circuit's Env when fed.
	Rows [][]expr.Expr
}

// Batch evaluates the constant's rows with env: the delta the caller
// feeds in the first step.
func (c Constant) Batch(env *expr.Env) (zset.Batch, error) {
	var batch zset.Batch
	for _, r := range c.Rows {
		row := make(types.Row, len(r))
		for i, e := range r {
			v, err := e.Eval(env, nil)
			if err != nil {
				return zset.Batch{}, err
			}
			row[i] = v
		}
		batch.Add(row, 1)
	}
	return batch, nil
}

// Sources declares circuit sources for relations, once each, so several
// views built into one circuit share a source.
type Sources struct {
	id        func(rel *catalog.Relation) circuit.SourceID
	declared  map[catalog.ID]circuit.Node
	ids       map[catalog.ID]circuit.SourceID
	Constants []Constant
	// ConstantIDBase is the first SourceID handed to constant relations;
	// the caller keeps relation ids below it.
	ConstantIDBase circuit.SourceID
}

// NewSources makes a source registry; id assigns each relation its
// SourceID.
func NewSources(id func(rel *catalog.Relation) circuit.SourceID) *Sources {
	return &Sources{id: id, declared: map[catalog.ID]circuit.Node{}, ids: map[catalog.ID]circuit.SourceID{}, ConstantIDBase: 1 << 62}
}

// SourceID returns the SourceID a relation was declared with.
func (s *Sources) SourceID(rel catalog.ID) (circuit.SourceID, bool) {
	id, ok := s.ids[rel]
	return id, ok
}

// Relations lists the declared relations' ids in declaration order.
func (s *Sources) source(b *circuit.Builder, rel *catalog.Relation) circuit.Node {
	if n, ok := s.declared[rel.ID]; ok {
		return n
	}
	id := s.id(rel)
	schema := make(types.Schema, len(rel.Columns))
	for i, c := range rel.Columns {
		schema[i] = types.Column{Name: c.Name, Type: c.Type, Nullable: !c.NotNull}
	}
	n := b.Source(id, schema)
	s.declared[rel.ID] = n
	s.ids[rel.ID] = id
	return n
}

func schemaOf(cols []plan.Column) types.Schema {
	out := make(types.Schema, len(cols))
	for i, c := range cols {
		out[i] = types.Column{Name: c.Name, Type: c.Type, Nullable: c.Nullable}
	}
	return out
}

// Build lowers n into b and returns its output node.
func Build(b *circuit.Builder, n plan.Node, srcs *Sources, lower Lowerer) (circuit.Node, error) {
	w := &builder{b: b, srcs: srcs, lower: lower}
	out, err := w.node(n)
	if err != nil {
		return circuit.Node{}, err
	}
	if err := b.Err(); err != nil {
		return circuit.Node{}, errcode.Wrap(errcode.InternalError, err, "building circuit")
	}
	return out, nil
}

type builder struct {
	b     *circuit.Builder
	srcs  *Sources
	lower Lowerer
	// intercept, when set, builds the nodes it claims (ok) itself: a
	// recursive term's builder takes its work-table scans and invariant
	// subtrees (recursive.go).
	intercept func(n plan.Node) (out circuit.Node, ok bool, err error)
	// built holds the subtrees lowered so far by node type and
	// Describe line, so a subtree the plan holds twice (a CTE read
	// twice) is lowered once and its operators, state included, serve
	// both readers.
	built map[string][]builtNode
}

// builtNode is a lowered plan subtree and its output node.
type builtNode struct {
	plan plan.Node
	out  circuit.Node
}

func unsupported(construct string) error {
	return errcode.New(errcode.UnsupportedSQLConstruct, "materialized views do not support %s", construct).WithDetail("construct: %s", construct)
}

func (w *builder) exprs(ss []plan.Scalar) ([]expr.Expr, error) {
	out := make([]expr.Expr, len(ss))
	for i, s := range ss {
		e, err := w.lower.Lower(s)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// node lowers n, or returns the output of an identical subtree lowered
// before. NB: a subtree is the same when it is deeply equal (same
// operators, columns, expressions and relations) and calls no volatile
// function: PostgreSQL evaluates a CTE read twice once, but two copies of
// random() written out are two draws. Inside a recursive term (intercept)
// nothing is shared: its work-table reads differ by iteration.
func (w *builder) node(n plan.Node) (circuit.Node, error) {
	if w.intercept != nil || !shareable(n) {
		return w.lowerNode(n)
	}
	key := fmt.Sprintf("%T %s", n, n.Describe())
	for _, b := range w.built[key] {
		if reflect.DeepEqual(b.plan, n) {
			return b.out, nil
		}
	}
	out, err := w.lowerNode(n)
	if err != nil {
		return out, err
	}
	if w.built == nil {
		w.built = map[string][]builtNode{}
	}
	w.built[key] = append(w.built[key], builtNode{plan: n, out: out})
	return out, nil
}

// shareable reports whether n's subtree may serve two readers: it calls no
// volatile function and reads no recursive work table.
func shareable(n plan.Node) bool {
	switch x := n.(type) {
	case *plan.RecursiveUnion:
		return false
	case *plan.Scan:
		if plan.IsWorkTable(x.Relation) {
			return false
		}
	}
	for _, s := range plan.Scalars(n) {
		volatile := false
		plan.Walk(s, func(x plan.Scalar) bool {
			switch y := x.(type) {
			case *plan.Func:
				volatile = volatile || y.Volatile
			case *plan.Subquery:
				volatile = volatile || !shareable(y.Plan)
			}
			return !volatile
		})
		if volatile {
			return false
		}
	}
	for _, in := range n.Inputs() {
		if !shareable(in) {
			return false
		}
	}
	return true
}

func (w *builder) lowerNode(n plan.Node) (circuit.Node, error) {
	if w.intercept != nil {
		if out, ok, err := w.intercept(n); ok {
			return out, err
		}
	}
	switch x := n.(type) {
	case *plan.RecursiveUnion:
		return w.recursive(x)
	case *plan.Scan:
		return w.srcs.source(w.b, x.Relation), nil
	case *plan.Values:
		id := w.srcs.ConstantIDBase + circuit.SourceID(len(w.srcs.Constants))
		c := Constant{ID: id, Schema: schemaOf(x.Cols)}
		for _, r := range x.Rows {
			row, err := w.exprs(r)
			if err != nil {
				return circuit.Node{}, err
			}
			c.Rows = append(c.Rows, row)
		}
		w.srcs.Constants = append(w.srcs.Constants, c)
		return w.b.Source(id, c.Schema), nil
	case *plan.Filter:
		in, err := w.node(x.Input)
		if err != nil {
			return circuit.Node{}, err
		}
		pred, err := w.lower.Lower(x.Pred)
		if err != nil {
			return circuit.Node{}, err
		}
		return w.b.Filter(in, pred), nil
	case *plan.TemporalFilter:
		in, err := w.node(x.Input)
		if err != nil {
			return circuit.Node{}, err
		}
		var spec op.TemporalFilterSpec
		for _, bd := range x.Bounds {
			e, err := w.lower.Lower(bd.Expr)
			if err != nil {
				return circuit.Node{}, err
			}
			o, ok := temporalOp(bd.Op)
			if !ok {
				return circuit.Node{}, errcode.New(errcode.InternalError, "temporal filter with operator %q", bd.Op)
			}
			spec.Bounds = append(spec.Bounds, op.TemporalBound{Expr: e, Op: o, OffsetMicros: bd.OffsetMicros})
		}
		return w.b.TemporalFilter(in, spec), nil
	case *plan.Project:
		in, err := w.node(x.Input)
		if err != nil {
			return circuit.Node{}, err
		}
		cols := make([]int, 0, len(x.Exprs))
		for _, e := range x.Exprs {
			if c, ok := e.(*plan.ColRef); ok {
				cols = append(cols, c.Index)
			}
		}
		if len(cols) == len(x.Exprs) {
			return w.b.Project(in, cols), nil
		}
		es, err := w.exprs(x.Exprs)
		if err != nil {
			return circuit.Node{}, err
		}
		names := make([]string, len(x.Cols))
		for i, c := range x.Cols {
			names[i] = c.Name
		}
		return w.b.Map(in, es, names), nil
	case *plan.Join:
		l, err := w.node(x.Left)
		if err != nil {
			return circuit.Node{}, err
		}
		r, err := w.node(x.Right)
		if err != nil {
			return circuit.Node{}, err
		}
		spec := op.JoinSpec{NullAware: x.NullAware, RightConstant: x.Kind == plan.InnerJoin && isConstantRelation(x.Right)}
		switch x.Kind {
		case plan.InnerJoin:
			spec.Kind = op.JoinInner
		case plan.LeftJoin:
			spec.Kind = op.JoinLeft
		case plan.RightJoin:
			spec.Kind = op.JoinRight
		case plan.FullJoin:
			spec.Kind = op.JoinFull
		case plan.SemiJoin:
			spec.Kind = op.JoinSemi
		case plan.AntiJoin:
			spec.Kind = op.JoinAnti
		default:
			return circuit.Node{}, unsupported("join kind " + x.Kind.String())
		}
		for _, k := range x.EquiKeys {
			spec.LeftKeys = append(spec.LeftKeys, k.Left)
			spec.RightKeys = append(spec.RightKeys, k.Right)
			if k.NullSafe {
				spec.NullSafe = true
			}
		}
		if x.NullAware && (len(x.EquiKeys) != 1 || x.Cond != nil) {
			return circuit.Node{}, unsupported("NOT IN over this subquery")
		}
		if x.Cond != nil {
			if spec.Residual, err = w.lower.Lower(x.Cond); err != nil {
				return circuit.Node{}, err
			}
		}
		if !spec.NullAware && !spec.RightConstant {
			spec.Watermark = joinWatermark(x)
		}
		return w.b.Join(l, r, spec), nil
	case *plan.Aggregate:
		in, err := w.node(x.Input)
		if err != nil {
			return circuit.Node{}, err
		}
		spec := op.AggregateSpec{GroupBy: x.GroupBy, Watermark: aggregateWatermark(x.Input, x.GroupBy)}
		for i, a := range x.Aggs {
			call := op.AggregateCall{Distinct: a.Distinct, Name: x.Cols[len(x.GroupBy)+i].Name}
			switch a.Func {
			case "count":
				call.Func = op.AggCount
				if len(a.Args) == 0 {
					call.Func = op.AggCountStar
				}
			case "sum":
				call.Func = op.AggSum
			case "avg":
				call.Func = op.AggAvg
			case "min":
				call.Func = op.AggMin
			case "max":
				call.Func = op.AggMax
			case "bool_and":
				call.Func = op.AggBoolAnd
			case "bool_or":
				call.Func = op.AggBoolOr
			case "var_pop":
				call.Func = op.AggVarPop
			case "var_samp", "variance":
				call.Func = op.AggVarSamp
			case "stddev_pop":
				call.Func = op.AggStddevPop
			case "stddev_samp", "stddev":
				call.Func = op.AggStddevSamp
			case "bit_and":
				call.Func = op.AggBitAnd
			case "bit_or":
				call.Func = op.AggBitOr
			case "bit_xor":
				call.Func = op.AggBitXor
			case "string_agg", "array_agg", "percentile_cont", "percentile_disc", "mode",
				"json_agg", "jsonb_agg", "json_object_agg", "jsonb_object_agg":
				if call, err = w.orderedAggregate(call, a); err != nil {
					return circuit.Node{}, err
				}
				spec.Calls = append(spec.Calls, call)
				continue
			default:
				return circuit.Node{}, unsupported("aggregate function " + a.Func + "()")
			}
			if len(a.Args) > 1 {
				return circuit.Node{}, unsupported(fmt.Sprintf("%s() with %d arguments", a.Func, len(a.Args)))
			}
			if len(a.Args) == 1 {
				if call.Arg, err = w.lower.Lower(a.Args[0]); err != nil {
					return circuit.Node{}, err
				}
			}
			if a.Filter != nil {
				if call.Filter, err = w.lower.Lower(a.Filter); err != nil {
					return circuit.Node{}, err
				}
			}
			spec.Calls = append(spec.Calls, call)
		}
		return w.b.Aggregate(in, spec), nil
	case *plan.Distinct:
		in, err := w.node(x.Input)
		if err != nil {
			return circuit.Node{}, err
		}
		if len(x.On) == 0 {
			return w.b.Distinct(in), nil
		}
		// DISTINCT ON: the first row per key = top-1 per partition.
		return w.b.TopK(in, op.TopKSpec{PartitionBy: x.On, OrderBy: sortKeys(x.Order), Limit: 1, InsertOnly: insertOnly(x.Input)}), nil
	case *plan.SetOp:
		l, err := w.node(x.Left)
		if err != nil {
			return circuit.Node{}, err
		}
		r, err := w.node(x.Right)
		if err != nil {
			return circuit.Node{}, err
		}
		switch {
		case x.Kind == plan.Union && x.All:
			return w.b.UnionAll(l, r), nil
		case x.Kind == plan.Union:
			return w.b.Union(l, r), nil
		case x.Kind == plan.Intersect && x.All:
			return w.b.SetOp(op.SetIntersectAll, l, r), nil
		case x.Kind == plan.Intersect:
			return w.b.SetOp(op.SetIntersect, l, r), nil
		case x.Kind == plan.Except && x.All:
			return w.b.SetOp(op.SetExceptAll, l, r), nil
		default:
			return w.b.SetOp(op.SetExcept, l, r), nil
		}
	case *plan.TopK:
		in, err := w.node(x.Input)
		if err != nil {
			return circuit.Node{}, err
		}
		return w.b.TopK(in, op.TopKSpec{OrderBy: sortKeys(x.Order), Limit: x.Limit, Offset: x.Offset, InsertOnly: insertOnly(x.Input)}), nil
	case *plan.Window:
		return w.window(x)
	case *plan.Session:
		in, err := w.node(x.Input)
		if err != nil {
			return circuit.Node{}, err
		}
		return w.b.Session(in, op.SessionSpec{Time: x.Time, Keys: x.Keys, Gap: x.Gap}), nil
	case *plan.ProjectSet:
		in, err := w.node(x.Input)
		if err != nil {
			return circuit.Node{}, err
		}
		return w.flatMap(in, x.Funcs, x.Cond, x.Outer)
	case *plan.FuncScan:
		// A function in FROM over constants: its rows for the one row of
		// a constant relation (fed once).
		one, err := w.node(&plan.Values{Rows: [][]plan.Scalar{{}}})
		if err != nil {
			return circuit.Node{}, err
		}
		return w.flatMap(one, []*plan.FuncScan{x}, nil, false)
	case *plan.Exchange:
		// One shard: an exchange moves nothing.
		return w.node(x.Input)
	}
	return circuit.Node{}, unsupported(fmt.Sprintf("plan node %T", n))
}

func sortKeys(keys []plan.SortKey) []op.SortKey {
	out := make([]op.SortKey, len(keys))
	for i, k := range keys {
		out[i] = op.SortKey{Column: k.Col, Descending: k.Desc, NullsFirst: k.NullsFirst}
	}
	return out
}

// temporalOp is the operator of a plan.TemporalBound.
func temporalOp(name string) (op.TemporalOp, bool) {
	switch name {
	case "<":
		return op.TemporalLt, true
	case "<=":
		return op.TemporalLe, true
	case ">":
		return op.TemporalGt, true
	case ">=":
		return op.TemporalGe, true
	}
	return 0, false
}

// flatMap lowers set-returning functions over in's rows (op.FlatMap).
func (w *builder) flatMap(in circuit.Node, funcs []*plan.FuncScan, cond plan.Scalar, outer bool) (circuit.Node, error) {
	spec := op.FlatMapSpec{Outer: outer}
	for _, f := range funcs {
		args, err := w.exprs(f.Args)
		if err != nil {
			return circuit.Node{}, err
		}
		names := make([]string, len(f.Cols))
		for i, c := range f.Cols {
			names[i] = c.Name
		}
		srf := SetReturning(f)
		spec.Funcs = append(spec.Funcs, op.FlatMapFunc{Func: srf, Args: args, Names: names})
	}
	if cond != nil {
		var err error
		if spec.Cond, err = w.lower.Lower(cond); err != nil {
			return circuit.Node{}, err
		}
	}
	return w.b.FlatMap(in, spec), nil
}

// SetReturning is the evaluation of a function in FROM (or of a
// ProjectSet).
func SetReturning(f *plan.FuncScan) *expr.SetReturning {
	s := &expr.SetReturning{Name: f.Name, Ordinality: f.Ordinality}
	for _, a := range f.Args {
		s.ArgTypes = append(s.ArgTypes, a.Type())
	}
	cols := f.Cols
	if f.Ordinality {
		cols = cols[:len(cols)-1]
	}
	for _, c := range cols {
		s.Cols = append(s.Cols, c.Type)
	}
	return s
}
