// Package dist is the distribution pass: it annotates a PlanIR tree with
// the partitioning each operator needs and inserts Exchange nodes where an
// input is not already partitioned that way (spec §4 step [5]). Exchanges
// are elided when the input is co-partitioned: a join of two tables on
// their primary keys, or an aggregate grouped by its input's partitioning
// columns, needs none.
//
// Partitioning of a node's output:
//
//	Scan of a table with a PRIMARY KEY   hash(primary key)
//	Scan of an insert-only relation      arbitrary (round robin)
//	Filter                               as its input
//	Project                              as its input, if the key columns survive
//	Join (keys)                          hash(left keys) (= hash(right keys))
//	Aggregate (group by)                 hash(group columns)
//	Distinct / set operations            hash(all columns)
//	TopK, global Aggregate, Values       single
package dist

import (
	"slices"

	"github.com/rockstream/rockstream/ivm/sql/plan"
)

// partitioning is how a node's rows are spread over shards.
type partitioning struct {
	// keys are the hash columns; nil with single=false means arbitrary.
	keys []int
	// alts are other column lists holding the same values as keys (the
	// other side of an inner equi-join), so hashing by them is the same.
	alts   [][]int
	single bool
}

func sameCols(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (p partitioning) satisfies(want partitioning) bool {
	if want.single {
		return p.single
	}
	if p.single || p.keys == nil {
		return false
	}
	if sameCols(p.keys, want.keys) {
		return true
	}
	for _, a := range p.alts {
		if sameCols(a, want.keys) {
			return true
		}
	}
	return false
}

// mapThrough maps partitioning columns through a projection's pass-through
// columns; ok is false when a key column does not survive.
func mapThrough(keys []int, exprs []plan.Scalar) ([]int, bool) {
	var out []int
	for _, k := range keys {
		found := -1
		for i, e := range exprs {
			if c, ok := e.(*plan.ColRef); ok && c.Index == k {
				found = i
				break
			}
		}
		if found < 0 {
			return nil, false
		}
		out = append(out, found)
	}
	return out, true
}

// Distribute returns the plan with Exchange nodes inserted.
func Distribute(n plan.Node) plan.Node {
	out, _ := distributor{}.distribute(n)
	return out
}

// distributor is one distribution pass. With subsets, a grouping
// operator (GROUP BY, DISTINCT, a window's PARTITION BY, a session key)
// whose input is partitioned by a subset of its keys needs no exchange:
// rows equal on every key are equal on the subset, so they are on one
// shard already (the input's partitioning then holds for its output).
// Without it only the keys themselves satisfy it, the placement every
// spread view recorded so far was computed with (a pass that placed one
// differently would misplace its stored state), so only the stages of a
// view use subsets (stages.go).
type distributor struct{ subsets bool }

// subset is, when the pass co-partitions by subsets and input
// partitioning p is by columns that are all among keys (and is not the
// keys themselves, which need no exchange anyway), those columns.
func (ds distributor) subset(p partitioning, keys []int) ([]int, bool) {
	if !ds.subsets || p.single || p.keys == nil || len(keys) == 0 {
		return nil, false
	}
	for _, cand := range append([][]int{p.keys}, p.alts...) {
		if len(cand) > 0 && !sameCols(cand, keys) && !slices.ContainsFunc(cand, func(c int) bool { return !slices.Contains(keys, c) }) {
			return cand, true
		}
	}
	return nil, false
}

// traceableSubset is, when the pass co-partitions by subsets and keys
// (columns of n) do not all trace to one scan through filters,
// projections and joins with a constant (traceKeys), the longest prefix
// of them, in their order skipping those that do not, that does; ok is
// false when the whole keys trace (no need) or none does.
func (ds distributor) traceableSubset(n plan.Node, keys []int) ([]int, bool) {
	if !ds.subsets {
		return nil, false
	}
	schema := n.Schema()
	if _, _, ok := traceKeys(n, columnKeys(schema, keys)); ok {
		return nil, false
	}
	var out []int
	for _, k := range keys {
		if slices.Contains(out, k) {
			continue
		}
		if _, _, ok := traceKeys(n, columnKeys(schema, append(slices.Clone(out), k))); ok {
			out = append(out, k)
		}
	}
	return out, len(out) > 0
}

// constant reports whether n computes a constant relation: VALUES under
// filters and projections.
func constant(n plan.Node) bool {
	switch x := n.(type) {
	case *plan.Values:
		return true
	case *plan.Filter:
		return constant(x.Input)
	case *plan.Project:
		return constant(x.Input)
	}
	return false
}

type side uint8

const (
	constNone side = iota
	constLeft
	constRight
)

// constantSide is the side of join x that is a constant relation
// (constant) and the join needs whole on every shard only: each shard
// joins its part of the other side with it, and every row of the join's
// output is made by a row of that part (no unmatched constant rows of an
// outer join, which every shard would make).
func constantSide(x *plan.Join) side {
	l, r := constant(x.Left), constant(x.Right)
	switch {
	case r && !l && (x.Kind == plan.InnerJoin || x.Kind == plan.LeftJoin || x.Kind == plan.SemiJoin || x.Kind == plan.AntiJoin):
		return constRight
	case l && !r && (x.Kind == plan.InnerJoin || x.Kind == plan.RightJoin):
		return constLeft
	}
	return constNone
}

// shift moves partitioning p of a join's right side to the join's output
// columns (after the nLeft columns of its left side).
func shift(p partitioning, nLeft int) partitioning {
	if p.single || p.keys == nil {
		return p
	}
	move := func(cols []int) []int {
		out := make([]int, len(cols))
		for i, c := range cols {
			out[i] = c + nLeft
		}
		return out
	}
	q := partitioning{keys: move(p.keys)}
	for _, a := range p.alts {
		q.alts = append(q.alts, move(a))
	}
	return q
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// require wraps n in an Exchange unless it already has partitioning want.
func require(n plan.Node, have, want partitioning) plan.Node {
	if have.satisfies(want) {
		return n
	}
	return &plan.Exchange{Input: n, Keys: want.keys, Single: want.single}
}

func (ds distributor) distribute(n plan.Node) (plan.Node, partitioning) {
	switch x := n.(type) {
	case *plan.Scan:
		if len(x.Relation.PrimaryKey) > 0 {
			return x, partitioning{keys: append([]int(nil), x.Relation.PrimaryKey...)}
		}
		return x, partitioning{}
	case *plan.Values:
		return x, partitioning{single: true}
	case *plan.Filter:
		in, p := ds.distribute(x.Input)
		return &plan.Filter{Input: in, Pred: x.Pred}, p
	case *plan.FuncScan:
		return x, partitioning{single: true}
	case *plan.ProjectSet:
		// Each input row expands where it is; input columns keep their
		// positions, so the input's partitioning holds.
		in, p := ds.distribute(x.Input)
		q := *x
		q.Input = in
		return &q, p
	case *plan.Project:
		in, p := ds.distribute(x.Input)
		out := &plan.Project{Input: in, Exprs: x.Exprs, Cols: x.Cols}
		if p.single || p.keys == nil {
			return out, p
		}
		// Keys survive when each is passed through as a plain column.
		var mapped [][]int
		for _, cand := range append([][]int{p.keys}, p.alts...) {
			if m, ok := mapThrough(cand, x.Exprs); ok {
				mapped = append(mapped, m)
			}
		}
		if len(mapped) == 0 {
			return out, partitioning{}
		}
		return out, partitioning{keys: mapped[0], alts: mapped[1:]}
	case *plan.Join:
		l, lp := ds.distribute(x.Left)
		r, rp := ds.distribute(x.Right)
		j := *x
		if ds.subsets {
			// A join with a constant side (VALUES) needs no exchange: every
			// shard has the whole constant, so each joins its part of the
			// other side with it where it is.
			switch constantSide(x) {
			case constRight:
				j.Left, j.Right = l, r
				return &j, lp
			case constLeft:
				j.Left, j.Right = l, r
				return &j, shift(rp, len(x.Left.Schema()))
			}
		}
		if len(x.EquiKeys) == 0 {
			// A theta or cross join sees every pair on one shard.
			j.Left = require(l, lp, partitioning{single: true})
			j.Right = require(r, rp, partitioning{single: true})
			return &j, partitioning{single: true}
		}
		lk := make([]int, len(x.EquiKeys))
		rk := make([]int, len(x.EquiKeys))
		for i, k := range x.EquiKeys {
			lk[i], rk[i] = k.Left, k.Right
		}
		j.Left = require(l, lp, partitioning{keys: lk})
		j.Right = require(r, rp, partitioning{keys: rk})
		nLeft := len(x.Left.Schema())
		shifted := make([]int, len(rk))
		for i, k := range rk {
			shifted[i] = k + nLeft
		}
		switch x.Kind {
		case plan.InnerJoin:
			// Matched rows carry equal values on both sides.
			return &j, partitioning{keys: lk, alts: [][]int{shifted}}
		case plan.LeftJoin, plan.SemiJoin, plan.AntiJoin:
			return &j, partitioning{keys: lk}
		case plan.RightJoin:
			return &j, partitioning{keys: shifted}
		}
		// FULL JOIN: unmatched rows of either side have NULL keys on the
		// other: neither side's keys place every row.
		return &j, partitioning{}
	case *plan.Aggregate:
		in, p := ds.distribute(x.Input)
		a := *x
		if len(x.GroupBy) == 0 {
			a.Input = require(in, p, partitioning{single: true})
			return &a, partitioning{single: true}
		}
		if sub, ok := ds.subset(p, x.GroupBy); ok {
			// Output column i is group key i.
			out := make([]int, len(sub))
			for i, c := range sub {
				out[i] = slices.Index(x.GroupBy, c)
			}
			a.Input = in
			return &a, partitioning{keys: out}
		}
		if sub, ok := ds.traceableSubset(in, x.GroupBy); ok {
			// Rows partitioned by the group keys that are computed from
			// one relation's row: the group keys that are not (a key
			// computed over a VALUES column) would need an exchange above
			// the operator computing them.
			out := make([]int, len(sub))
			for i, c := range sub {
				out[i] = slices.Index(x.GroupBy, c)
			}
			a.Input = require(in, p, partitioning{keys: sub})
			return &a, partitioning{keys: out}
		}
		a.Input = require(in, p, partitioning{keys: x.GroupBy})
		return &a, partitioning{keys: seq(len(x.GroupBy))}
	case *plan.Distinct:
		in, p := ds.distribute(x.Input)
		d := *x
		keys := x.On
		if len(keys) == 0 {
			keys = seq(len(x.Schema()))
		}
		if sub, ok := ds.subset(p, keys); ok {
			// Input columns pass through.
			d.Input = in
			return &d, partitioning{keys: sub}
		}
		d.Input = require(in, p, partitioning{keys: keys})
		return &d, partitioning{keys: keys}
	case *plan.SetOp:
		l, lp := ds.distribute(x.Left)
		r, rp := ds.distribute(x.Right)
		s := *x
		all := partitioning{keys: seq(len(x.Cols))}
		if x.Kind == plan.Union && x.All {
			// UNION ALL is linear: no repartitioning needed.
			s.Left, s.Right = l, r
			return &s, partitioning{}
		}
		s.Left = require(l, lp, all)
		s.Right = require(r, rp, all)
		return &s, all
	case *plan.TopK:
		in, p := ds.distribute(x.Input)
		t := *x
		t.Input = require(in, p, partitioning{single: true})
		return &t, partitioning{single: true}
	case *plan.Window:
		// Partitions are independent: co-partition by PARTITION BY (no
		// keys: one partition, on one shard). Input columns pass through.
		in, p := ds.distribute(x.Input)
		w := *x
		want := partitioning{keys: x.PartitionBy, single: len(x.PartitionBy) == 0}
		if sub, ok := ds.subset(p, x.PartitionBy); ok {
			w.Input = in
			return &w, partitioning{keys: sub}
		}
		w.Input = require(in, p, want)
		return &w, want
	case *plan.Session:
		// Keys are independent, like window partitions: co-partition by
		// the session key (none: one sequence, on one shard).
		in, p := ds.distribute(x.Input)
		s := *x
		want := partitioning{keys: x.Keys, single: len(x.Keys) == 0}
		if sub, ok := ds.subset(p, x.Keys); ok {
			s.Input = in
			return &s, partitioning{keys: sub}
		}
		s.Input = require(in, p, want)
		return &s, want
	case *plan.Exchange:
		in, _ := ds.distribute(x.Input)
		e := *x
		e.Input = in
		return &e, partitioning{keys: x.Keys, single: x.Single}
	}
	// Unknown nodes: gather their inputs (always correct).
	ins := n.Inputs()
	out := make([]plan.Node, len(ins))
	for i, in := range ins {
		d, p := ds.distribute(in)
		out[i] = require(d, p, partitioning{single: true})
	}
	if len(ins) > 0 {
		n = n.WithInputs(out)
	}
	return n, partitioning{single: true}
}
