// Package op holds RockStream's IVM operators, one per file, in DBSP naming
// (STYLE.md 15): the incremental operator is unprefixed (Distinct) and its
// non-incremental reference is prefixed Stream (StreamDistinct). For every
// operator f the incremental form computes
//
//	f^Δ(ΔC) = f(C ⊎ ΔC) − f(C)
//
// where C is the integral of its past inputs (spec §2); tests check
// Integrate(f^Δ(Δ)) = f(Integrate(Δ)) at every step.
//
// An incremental operator implements Operator: Step consumes one delta per
// input for one epoch and returns the output delta. Stateful operators keep
// their state in arrangements (ivm/arrange) written through the epoch's
// kv.Txn, so their state survives a restart. Stream forms are plain
// functions over whole (integrated) Z-sets, used as test oracles and never
// on the hot path.
//
// Operators (incremental constructor / stream reference):
//
//	NewSource(schema)                          —
//	NewFilter(in, pred)                        StreamFilter(ctx, pred, batch)
//	NewMap(exprs, names) / NewProject(in, cols) StreamMap / StreamProject
//	NewFlatMap(in, FlatMapSpec)                StreamFlatMap(ctx, in, spec, batch)
//	NewAggregate(state, in, AggregateSpec)     StreamAggregate(ctx, in, spec, batch)
//	NewJoin(state, left, right, JoinSpec)      StreamJoin(ctx, spec, left, right, l, r)
//	NewDistinct(state, in)                     StreamDistinct(in, batch)
//	NewUnionAll(schemas)                       StreamUnionAll(batches...)
//	NewSetOp(state, kind, left, right)         StreamSetOp(kind, schema, l, r)
//	NewTopK(state, in, TopKSpec)               StreamTopK(in, spec, batch)
//	NewWindow(state, in, WindowSpec)           StreamWindow(ctx, in, spec, batch)
//	NewIntegrate / NewDifferentiate / NewDelay StreamIntegrate / StreamDifferentiate / StreamDelay
//	NewRecursive(state, in, body, RecursiveSpec) the batch fixpoint (ivm/sql's ad-hoc iteration)
//	NewTemporalFilter(state, in, spec)         StreamTemporalFilter(ctx, spec, now, batch)
//	NewSession(state, in, SessionSpec)         StreamSession(in, spec, batch)
//	Fuse(filter, filter|map|project)           the chain of Stream forms
//
// Fused runs a chain of Filters ending in at most one Map or Project as one
// pass (a selection vector instead of intermediate batches); ivm/circuit
// fuses such chains when it builds a circuit.
//
// Keys (group, join, distinct, partition, ORDER BY) use ivm/keyenc, so
// equality and order are PostgreSQL's; rows are identified by
// zset.EncodeRow.
//
// Evaluation errors are data (Materialize's rule): when an expression fails
// on a row, the operator drops the row and records an error row with the
// row's weight in ctx.Errors (see EvalErrors). Retracting the row retracts
// the error again, so the integrated error Z-set of a view is empty exactly
// when no live input makes it fail. Step's own error result is reserved for
// storage failures, corrupt state and a step refused for memory.
//
// Memory (memory.go): a step's deltas are charged to Context.Memory, a
// StepMemory with the step's limit; the circuit charges each operator's
// output, and Join charges while it emits (an OutputMeter), so a join that
// multiplies its inputs fails with RS-5502 (53200) near the limit instead
// of after building its whole output.
package op

import (
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Operator is one incremental operator instance in a circuit.
type Operator interface {
	// Step consumes one delta per input and returns this epoch's output
	// delta (not necessarily consolidated).
	Step(ctx *Context, inputs []zset.Batch) (zset.Batch, error)
	// Schema is the output schema.
	Schema() types.Schema
}

// Stateful is implemented by operators that keep arrangements.
type Stateful interface {
	Operator
	// Arrangements lists the operator's arrangements (for statistics and
	// cache management).
	Arrangements() []*arrange.Arrangement
}

// State configures a stateful operator's arrangements.
type State struct {
	// ID is the operator's stable id; its arrangements' keys start with it.
	ID arrange.ID
	// CacheEntriesMax bounds each arrangement's read cache (0: default,
	// negative: no cache).
	CacheEntriesMax int
}

func (s State) arrangement(kind byte) *arrange.Arrangement {
	return arrange.New(arrange.Config{Namespace: kv.PrefixOpState, Kind: kind, ID: s.ID, CacheEntriesMax: s.CacheEntriesMax})
}

// Context is what one Step may use.
type Context struct {
	// Txn is the epoch's read-write view; all state writes go here.
	Txn kv.Txn
	// Env is the expression environment (fixed for views).
	Env *expr.Env
	// Now is the step's time, which a TemporalFilter filters by: for a
	// view, the time its shard recorded with the epoch (the same on a
	// replay); for a run over a snapshot, the statement's time.
	Now types.TimestampTZ
	// Watermarks are the event-time watermarks of the step's inputs, by
	// source (agg_watermark.go): for a view, the ones its shard carried
	// with the epochs being stepped; absent, an aggregate keeps all its
	// state. Only looked up, never ranged over.
	Watermarks map[WatermarkSource]types.TimestampTZ
	// Errors collects evaluation errors raised this step as a Z-set of
	// ErrorSchema rows.
	Errors zset.Batch
	// Memory accounts the step's deltas against the step's memory limit
	// (memory.go; nil: not accounted).
	Memory *StepMemory
	// MeteredBytes is what this operator's OutputMeters charged to Memory
	// while it stepped, so the circuit charges only the rest of its
	// output.
	MeteredBytes int64
}

// ErrorSchema is the schema of evaluation-error rows: the SQLSTATE, the RS
// code, the message and the offending input row rendered as text.
//
//lint:immutable a constant schema; never assigned after init.
var ErrorSchema = types.Schema{
	{Name: "sqlstate", Type: types.TText},
	{Name: "code", Type: types.TText},
	{Name: "message", Type: types.TText},
	{Name: "key", Type: types.TText},
}

// Fail records an evaluation error for row with the row's weight. Errors
// that are not user-visible *errcode.Error values are returned instead: they
// are bugs or storage failures, not data.
func (c *Context) Fail(err error, row types.Row, weight int64) error {
	e, ok := errcode.As(err)
	if !ok {
		return err
	}
	c.Errors.Add(types.Row{e.State(), e.Code.ID, e.Message, zset.FormatRow(row)}, weight)
	return nil
}

// evalBool evaluates a predicate; NULL counts as false (SQL WHERE).
func evalBool(env *expr.Env, pred expr.Expr, row types.Row) (bool, error) {
	v, err := pred.Eval(env, row)
	if err != nil {
		return false, err
	}
	b, _ := v.(bool)
	return b, nil
}

// concatRows returns left ++ right.
func concatRows(left, right types.Row) types.Row {
	out := make(types.Row, 0, len(left)+len(right))
	return append(append(out, left...), right...)
}

// nullRow returns n NULLs.
func nullRow(n int) types.Row { return make(types.Row, n) }

// project returns the columns cols of row.
func project(row types.Row, cols []int) types.Row {
	out := make(types.Row, len(cols))
	for i, c := range cols {
		out[i] = row[c]
	}
	return out
}
