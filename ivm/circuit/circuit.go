package circuit

import (
	"fmt"

	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/op"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Config configures a built circuit.
type Config struct {
	// ID distinguishes this circuit's operator state from other circuits'
	// on the same shard: node i gets op id arrange.MakeID(ID, i) unless the
	// builder set one explicitly.
	ID uint64
	// Env is the expression environment. Views use a fixed Env (UTC); nil
	// means a zero Env with time zone UTC.
	Env *expr.Env
	// Clock returns a monotonic time in nanoseconds for step timing; nil
	// disables timing. (ivm never calls time.Now: pass ctx.Now from the
	// runtime.)
	Clock func() int64
	// CacheEntriesMax bounds each arrangement's read cache (0: default,
	// negative: no cache).
	CacheEntriesMax int
	// Unfused steps every operator on its own instead of fusing chains of
	// stateless operators (see fuse); results are the same, for tests and
	// benchmarks that compare the two.
	Unfused bool
	// nodeID, when set, gives node i its op id (a recursive node's step
	// circuit derives its ids from the recursive node's, recursive.go).
	nodeID func(i int) arrange.ID
}

// Circuit is a built, runnable circuit.
type Circuit struct {
	cfg     Config
	nodes   []*node
	sources map[SourceID]int
	sinks   []*sink
	// exitRowsBuilt counts rows Step built from columnar view outputs.
	exitRowsBuilt int64
	// columnarRowsIn counts the entries of columnar source deltas.
	columnarRowsIn int64
	// format is the state format record (format.go), taken before fusion.
	format []byte
	// nested is set on the step circuit of a recursive node (recursive.go).
	nested bool
	// steps counts stepNodes calls: the slot of each node's recent ring
	// the current step counts into is steps % RecentStepsMax.
	steps int64
	// now is the time of the next step (SetNow); unset, a step's time is
	// the Env's statement time.
	now    types.TimestampTZ
	nowSet bool
	// watermarks are the event-time watermarks of the next step
	// (SetWatermarks).
	watermarks map[op.WatermarkSource]types.TimestampTZ
}

// SetNow sets the time the following steps filter temporal bounds by
// (op.TemporalFilter): for a view, the time its shard recorded with the
// epoch being stepped, so a replay steps at the same time.
func (c *Circuit) SetNow(now types.TimestampTZ) { c.now, c.nowSet = now, true }

// SetWatermarks sets the event-time watermarks the following steps close
// windows by (op.AggregateWatermark): for a view, the ones its shard
// carried with the epochs being stepped, so a replay closes the same
// windows. The circuit keeps the map; the caller must not change it.
func (c *Circuit) SetWatermarks(m map[op.WatermarkSource]types.TimestampTZ) { c.watermarks = m }

// Temporal reports whether the circuit has a temporal filter: its output
// changes as time passes, so it must step even when no input changed.
func (c *Circuit) Temporal() bool {
	for _, n := range c.nodes {
		if _, ok := n.operator.(*op.TemporalFilter); ok {
			return true
		}
	}
	return false
}

// stepNow is the time of the current step.
func (c *Circuit) stepNow() types.TimestampTZ {
	if c.nowSet || c.cfg.Env == nil {
		return c.now
	}
	return c.cfg.Env.StatementTime
}

// RecentStepsMax is how many of the last steps each node's counts are
// kept for (NodeStats.Recent): what a view costs now, apart from its
// backfill and its history, for 16×3 counters a node.
const RecentStepsMax = 16

// stepCounts are one node's counts in one step.
type stepCounts struct{ rowsIn, rowsOut, nanos int64 }

type node struct {
	label    string
	inputs   []int
	operator op.Operator
	id       arrange.ID
	stats    NodeStats
	// recent are the node's counts in the last RecentStepsMax steps, a
	// ring indexed by Circuit.steps.
	recent [RecentStepsMax]stepCounts
	// statsLoaded is set once the persisted state counters were read.
	statsLoaded bool
	// fused is set on a node stepped inside its only consumer (see fuse);
	// stages lists, on that consumer, the nodes fused into it in chain
	// order.
	fused  bool
	stages []int
}

type sink struct {
	view   ViewID
	node   int
	rows   *arrange.Arrangement
	errors *arrange.Arrangement
}

// NodeStats are one operator's statistics (EXPLAIN, metrics).
type NodeStats struct {
	Label string
	ID    arrange.ID
	// RowsIn and RowsOut count delta entries over the circuit's lifetime.
	RowsIn, RowsOut int64
	// StateRows and StateBytes are the operator's stored state (keys and
	// key+value bytes), persisted across restarts.
	StateRows, StateBytes int64
	// StepNanos is the total time spent in Step by Config.Clock.
	StepNanos int64
	// Steps counts steps.
	Steps int64
	// RowsMaterialized counts the rows built from columnar deltas at the
	// node's inputs (see Circuit.RowsMaterialized).
	RowsMaterialized int64
	// Inputs are the positions of the nodes this one reads, as declared
	// (before fusion), so the operator tree reads as it was built.
	Inputs []int `json:",omitempty"`
	// Fused is set on a node stepped inside its consumer (a fused chain
	// of stateless operators): its rows in and out are its own, its time
	// is counted in the consumer's StepNanos.
	Fused bool `json:",omitempty"`
	// Recent are the counts of the last steps (at most RecentStepsMax).
	Recent RecentStats
}

// RecentStats are a node's counts over its circuit's last Steps steps.
type RecentStats struct {
	Steps, RowsIn, RowsOut, StepNanos int64
}

// Build constructs the circuit.
func (b *Builder) Build(cfg Config) (*Circuit, error) {
	if b.err != nil {
		return nil, b.err
	}
	if cfg.Env == nil {
		cfg.Env = &expr.Env{}
	}
	c := &Circuit{cfg: cfg, sources: map[SourceID]int{}}
	for i, spec := range b.nodes {
		id := arrange.MakeID(cfg.ID, uint64(i+1))
		if cfg.nodeID != nil {
			id = cfg.nodeID(i)
		}
		if spec.id != nil {
			id = *spec.id
		}
		o, err := spec.make(op.State{ID: id, CacheEntriesMax: cfg.CacheEntriesMax})
		if err != nil {
			return nil, fmt.Errorf("circuit: %s: %w", spec.label, err)
		}
		c.nodes = append(c.nodes, &node{label: spec.label, inputs: spec.inputs, operator: o, id: id})
		if spec.source != nil {
			c.sources[*spec.source] = i
		}
	}
	c.shareInputStates()
	c.format = c.stateFormat()
	if !cfg.Unfused {
		c.fuse(b.sinks)
	}
	for _, s := range b.sinks {
		c.sinks = append(c.sinks, &sink{
			view:   s.view,
			node:   s.node,
			rows:   viewArrangement(s.view, arrange.KindViewRows),
			errors: viewArrangement(s.view, arrange.KindViewErrors),
		})
	}
	return c, nil
}

// shareInputStates lets an operator read its input's integral from the
// state of the operator feeding it instead of storing a copy: a Window
// directly over a TopK partitioned alike (ROW_NUMBER() ≤ k per partition)
// reads the TopK's windows (op.Window.ReadInputFrom). Both run in this
// circuit's Txn, the TopK first.
func (c *Circuit) shareInputStates() {
	for _, n := range c.nodes {
		w, ok := n.operator.(*op.Window)
		if !ok || len(n.inputs) != 1 {
			continue
		}
		if t, ok := c.nodes[n.inputs[0]].operator.(*op.TopK); ok {
			w.ReadInputFrom(t)
		}
	}
}

// fuse merges each chain of stateless operators, Filters followed by at
// most one Map or Project where every link is its upstream node's only
// consumer, into one op.Fused on the chain's last node. The chain then runs
// in one pass over its input without building the intermediate batches;
// the earlier nodes stay in place (so node positions, and the operator ids
// derived from them, do not change) but are skipped by Step, which credits
// them their rows in and out from the fused operator's per-stage counts.
func (c *Circuit) fuse(sinks []sinkSpec) {
	consumers := make([]int, len(c.nodes))
	for _, n := range c.nodes {
		for _, in := range n.inputs {
			consumers[in]++
		}
	}
	for _, s := range sinks {
		// A sink reads the node's output batch, so it must be built.
		consumers[s.node]++
	}
	for _, n := range c.nodes {
		if len(n.inputs) != 1 {
			continue
		}
		up := c.nodes[n.inputs[0]]
		if consumers[n.inputs[0]] != 1 || up.inputs == nil {
			continue
		}
		fused, ok := op.Fuse(up.operator, n.operator)
		if !ok {
			continue
		}
		n.operator = fused
		n.stages = append(up.stages, n.inputs[0])
		n.inputs = up.inputs
		up.fused, up.stages = true, nil
	}
	for _, n := range c.nodes {
		// A lone Filter, Map or Project runs as a one-stage chain, which
		// steps columnar deltas.
		if single, ok := op.Single(n.operator); ok && !n.fused {
			n.operator = single
		}
	}
}

func viewArrangement(view ViewID, kind byte) *arrange.Arrangement {
	return arrange.New(arrange.Config{
		Namespace: kv.PrefixViewOutput, Kind: kind, ID: arrange.MakeID(0, uint64(view)),
		// View outputs are written, not read, on the maintenance path.
		CacheEntriesMax: -1,
	})
}

// Step runs one epoch: inputs holds each source's delta (absent = empty).
// All state writes go to txn; the caller commits txn.Batch() as the epoch's
// one write batch (or calls DiscardCaches if it throws the batch away).
// outputs holds each view's consolidated output delta.
//
// Step is StepDeltas with row deltas in and out; a view whose output is
// columnar has its rows built here (counted by RowsMaterialized).
func (c *Circuit) Step(txn kv.Txn, inputs map[SourceID]zset.Batch) (map[ViewID]zset.Batch, error) {
	deltas := make(map[SourceID]zset.Delta, len(inputs))
	for id, b := range inputs { //lint:maprange copied into a map keyed the same way
		deltas[id] = zset.RowDelta(b)
	}
	outs, err := c.StepDeltas(txn, deltas)
	if err != nil {
		return nil, err
	}
	results := make(map[ViewID]zset.Batch, len(outs))
	for id, d := range outs { //lint:maprange copied into a map keyed the same way
		results[id] = c.materialize(d)
	}
	return results, nil
}

// materialize returns d's rows, counting the rows built from columns.
func (c *Circuit) materialize(d zset.Delta) zset.Batch {
	if d.Columnar() {
		c.exitRowsBuilt += int64(d.Len())
	}
	return d.Batch()
}

// ColumnarSource reports whether the source id's deltas are best passed
// in columnar form (zset.Columns): its schema has one and every consumer
// of the source steps columnar deltas (a columnar operator or a view
// sink), so no row is built for it in the circuit.
func (c *Circuit) ColumnarSource(id SourceID) bool {
	src, ok := c.sources[id]
	if !ok || !zset.ColumnarSchema(c.nodes[src].operator.Schema()) {
		return false
	}
	consumers := 0
	for _, n := range c.nodes {
		if n.fused {
			continue
		}
		for _, in := range n.inputs {
			if in != src {
				continue
			}
			consumers++
			if _, ok := n.operator.(op.Columnar); !ok || len(n.inputs) != 1 {
				return false
			}
		}
	}
	for _, s := range c.sinks {
		if s.node == src {
			consumers++
		}
	}
	return consumers > 0
}

// SourceSchema is the schema the circuit reads source id's deltas as (nil
// for an unknown source).
func (c *Circuit) SourceSchema(id SourceID) types.Schema {
	src, ok := c.sources[id]
	if !ok {
		return nil
	}
	return c.nodes[src].operator.Schema()
}

// RowsMaterialized is the number of rows the circuit built from columnar
// deltas over its lifetime: at the input of operators that step only rows,
// inside columnar operators (expressions with no columnar kernel, outputs
// with no columnar form) and for Step's row outputs. It is zero for a
// circuit whose deltas stay columnar from source to view.
func (c *Circuit) RowsMaterialized() int64 {
	n := c.exitRowsBuilt
	for _, nd := range c.nodes {
		n += nd.stats.RowsMaterialized
		if co, ok := nd.operator.(op.Columnar); ok {
			n += co.RowsBuilt()
		}
	}
	return n
}

// ColumnarRowsIn is the number of entries the circuit received in
// columnar source deltas over its lifetime.
func (c *Circuit) ColumnarRowsIn() int64 { return c.columnarRowsIn }

// StepDeltas is Step over deltas in either form. A columnar delta stays
// columnar through operators that implement op.Columnar and into view
// sinks, which encode and store rows straight from the arrays; any other
// operator gets the rows built at its input. Each view's output delta is
// columnar when the delta reaching its sink was.
func (c *Circuit) StepDeltas(txn kv.Txn, inputs map[SourceID]zset.Delta) (map[ViewID]zset.Delta, error) {
	//lint:maprange validation only; the error names one unknown id, and any is a bug.
	for id := range inputs {
		if _, ok := c.sources[id]; !ok {
			return nil, fmt.Errorf("circuit: delta for unknown source %d", id)
		}
	}
	outs, errs, err := c.stepNodes(txn, inputs)
	if err != nil {
		return nil, err
	}
	results := make(map[ViewID]zset.Delta, len(c.sinks))
	for _, s := range c.sinks {
		// NB: each row is encoded once, for consolidation and as its
		// stored key (sink.go), straight from the arrays when columnar.
		var delta keyedDelta
		if cols := outs[s.node].Columns(); cols != nil {
			delta = keyedConsolidateColumns(cols)
		} else {
			delta = keyedConsolidate(outs[s.node].Batch())
		}
		if err := writeViewDelta(txn, s.rows, delta); err != nil {
			return nil, err
		}
		if err := writeViewDelta(txn, s.errors, keyedConsolidate(errs[s.node])); err != nil {
			return nil, err
		}
		results[s.view] = delta.delta
	}
	return results, nil
}

// stepNodes steps every node once and returns each node's output delta
// and error Z-set (StepDeltas without the sinks).
func (c *Circuit) stepNodes(txn kv.Txn, inputs map[SourceID]zset.Delta) ([]zset.Delta, []zset.Batch, error) {
	outs := make([]zset.Delta, len(c.nodes))
	errs := make([]zset.Batch, len(c.nodes))
	// Every node's output lives until the step ends, so the step's memory
	// is the sum of them (op.StepMemory).
	mem := c.stepMemory()
	defer mem.Release()
	slot := int(c.steps % RecentStepsMax)
	c.steps++
	for _, n := range c.nodes {
		n.recent[slot] = stepCounts{}
	}
	for i, n := range c.nodes {
		if n.fused {
			// Stepped inside its consumer (see fuse); its output is
			// never read.
			continue
		}
		if env := c.cfg.Env; env != nil && env.Interrupt != nil {
			if err := env.Interrupt(); err != nil {
				return nil, nil, err
			}
		}
		var start int64
		if c.cfg.Clock != nil {
			start = c.cfg.Clock()
		}
		ctx := &op.Context{Txn: txn, Env: c.cfg.Env, Memory: mem, Now: c.stepNow(), Watermarks: c.watermarks}
		var ins []zset.Delta
		var rowsIn int64
		for _, in := range n.inputs {
			ins = append(ins, outs[in])
			rowsIn += int64(outs[in].Len())
			// Errors flow downstream unchanged: a view is in error while
			// any upstream error row is live.
			ctx.Errors.AddBatch(errs[in], 1)
		}
		if n.inputs == nil {
			for id, idx := range c.sources { //lint:maprange finds the one id mapped to this node
				if idx == i {
					ins = []zset.Delta{inputs[id]}
					rowsIn += int64(inputs[id].Len())
					if inputs[id].Columnar() {
						c.columnarRowsIn += int64(inputs[id].Len())
					}
				}
			}
		}
		out, err := c.stepNode(ctx, n, ins)
		if err == nil && n.inputs != nil {
			// NB: a source's delta is its owner's memory, not the step's.
			if rest := op.DeltaBytes(out, len(n.operator.Schema())) - ctx.MeteredBytes; rest > 0 {
				err = mem.Charge(rest)
			}
		}
		if err != nil {
			c.DiscardCaches()
			return nil, nil, fmt.Errorf("circuit: %s: %w", n.label, err)
		}
		outs[i], errs[i] = out, ctx.Errors
		if len(n.stages) > 0 {
			// The fused stages' counts, as if they had run on their own.
			rowsOut := n.operator.(*op.Fused).StageRowsOut()
			for k, stage := range n.stages {
				st := &c.nodes[stage].stats
				st.RowsIn += rowsIn
				st.RowsOut += rowsOut[k]
				st.Steps++
				c.nodes[stage].recent[slot] = stepCounts{rowsIn: rowsIn, rowsOut: rowsOut[k]}
				rowsIn = rowsOut[k]
			}
		}
		n.stats.RowsIn += rowsIn
		n.stats.RowsOut += int64(out.Len())
		n.stats.Steps++
		n.recent[slot].rowsIn, n.recent[slot].rowsOut = rowsIn, int64(out.Len())
		if !c.nested {
			// A nested circuit's state is counted by the node that owns
			// it (op.Recursive lists the nested arrangements).
			if err := c.updateStateStats(txn, n); err != nil {
				return nil, nil, err
			}
		}
		if c.cfg.Clock != nil {
			took := c.cfg.Clock() - start
			n.stats.StepNanos += took
			n.recent[slot].nanos = took
		}
	}
	return outs, errs, nil
}

// stepMemory is one step's memory account: limited by Env.StepBytesMax
// and Env.SharedMemory, and polling Env.Interrupt inside long operator
// steps (nil when none is set).
func (c *Circuit) stepMemory() *op.StepMemory {
	env := c.cfg.Env
	if env == nil || (env.StepBytesMax <= 0 && env.Interrupt == nil && env.SharedMemory == nil) {
		return nil
	}
	return &op.StepMemory{LimitBytes: env.StepBytesMax, Interrupt: env.Interrupt, Shared: env.SharedMemory}
}

// stepNode steps one node: a source passes its delta on as it is, a
// columnar operator steps a columnar delta, and any other operator gets
// row batches (built from columnar deltas here, and counted).
func (c *Circuit) stepNode(ctx *op.Context, n *node, ins []zset.Delta) (zset.Delta, error) {
	if _, ok := n.operator.(*op.Source); ok {
		return ins[0], nil
	}
	if co, ok := n.operator.(op.Columnar); ok && len(ins) == 1 && ins[0].Columnar() {
		return co.StepColumns(ctx, ins[0].Columns())
	}
	batches := make([]zset.Batch, len(ins))
	for j, d := range ins {
		if d.Columnar() {
			n.stats.RowsMaterialized += int64(d.Len())
		}
		batches[j] = d.Batch()
	}
	out, err := n.operator.Step(ctx, batches)
	return zset.RowDelta(out), err
}

// statsKey is where a node's state counters persist (shard_meta namespace).
func statsKey(id arrange.ID) []byte {
	return append([]byte{kv.PrefixShardMeta, 'S'}, id[:]...)
}

func (c *Circuit) updateStateStats(txn kv.Txn, n *node) error {
	st, ok := n.operator.(op.Stateful)
	if !ok {
		return nil
	}
	var rows, bytes int64
	for _, a := range st.Arrangements() {
		s := a.TakeStats()
		rows += s.RowsDelta
		bytes += s.BytesDelta
	}
	if !n.statsLoaded {
		v, ok, err := txn.Get(statsKey(n.id))
		if err != nil {
			return err
		}
		if ok {
			var r, b int64
			if _, err := fmt.Sscanf(string(v), "%d %d", &r, &b); err != nil {
				return fmt.Errorf("circuit: corrupt state statistics for %s: %w", n.label, err)
			}
			n.stats.StateRows, n.stats.StateBytes = r, b
		}
		n.statsLoaded = true
	}
	if rows == 0 && bytes == 0 {
		return nil
	}
	n.stats.StateRows += rows
	n.stats.StateBytes += bytes
	return txn.Put(statsKey(n.id), fmt.Appendf(nil, "%d %d", n.stats.StateRows, n.stats.StateBytes))
}

// LoadStateStats reads every stateful node's stored state counters from
// r, so Stats shows a view's state as stored from the moment its circuit
// is built (after a restart, before its first step), not 0 until each
// node is stepped again.
func (c *Circuit) LoadStateStats(r kv.Reader) error {
	for _, n := range c.nodes {
		if _, ok := n.operator.(op.Stateful); !ok || n.statsLoaded || c.nested {
			continue
		}
		v, ok, err := r.Get(statsKey(n.id))
		if err != nil {
			return err
		}
		var rows, bytes int64
		if ok {
			if _, err := fmt.Sscanf(string(v), "%d %d", &rows, &bytes); err != nil {
				return fmt.Errorf("circuit: corrupt state statistics for %s: %w", n.label, err)
			}
		}
		n.stats.StateRows, n.stats.StateBytes = rows, bytes
		n.statsLoaded = true
	}
	return nil
}

// Stats returns every node's statistics in node order.
func (c *Circuit) Stats() []NodeStats {
	out := make([]NodeStats, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.stats
		out[i].Label = n.label
		out[i].ID = n.id
		out[i].Fused = n.fused
		out[i].Inputs = append([]int(nil), n.inputs...)
		out[i].Recent.Steps = min(c.steps, RecentStepsMax)
		for _, s := range n.recent {
			out[i].Recent.RowsIn += s.rowsIn
			out[i].Recent.RowsOut += s.rowsOut
			out[i].Recent.StepNanos += s.nanos
		}
	}
	// NB: fusion gave a chain's last node the inputs of the chain's first
	// one; each stage is given back its declared input.
	for i, n := range c.nodes {
		if len(n.stages) == 0 {
			continue
		}
		chain := append(append([]int(nil), n.stages...), i)
		out[chain[0]].Inputs = append([]int(nil), n.inputs...)
		for k := 1; k < len(chain); k++ {
			out[chain[k]].Inputs = []int{chain[k-1]}
		}
	}
	return out
}

// StatePrefixes are the key prefixes of the circuit's arrangements: its
// operators' state and its views' rows and errors (one per arrangement,
// in node order, sinks last).
func (c *Circuit) StatePrefixes() [][]byte {
	var out [][]byte
	for _, n := range c.nodes {
		if st, ok := n.operator.(op.Stateful); ok {
			for _, a := range st.Arrangements() {
				out = append(out, a.Prefix())
			}
		}
	}
	for _, s := range c.sinks {
		out = append(out, s.rows.Prefix(), s.errors.Prefix())
	}
	return out
}

// DiscardCaches drops every arrangement read cache. Call it when an
// epoch's write batch was not committed.
func (c *Circuit) DiscardCaches() {
	for _, n := range c.nodes {
		if st, ok := n.operator.(op.Stateful); ok {
			for _, a := range st.Arrangements() {
				a.DiscardCache()
				a.TakeStats()
			}
		}
		n.statsLoaded = false
	}
}

// RunOnce is ad-hoc mode: the circuit run once over a snapshot as a single
// delta from empty, with state in a throwaway in-memory store. It returns
// each view's full result, or, if an expression failed on a row of the
// snapshot, that evaluation error (RS-3501 with the expression's SQLSTATE
// and the offending row) — the same error a view over the same data would
// be in. A circuit used with RunOnce may be run again with RunOnce (each
// run starts from empty state) but must not also be stepped over durable
// state.
func (c *Circuit) RunOnce(snapshot map[SourceID]zset.Batch) (map[ViewID]zset.Batch, error) {
	c.DiscardCaches()
	defer c.DiscardCaches()
	txn := kv.NewTxn(kv.NewMemory())
	outs, err := c.Step(txn, snapshot)
	if err != nil {
		return nil, err
	}
	for _, s := range c.sinks {
		errs, err := ViewErrors(txn, s.view)
		if err != nil {
			return nil, err
		}
		if err := viewError(s.view, errs); err != nil {
			return nil, err
		}
	}
	return outs, nil
}
