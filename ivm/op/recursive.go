package op

import (
	"encoding/binary"
	"fmt"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// recursionIterationsMax bounds the rounds of one fixpoint phase in one
// epoch (each round steps the recursive term once over the previous
// round's changes). A set-semantics recursion converges within the length
// of the longest new shortest derivation; a bag (UNION ALL) recursion over
// a cycle never converges — PostgreSQL loops forever there — so the bound
// turns that into an error naming the query and the bound. Simulation
// range: 8..recursionIterationsMax (RecursiveSpec.IterationsMax).
const recursionIterationsMax = 10_000

// RecursiveMode says how a Recursive operator maintains its fixpoint.
type RecursiveMode uint8

const (
	// RecursiveBag is UNION ALL recursion whose step is linear in the
	// recursive relation: step(R + δ) = step(R) + step(δ), so signed deltas
	// ride the semi-naive iteration unchanged (a deletion is a negative
	// delta) and no state beyond the step's own is needed.
	RecursiveBag RecursiveMode = iota + 1
	// RecursiveSetDRed is UNION recursion whose step counts derivations:
	// every operator between the recursive reference and the step's output
	// is weight-preserving and monotone (scan, filter, project, inner join,
	// semi join with the reference on the left, UNION ALL), so a row's step
	// weight is its number of derivations. Deletions are exact by DRed:
	// over-delete everything with a lost derivation, then re-derive what
	// still has support.
	RecursiveSetDRed
	// RecursiveSetRecompute is UNION recursion whose step does not count
	// derivations (DISTINCT, anti or outer joins, set operations on the
	// path from the reference): each epoch retracts the whole relation and
	// derives it again from the seeds, semi-naively.
	RecursiveSetRecompute
)

func (m RecursiveMode) String() string {
	switch m {
	case RecursiveBag:
		return "bag"
	case RecursiveSetDRed:
		return "dred"
	case RecursiveSetRecompute:
		return "recompute"
	}
	return "?"
}

// RecursiveSpec configures a Recursive operator.
type RecursiveSpec struct {
	// Name is the recursive query's name (the CTE), for errors.
	Name string
	Mode RecursiveMode
	// IterationsMax bounds the rounds of each fixpoint phase per epoch
	// (0: recursionIterationsMax).
	IterationsMax int
}

// RecursiveBody is a recursive query's step (the recursive term) as an
// incremental sub-circuit with state of its own: Step feeds it a delta of
// the recursive relation and a delta of each invariant input (relations
// the step reads that do not depend on the recursion; nil: all empty) and
// returns the change of the step's output. Stepping it several times in
// one epoch is what DBSP's nested (iteration) time is: each call is one
// round of the inner clock, and the body's integrals are over all rounds
// of all epochs so far.
type RecursiveBody interface {
	Step(ctx *Context, work zset.Batch, invariants []zset.Batch) (zset.Batch, error)
	// Arrangements lists the body's arrangements (statistics, caches).
	Arrangements() []*arrange.Arrangement
	// StateFormat names the encoding of the body's state (format record).
	StateFormat() string
}

// Recursive is WITH RECURSIVE: the least fixpoint of R = Init ∪ Step(R)
// (UNION: sets) or R = Init + Step(R) (UNION ALL: bags), maintained
// incrementally. Input 0 is Init's delta, inputs 1.. are the deltas of the
// step's invariant inputs. Each epoch iterates the step semi-naively over
// the changes until a round changes nothing:
//
//	ΔR₀ = ΔInit + Step(R, B+ΔB) − Step(R, B)      ΔRₖ₊₁ = Step(R+ΣΔR, ·) − Step(R+ΣΔR−ΔRₖ, ·)
//
// with the set modes adding DRed's two phases (see RecursiveMode). State
// of the set modes (besides the body's):
//
//	0x01 KindRecursiveRows    op_id row_key → row       (R, a set)
//	0x01 KindRecursiveSupport op_id row_key → weight, row (Init + Step(R): derivations)
//
//	time | Init  | edges (step R ⋈ edges) | output (reachability, UNION)
//	-----|-------|------------------------|------------------------------
//	0    | {1}   | {1→2, 2→3}             | {1:+1, 2:+1, 3:+1}
//	1    | {}    | {3→2:+1}               | {}
//	2    | {}    | {1→2:-1}               | {2:-1, 3:-1}
type Recursive struct {
	schema  types.Schema
	types   []types.Type
	cols    []int
	spec    RecursiveSpec
	body    RecursiveBody
	rows    *arrange.Arrangement
	support *arrange.Arrangement
}

// NewRecursive returns a Recursive over rows of schema.
func NewRecursive(state State, schema types.Schema, body RecursiveBody, spec RecursiveSpec) (*Recursive, error) {
	if spec.Mode < RecursiveBag || spec.Mode > RecursiveSetRecompute {
		return nil, fmt.Errorf("op: recursive: unknown mode %d", spec.Mode)
	}
	if spec.IterationsMax <= 0 {
		spec.IterationsMax = recursionIterationsMax
	}
	cols := allColumns(len(schema))
	return &Recursive{
		schema: schema, types: keyTypes(schema, cols), cols: cols, spec: spec, body: body,
		rows:    state.arrangement(arrange.KindRecursiveRows),
		support: state.arrangement(arrange.KindRecursiveSupport),
	}, nil
}

// Schema implements Operator.
func (o *Recursive) Schema() types.Schema { return o.schema }

// Arrangements implements Stateful: its own and the body's, so the node's
// state statistics cover the whole recursion.
func (o *Recursive) Arrangements() []*arrange.Arrangement {
	out := []*arrange.Arrangement{o.rows, o.support}
	return append(out, o.body.Arrangements()...)
}

func (o *Recursive) stateFormat() string {
	return "recursive/1[" + o.spec.Mode.String() + "]{" + o.body.StateFormat() + "}"
}

// Step implements Operator.
func (o *Recursive) Step(ctx *Context, inputs []zset.Batch) (zset.Batch, error) {
	switch o.spec.Mode {
	case RecursiveBag:
		return o.stepBag(ctx, inputs[0], inputs[1:])
	case RecursiveSetDRed:
		return o.stepDRed(ctx, inputs[0], inputs[1:])
	}
	return o.stepRecompute(ctx, inputs[0], inputs[1:])
}

// diverged is the error of a fixpoint phase that did not converge.
func (o *Recursive) diverged() error {
	return errcode.New(errcode.RecursionNotConverging, "recursive query \"%s\" did not converge within %d iterations", o.spec.Name, o.spec.IterationsMax).
		WithDetail("construct: WITH RECURSIVE; bound: recursionIterationsMax = %d", o.spec.IterationsMax)
}

// stepBag is the signed semi-naive iteration: by linearity every round's
// output change is the next round's input, with deletions as negative
// weights.
func (o *Recursive) stepBag(ctx *Context, init zset.Batch, invariants []zset.Batch) (zset.Batch, error) {
	ds, err := o.body.Step(ctx, zset.Batch{}, invariants)
	if err != nil {
		return zset.Batch{}, err
	}
	frontier := zset.Consolidate(zset.Sum(init, ds))
	var out zset.Batch
	for round := 0; frontier.Len() > 0; round++ {
		if round >= o.spec.IterationsMax {
			return zset.Batch{}, o.diverged()
		}
		out.AddBatch(frontier, 1)
		ds, err := o.body.Step(ctx, frontier, nil)
		if err != nil {
			return zset.Batch{}, err
		}
		frontier = zset.Consolidate(ds)
	}
	return zset.Consolidate(out), nil
}

// splitSigns splits a delta into its negative and positive entries.
func splitSigns(b zset.Batch) (neg, pos zset.Batch) {
	for i, r := range b.Rows {
		if b.Weights[i] < 0 {
			neg.Add(r, b.Weights[i])
		} else {
			pos.Add(r, b.Weights[i])
		}
	}
	return neg, pos
}

// splitAllSigns splits every invariant delta into negative and positive.
func splitAllSigns(bs []zset.Batch) (neg, pos []zset.Batch) {
	neg, pos = make([]zset.Batch, len(bs)), make([]zset.Batch, len(bs))
	for i, b := range bs {
		neg[i], pos[i] = splitSigns(b)
	}
	return neg, pos
}

// setDelta gathers one round's changes of the set modes by row key.
type setDelta struct {
	keys    []string
	rows    []types.Row
	weights []int64
	index   map[string]int
}

func (o *Recursive) gather(b zset.Batch) *setDelta {
	d := &setDelta{index: make(map[string]int, b.Len())}
	var buf []byte
	for i, r := range b.Rows {
		buf = appendKey(buf[:0], o.types, r, o.cols)
		k := string(buf)
		j, ok := d.index[k]
		if !ok {
			j = len(d.keys)
			d.index[k] = j
			d.keys, d.rows, d.weights = append(d.keys, k), append(d.rows, r), append(d.weights, 0)
		}
		d.weights[j] += b.Weights[i]
	}
	return d
}

// addSupport adds a round's step output to the support (derivation
// counts) and returns it gathered by key. A support entry keeps the
// first-seen representation of its row after the weight, so that rows
// can be derived from the support alone (stepRecompute).
func (o *Recursive) addSupport(ctx *Context, b zset.Batch) (*setDelta, error) {
	d := o.gather(b)
	var value []byte
	for i, k := range d.keys {
		if d.weights[i] == 0 {
			continue
		}
		w, stored, oldLen, err := o.supportEntry(ctx, k)
		if err != nil {
			return nil, err
		}
		w += d.weights[i]
		if w == 0 {
			if err := o.support.Delete(ctx.Txn, []byte(k), oldLen); err != nil {
				return nil, err
			}
			continue
		}
		value = binary.AppendVarint(value[:0], w)
		if stored != nil {
			value = append(value, stored...)
		} else {
			value = zset.EncodeRow(value, d.rows[i])
		}
		if err := o.support.Set(ctx.Txn, []byte(k), value, oldLen); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// supportEntry reads the support of the row with key k: its weight, its
// stored row encoding (nil when absent) and the value's length (-1 when
// absent).
func (o *Recursive) supportEntry(ctx *Context, k string) (weight int64, row []byte, oldLen int, err error) {
	v, ok, err := o.support.Get(ctx.Txn, []byte(k))
	if err != nil || !ok {
		return 0, nil, -1, err
	}
	weight, row, err = decodeSupport(v)
	return weight, append([]byte(nil), row...), len(v), err
}

func decodeSupport(v []byte) (int64, []byte, error) {
	w, n := binary.Varint(v)
	if n <= 0 {
		return 0, nil, errcode.New(errcode.ArrangementCorrupt, "corrupt recursive support %x", v)
	}
	return w, v[n:], nil
}

// member returns R's stored representation of the row with key k.
func (o *Recursive) member(ctx *Context, k string) (types.Row, bool, error) {
	v, ok, err := o.rows.Get(ctx.Txn, []byte(k))
	if err != nil || !ok {
		return nil, false, err
	}
	row, err := decodeStoredRow(v)
	return row, err == nil, err
}

func decodeStoredRow(v []byte) (types.Row, error) {
	row, rest, err := zset.DecodeRow(append([]byte(nil), v...))
	if err != nil || len(rest) != 0 {
		return nil, errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt recursive row")
	}
	return row, nil
}

func (o *Recursive) supported(ctx *Context, k string) (bool, error) {
	w, _, _, err := o.supportEntry(ctx, k)
	return w > 0, err
}

// frontier is one round's rows entering or leaving R, in first-seen
// order, each once.
type frontier struct {
	keys []string
	rows []types.Row
	seen map[string]bool
}

func (f *frontier) add(k string, r types.Row) {
	if f.seen == nil {
		f.seen = map[string]bool{}
	}
	if !f.seen[k] {
		f.seen[k] = true
		f.keys, f.rows = append(f.keys, k), append(f.rows, r)
	}
}

func (f *frontier) batch(weight int64) zset.Batch {
	b := zset.Batch{Rows: f.rows, Weights: make([]int64, len(f.rows))}
	for i := range b.Weights {
		b.Weights[i] = weight
	}
	return b
}

// overDelete removes from R, round by round, every row with a lost
// derivation: first the rows of lost (the support decreases of the
// epoch's deletions), then whatever lost a derivation through a removed
// row. It returns the removed rows.
func (o *Recursive) overDelete(ctx *Context, lost *setDelta, removed *frontier) error {
	for round := 0; ; round++ {
		var next frontier
		for i, k := range lost.keys {
			if lost.weights[i] >= 0 || removed.seen[k] {
				continue
			}
			row, ok, err := o.member(ctx, k)
			if err != nil {
				return err
			}
			if ok {
				next.add(k, row)
			}
		}
		if len(next.keys) == 0 {
			return nil
		}
		if round >= o.spec.IterationsMax {
			return o.diverged()
		}
		for i, k := range next.keys {
			removed.add(k, next.rows[i])
			if err := o.rows.Delete(ctx.Txn, []byte(k), -1); err != nil {
				return err
			}
		}
		ds, err := o.body.Step(ctx, next.batch(-1), nil)
		if err != nil {
			return err
		}
		if lost, err = o.addSupport(ctx, ds); err != nil {
			return err
		}
	}
}

// derive adds to R, round by round, every candidate row not in R that has
// support, then whatever gains support through an added row (semi-naive
// evaluation). It returns the added rows.
func (o *Recursive) derive(ctx *Context, candidates *frontier, added *frontier) error {
	for round := 0; ; round++ {
		var next frontier
		for i, k := range candidates.keys {
			if next.seen[k] {
				continue
			}
			if _, in, err := o.member(ctx, k); err != nil || in {
				if err != nil {
					return err
				}
				continue
			}
			ok, err := o.supported(ctx, k)
			if err != nil {
				return err
			}
			if ok {
				next.add(k, candidates.rows[i])
			}
		}
		if len(next.keys) == 0 {
			return nil
		}
		if round >= o.spec.IterationsMax {
			return o.diverged()
		}
		for i, k := range next.keys {
			added.add(k, next.rows[i])
			if err := o.rows.Set(ctx.Txn, []byte(k), zset.EncodeRow(nil, next.rows[i]), -1); err != nil {
				return err
			}
		}
		ds, err := o.body.Step(ctx, next.batch(1), nil)
		if err != nil {
			return err
		}
		gained, err := o.addSupport(ctx, ds)
		if err != nil {
			return err
		}
		candidates = &frontier{}
		for i, k := range gained.keys {
			if gained.weights[i] > 0 {
				candidates.add(k, gained.rows[i])
			}
		}
	}
}

// stepDRed is delete-and-rederive. Deletions (every negative entry of the
// epoch's input deltas) go first, alone, so that no gained derivation can
// hide a lost one in the same row: the over-delete phase then removes
// every row that lost any derivation, and everything derived through it.
// What is left has a derivation that uses no removed row (by induction on
// derivation depth), so it is in the new fixpoint. The insertion phase
// then adds the epoch's insertions and re-derives, semi-naively, every
// removed or newly supported row that still has support; from a subset of
// the fixpoint, that reaches exactly the least fixpoint, cycles included.
func (o *Recursive) stepDRed(ctx *Context, init zset.Batch, invariants []zset.Batch) (zset.Batch, error) {
	initNeg, initPos := splitSigns(init)
	invNeg, invPos := splitAllSigns(invariants)
	ds, err := o.body.Step(ctx, zset.Batch{}, invNeg)
	if err != nil {
		return zset.Batch{}, err
	}
	lost, err := o.addSupport(ctx, zset.Sum(initNeg, ds))
	if err != nil {
		return zset.Batch{}, err
	}
	var removed frontier
	if err := o.overDelete(ctx, lost, &removed); err != nil {
		return zset.Batch{}, err
	}
	ds, err = o.body.Step(ctx, zset.Batch{}, invPos)
	if err != nil {
		return zset.Batch{}, err
	}
	gained, err := o.addSupport(ctx, zset.Sum(initPos, ds))
	if err != nil {
		return zset.Batch{}, err
	}
	candidates := &frontier{}
	for i, k := range removed.keys {
		candidates.add(k, removed.rows[i])
	}
	for i, k := range gained.keys {
		if gained.weights[i] > 0 {
			candidates.add(k, gained.rows[i])
		}
	}
	var added frontier
	if err := o.derive(ctx, candidates, &added); err != nil {
		return zset.Batch{}, err
	}
	return zset.Consolidate(zset.Sum(removed.batch(-1), added.batch(1))), nil
}

// stepRecompute retracts all of R (through the body, together with the
// epoch's invariant deltas), leaving the support at Init + Step(∅), and
// derives R again from every supported row.
func (o *Recursive) stepRecompute(ctx *Context, init zset.Batch, invariants []zset.Batch) (zset.Batch, error) {
	var removed frontier
	err := o.rows.Scan(ctx.Txn, func(k, v []byte) error {
		row, err := decodeStoredRow(v)
		if err != nil {
			return err
		}
		removed.add(string(k), row)
		return nil
	})
	if err != nil {
		return zset.Batch{}, err
	}
	for _, k := range removed.keys {
		if err := o.rows.Delete(ctx.Txn, []byte(k), -1); err != nil {
			return zset.Batch{}, err
		}
	}
	ds, err := o.body.Step(ctx, removed.batch(-1), invariants)
	if err != nil {
		return zset.Batch{}, err
	}
	if _, err := o.addSupport(ctx, zset.Sum(init, ds)); err != nil {
		return zset.Batch{}, err
	}
	candidates := &frontier{}
	err = o.support.Scan(ctx.Txn, func(k, v []byte) error {
		w, stored, err := decodeSupport(v)
		if err != nil || w <= 0 {
			return err
		}
		row, err := decodeStoredRow(stored)
		if err != nil {
			return err
		}
		candidates.add(string(k), row)
		return nil
	})
	if err != nil {
		return zset.Batch{}, err
	}
	var added frontier
	if err := o.derive(ctx, candidates, &added); err != nil {
		return zset.Batch{}, err
	}
	return zset.Consolidate(zset.Sum(removed.batch(-1), added.batch(1))), nil
}
