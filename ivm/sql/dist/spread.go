package dist

import (
	"slices"

	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// Spread is how a view's plan runs spread over several shards without an
// exchange inside its circuit: every shard runs the whole circuit on the
// rows of its part of each input, and the view is the sum of the shards'
// outputs. Keys are, for each relation the plan reads, the expressions
// over its columns whose values' hash places a row (types.HashRow): two
// rows that meet in any stateful operator (a group, a join key, a
// DISTINCT row, a window partition) have equal keys, so they are always
// on one shard.
//
//	SELECT k, count(*) FROM t GROUP BY k           t by (k)
//	SELECT ... FROM t JOIN u ON t.a = u.b          t by (a), u by (b)
//	SELECT t.a, sum(u.x) FROM t JOIN u ON t.a = u.a GROUP BY t.a
//	                                               t by (a), u by (a)
//	SELECT date_trunc('day', ts), count(*) FROM t GROUP BY 1
//	                                               t by (date_trunc('day', ts))
//	SELECT * FROM t WHERE x > 0                    t by its primary key
//
// A plan needs an exchange inside (it cannot be spread this way) when an
// operator wants its input partitioned by values not computed from one
// read relation's row through filters and projections: a GROUP BY over a
// join on other columns, a global aggregate, ORDER BY ... LIMIT.
type Spread struct {
	Keys map[catalog.ID][]plan.Scalar
}

// Columns reports whether every key of relation id is a plain column, and
// which.
func (s Spread) Columns(id catalog.ID) ([]int, bool) {
	var cols []int
	for _, k := range s.Keys[id] {
		c, ok := k.(*plan.ColRef)
		if !ok {
			return nil, false
		}
		cols = append(cols, c.Index)
	}
	return cols, true
}

// SpreadKeys reports how plan n can be spread (see Spread); ok is false
// when it cannot: it reads anything but tables and sources, needs an
// exchange between two of its operators or onto one shard, holds a
// subquery, is a NOT IN anti-join (whose outcome depends on the whole
// right side), joins keys whose values would hash differently, or reads
// one relation partitioned two ways. Nor is a plan with no stateful
// operator (filters and projections only): each shard would decode every
// row to keep a part of them, where a single view shard does the same
// work once, beside the commits.
func SpreadKeys(n plan.Node) (Spread, bool) { return distributor{}.spreadKeys(n, nil) }

// spreadKeys is SpreadKeys under the pass's rules; the plan may read the
// relations of inputs too (the lower stages, for an upper stage).
func (ds distributor) spreadKeys(n plan.Node, inputs map[catalog.ID]bool) (Spread, bool) {
	s := spreader{keys: map[catalog.ID][]plan.Scalar{}, traced: map[*plan.Scan]bool{}, ok: true, stages: ds.subsets, inputs: inputs}
	d, _ := ds.distribute(n)
	s.walk(d)
	if !s.ok || !s.stateful {
		return Spread{}, false
	}
	// Scans no exchange repartitions keep their own partitioning: by
	// primary key, or (no key, nothing stateful cares) by the whole row.
	for _, sc := range s.scans {
		if s.traced[sc] {
			continue
		}
		cols := slices.Clone(sc.Relation.PrimaryKey)
		if len(cols) == 0 {
			cols = seq(len(sc.Cols))
		}
		s.record(sc, columnKeys(sc.Cols, cols))
	}
	if !s.ok || len(s.keys) == 0 {
		return Spread{}, false
	}
	return Spread{Keys: s.keys}, true
}

func columnKeys(schema []plan.Column, cols []int) []plan.Scalar {
	keys := make([]plan.Scalar, len(cols))
	for i, c := range cols {
		keys[i] = &plan.ColRef{Index: c, Typ: schema[c].Type, Name: schema[c].Name}
	}
	return keys
}

type spreader struct {
	keys   map[catalog.ID][]plan.Scalar
	scans  []*plan.Scan
	traced map[*plan.Scan]bool
	ok     bool
	// stateful: the plan keeps state (anything but filters, projections
	// and UNION ALL).
	stateful bool
	// stages: the plan was distributed for a view's stages (StageKeys):
	// the constant side of a join is on every shard.
	stages bool
	// inputs are the relations it may read besides tables and sources.
	inputs map[catalog.ID]bool
}

func (s *spreader) walk(n plan.Node) {
	if !s.ok {
		return
	}
	for _, sc := range plan.Scalars(n) {
		plan.Walk(sc, func(x plan.Scalar) bool {
			if _, ok := x.(*plan.Subquery); ok {
				s.ok = false
			}
			return s.ok
		})
	}
	switch x := n.(type) {
	case *plan.Scan:
		if x.Relation.Kind != catalog.KindTable && x.Relation.Kind != catalog.KindSource && !s.inputs[x.Relation.ID] {
			s.ok = false
			return
		}
		s.scans = append(s.scans, x)
		return
	case *plan.Exchange:
		if x.Single {
			s.ok = false
			return
		}
		s.trace(x.Input, columnKeys(x.Input.Schema(), x.Keys))
	case *plan.Join:
		if c := constantSide(x); s.stages && c != constNone {
			// Every shard has the constant side whole (distributor).
			s.stateful = true
			if c == constRight {
				s.walk(x.Left)
			} else {
				s.walk(x.Right)
			}
			return
		}
		if x.NullAware {
			s.ok = false
			return
		}
		l, r := x.Left.Schema(), x.Right.Schema()
		for _, k := range x.EquiKeys {
			if hashClass(l[k.Left].Type) != hashClass(r[k.Right].Type) || hashClass(l[k.Left].Type) == classNone {
				s.ok = false
				return
			}
		}
	}
	switch x := n.(type) {
	case *plan.Filter, *plan.Project, *plan.Exchange:
	case *plan.SetOp:
		s.stateful = s.stateful || !(x.Kind == plan.Union && x.All)
	default:
		s.stateful = true
	}
	ins := n.Inputs()
	if len(ins) == 0 {
		s.ok = false // a leaf that is not a scan: VALUES, a function
		return
	}
	for _, in := range ins {
		s.walk(in)
	}
}

// trace follows partitioning keys down through filters and projections
// to the scan they are computed from.
func (s *spreader) trace(n plan.Node, keys []plan.Scalar) {
	sc, keys, ok := traceKeys(n, keys)
	if !ok {
		s.ok = false
		return
	}
	s.traced[sc] = true
	s.record(sc, keys)
}

// traceKeys follows partitioning keys (expressions over n's columns)
// down through filters, projections and joins with a constant side (whose
// keys must be computed from the other side's columns: distributor) to
// the scan they are computed from, and maps them to its columns.
func traceKeys(n plan.Node, keys []plan.Scalar) (*plan.Scan, []plan.Scalar, bool) {
	for {
		switch x := n.(type) {
		case *plan.Filter:
			n = x.Input
			continue
		case *plan.Project:
			mapped := make([]plan.Scalar, len(keys))
			for i, k := range keys {
				mapped[i] = plan.Rewrite(k, func(e plan.Scalar) plan.Scalar {
					if c, ok := e.(*plan.ColRef); ok {
						return x.Exprs[c.Index]
					}
					return e
				})
			}
			keys, n = mapped, x.Input
			continue
		case *plan.Join:
			nLeft := len(x.Left.Schema())
			side, lo, hi := x.Left, 0, nLeft
			switch constantSide(x) {
			case constRight:
			case constLeft:
				side, lo, hi = x.Right, nLeft, len(x.Schema())
			default:
				return nil, nil, false
			}
			mapped := make([]plan.Scalar, len(keys))
			inSide := true
			for i, k := range keys {
				mapped[i] = plan.Rewrite(k, func(e plan.Scalar) plan.Scalar {
					if c, ok := e.(*plan.ColRef); ok {
						if c.Index < lo || c.Index >= hi {
							inSide = false
							return e
						}
						d := *c
						d.Index -= lo
						return &d
					}
					return e
				})
			}
			if !inSide {
				return nil, nil, false
			}
			keys, n = mapped, side
			continue
		case *plan.Scan:
			return x, keys, true
		}
		return nil, nil, false
	}
}

func (s *spreader) record(sc *plan.Scan, keys []plan.Scalar) {
	for _, k := range keys {
		if hashClass(k.Type()) == classNone {
			s.ok = false
			return
		}
		plan.Walk(k, func(e plan.Scalar) bool {
			switch e := e.(type) {
			case *plan.ColRef:
				s.ok = s.ok && e.Index >= 0 && e.Index < len(sc.Cols)
			case *plan.OuterRef, *plan.Subquery, *plan.Param:
				s.ok = false
			}
			return s.ok
		})
	}
	if !s.ok {
		return
	}
	if prev, seen := s.keys[sc.Relation.ID]; seen && keysText(prev) != keysText(keys) {
		s.ok = false // one relation read partitioned two ways (a self-join on other columns)
		return
	}
	s.keys[sc.Relation.ID] = keys
}

func keysText(keys []plan.Scalar) string {
	var b []byte
	for _, k := range keys {
		b = append(b, k.String()...)
		b = append(b, 0)
	}
	return string(b)
}

type class uint8

const (
	classNone class = iota
	classInt
	classFloat
	classText
	classOther
)

// hashClass groups the types whose equal values types.Hash hashes alike;
// classNone for types it does not hash.
func hashClass(t types.Type) class {
	switch t.Kind {
	case types.KindInt2, types.KindInt4, types.KindInt8:
		return classInt
	case types.KindFloat4, types.KindFloat8:
		return classFloat
	case types.KindText, types.KindVarchar, types.KindName:
		return classText
	case types.KindBool, types.KindNumeric, types.KindChar, types.KindBytea, types.KindDate, types.KindTime,
		types.KindTimestamp, types.KindTimestampTZ, types.KindInterval, types.KindUUID, types.KindJSONB:
		return classOther + class(t.Kind)
	}
	return classNone
}
