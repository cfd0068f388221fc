// Package circuit builds and runs IVM circuits: DAGs of incremental
// operators (ivm/op) from sources (base-table deltas) to sinks (view
// outputs), stepped once per epoch (spec §2, §6, §9).
//
// # Building (the compiler's API)
//
// A Builder declares nodes in topological order; every method returns a
// Node handle and never fails — the first error is returned by Build, so a
// compiler can chain calls:
//
//	b := circuit.NewBuilder()
//	orders := b.Source(1, ordersSchema)          // SourceID 1: table "orders"
//	paid := b.Filter(orders, predIsPaid)         // expr.Expr over orders' row
//	byCustomer := b.Aggregate(paid, op.AggregateSpec{
//		GroupBy: []int{0},                       // customer_id
//		Calls: []op.AggregateCall{
//			{Func: op.AggCountStar, Name: "n"},
//			{Func: op.AggSum, Arg: amountExpr, Name: "total"},
//		},
//	})
//	b.Sink(100, byCustomer)                      // ViewID 100
//	big := b.Filter(byCustomer, totalOver1000)   // a view on the view:
//	b.Sink(101, big)                             // shares the aggregate
//	c, err := b.Build(circuit.Config{ID: 7, Clock: ctx.Now})
//
// Node constructors (see each op.* type's doc for formula and table):
//
//	Source(SourceID, types.Schema)            Filter(in, expr.Expr)
//	Map(in, []expr.Expr, names []string)      Project(in, cols []int)
//	FlatMap(in, op.FlatMapSpec)
//	Aggregate(in, op.AggregateSpec)           Join(left, right, op.JoinSpec)
//	Distinct(in)                              UnionAll(ins...)   Union(ins...)
//	SetOp(op.SetIntersect[All]|op.SetExcept[All], left, right)
//	TopK(in, op.TopKSpec)                     Integrate(in) Differentiate(in) Delay(in)
//	Recursive(init, invariants, step, out, op.RecursiveSpec)
//	Sink(ViewID, in)                          Schema(n) SetID(n, arrange.ID)
//
// Scalar expressions are expr.Expr evaluated over the node's input row
// (for Join's Residual: the concatenated left++right row). Keys (GroupBy,
// join keys, PartitionBy, OrderBy) are column indexes: project computed
// keys with Map first.
//
// # Running
//
// Incremental mode, one Step per epoch:
//
//	txn := kv.NewTxn(store)                      // the shard's epoch view
//	outs, err := c.Step(txn, map[circuit.SourceID]zset.Batch{1: delta})
//	store.Apply(txn.Batch())                     // ONE batch per epoch
//	// outs[100] is view 100's output delta this epoch.
//	snapshot, err := circuit.ReadView(store, 100) // the view as of now
//
// Every state write (arrangements, view outputs, statistics) goes to txn,
// so committing txn.Batch() with the frontier makes the epoch atomic. A new
// circuit built the same way over the same store continues from the stored
// state (restart without recomputation). If the owner throws a batch away
// instead of committing it, it calls c.DiscardCaches().
//
// Ad-hoc mode runs the same circuit once over a snapshot as a single delta
// from empty, with throwaway in-memory state, so view and query semantics
// cannot drift apart:
//
//	results, err := c.RunOnce(map[circuit.SourceID]zset.Batch{1: tableRows})
//
// # Fusion
//
// Build fuses each chain of stateless operators — Filters followed by at
// most one Map or Project, each link being its upstream node's only
// consumer and not a sink — into one op.Fused on the chain's last node, so
// the chain runs in one pass over its input with a selection vector
// instead of building a batch per operator. The folded nodes keep their
// positions (operator ids do not move) and their rows in/out statistics;
// Config.Unfused turns fusion off.
//
// # Columnar deltas
//
// StepDeltas is Step over zset.Delta values, each a row batch or a
// columnar one (zset.Columns: Arrow arrays plus the weights). A columnar
// delta stays columnar through every node whose operator implements
// op.Columnar (fused chains, and lone Filters, Maps and Projects, which
// Build wraps as one-stage chains) and into view sinks, which encode and
// store rows straight from the arrays (the same bytes as from rows). Any
// other operator gets the rows built at its input; RowsMaterialized counts
// every row built from columns (there, inside columnar operators, and for
// Step's row outputs), so a test can prove a view runs columnar end to
// end. ColumnarSource tells the input's owner (the shard) whether a
// source's deltas are worth decoding into columns: every consumer is
// columnar. A view's output delta is columnar when its sink's input was,
// and is gathered only if someone reads it (zset.TakeDelta).
//
//	outs, err := c.StepDeltas(txn, map[circuit.SourceID]zset.Delta{1: zset.ColumnDelta(cols)})
//	rows := outs[100].Batch() // built here, only if wanted
//
// # Memory
//
// With Env.StepBytesMax set, a step's deltas (every node's output, which
// lives until the step ends; source deltas are their owner's) are charged
// to one op.StepMemory, and the step fails with RS-5502 (53200) once they
// would hold more: the server derives the bound from --memory-budget.
//
// # Evaluation errors are data
//
// An expression error (division by zero, overflow, bad cast) in a view's
// operator drops the offending row and adds an error row (SQLSTATE, RS
// code, message, offending row) with the row's weight to the node's error
// Z-set; error Z-sets flow to every downstream sink and are integrated into
// the view's error arrangement. While it is non-empty ReadView returns the
// error (RS-3501 with the expression's SQLSTATE); retracting the offending
// input retracts the error and the view is readable again. Other views are
// unaffected; nothing is lost.
//
// # Recursion
//
// WITH RECURSIVE is one Recursive node (recursive.go, op.Recursive) whose
// recursive term is a nested circuit, declared in a Builder of its own:
// its source RecursiveWorkSource is the recursive relation R, its sources
// 1.. are the invariants (nodes of the outer circuit the recursion does
// not change, such as the edges table), and its output is the term's
// result. Per epoch the node steps the nested circuit again and again, one
// round of DBSP's inner (iteration) clock per call, feeding it the
// previous round's change of R until a round changes nothing (semi-naive
// evaluation); the epoch's output is the sum of the rounds:
//
//	        epoch t                          rounds k = 0, 1, 2, … (inner time)
//	ΔInit ─────────────┐
//	                   ▼
//	ΔB ──► [ step(R, B) ]──ΔS──► [ admit: R += ΔRₖ ] ──ΔRₖ──┐──► Σₖ ΔRₖ = ΔR (output)
//	           ▲                                            │
//	           └────────────── ΔRₖ (next round) ◄───────────┘
//
// Because the nested circuit is incremental (its joins keep R and B
// integrated over all rounds of all epochs), a round costs the change it
// processes, and feeding it a change of R gives exactly step(R + ΔR) −
// step(R), linear or not. How a round's ΔS becomes ΔR depends on the
// semantics (op.RecursiveMode):
//
//   - UNION ALL with a step linear in R: ΔR = ΔS, signed; deletions ride
//     the same iteration as negative weights (exact by linearity, as in
//     the reference engine).
//   - UNION whose step counts derivations (joins, filters, projections):
//     DRed. Counting derivations alone is not exact for recursion (a cycle
//     supports itself: cut from its root it keeps a count of one), so the
//     epoch's deletions are applied first, alone, and every row that lost
//     a derivation is removed with everything derived through it; then
//     insertions are applied and removed rows with support left are
//     derived again. DBSP's nested time would also be exact, but it needs
//     every operator of the term to keep state per (epoch, iteration);
//     DRed needs only R and its derivation counts beside the term's usual
//     state.
//   - UNION otherwise (DISTINCT, anti or outer joins on the path): the
//     epoch retracts R and derives it again (exact, costs |R|).
//
// Each phase is bounded by RecursiveSpec.IterationsMax rounds; past it
// the step fails with RS-3503 (UNION ALL over a cycle never converges),
// which the shard turns into a failed view rather than a failed epoch.
// The nested circuit's op ids are derived from the Recursive node's, so
// its state belongs to, and is dropped with, the same view.
//
// # Statistics
//
// c.Stats() returns per node: rows in/out, state rows/bytes (persisted
// under shard_meta so they survive restarts), steps and step time measured
// with Config.Clock (ivm never reads the wall clock).
//
// # State layout
//
//	0x01 kind op_id(16) bucket(2) key          operator state (ivm/arrange)
//	0x03 0xF1 view_id(16) bucket(2) row        view output row → weight
//	0x03 0xF2 view_id(16) bucket(2) error_row  view error → weight
//	0x06 'S' op_id(16)                          node state statistics
//
// where bucket is the bucket of the partition key (for view outputs, the
// stored row; see ivm/arrange).
//
// Which encodings wrote this state is said by the circuit's format record
// (StateFormat, format.go), which the state's owner stores with it.
//
// A view weight is a one-word kv.TagAddWords value, so a sink adds new
// rows with blind merge writes and retracts with read-modify-write; a
// stored weight of zero reads as absent (sink.go).
package circuit
