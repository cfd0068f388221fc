package bind

import (
	"fmt"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// Grouping sets (GROUP BY GROUPING SETS / ROLLUP / CUBE) and GROUPING().
//
// A query grouped by several grouping sets binds to a UNION ALL of one
// plain Aggregate per set, each projected onto the same layout: every
// grouping expression of the query (NULL where the set does not group by
// it), then the aggregates, then one column per GROUPING() call holding
// that set's constant value. Everything above the grouping (HAVING, the
// select list, ORDER BY, windows) reads that layout exactly as it reads a
// plain Aggregate's output, so views over grouping sets are maintained by
// the operators every grouped view uses:
//
//	SELECT b, c, count(*), GROUPING(b, c) FROM t GROUP BY ROLLUP (b, c)
//
//	Union All
//	  Project b, c, count, 0          ← Aggregate group=[b, c]
//	  Union All
//	    Project b, NULL, count, 1     ← Aggregate group=[b]
//	    Project NULL, NULL, count, 3  ← Aggregate group=[] (one row, also
//	                                    over empty input, as PostgreSQL)
//
// NB: a rolled-up NULL and a group whose value is NULL are equal columns;
// GROUPING() tells them apart, as in PostgreSQL. A view stores its rows as
// a multiset, so two equal rows from different sets are two rows.

// groupingSetsMax bounds the grouping sets one GROUP BY expands to; it is
// PostgreSQL's limit (54001 past it). Each set is one Aggregate of the
// plan, so the limit also bounds the plan's size.
const groupingSetsMax = 4096

// cubeElementsMax is PostgreSQL's limit on CUBE's elements (54011 past
// it): 2^12 sets is already the grouping-set limit.
const cubeElementsMax = 12

// groupingArgsMax is PostgreSQL's limit on GROUPING()'s arguments (the
// result is a bit mask in an int4).
const groupingArgsMax = 31

// groupingRef is a placeholder scalar for a GROUPING(args) call: lifted to
// its column of the grouping-set union (or to 0 under a plain GROUP BY)
// once the query's grouping is known.
type groupingRef struct {
	args []plan.Scalar
	loc  int32
	// col is the call's column in the grouped layout; -1 under a plain
	// GROUP BY (every argument is grouped: the value is 0).
	col int
}

func (g *groupingRef) Type() types.Type { return types.TInt4 }
func (g *groupingRef) String() string {
	parts := make([]string, len(g.args))
	for i, a := range g.args {
		parts[i] = a.String()
	}
	return "GROUPING(" + strings.Join(parts, ", ") + ")"
}
func (g *groupingRef) Children() []plan.Scalar                  { return nil }
func (g *groupingRef) WithChildren(_ []plan.Scalar) plan.Scalar { return g }

// groupingFunc binds GROUPING(args) where aggregates may appear (the
// select list, HAVING, ORDER BY).
func (b *binder) groupingFunc(x *pg_query.GroupingFunc, sc *scope, ctx exprCtx) (plan.Scalar, error) {
	if ctx.groupings == nil {
		return nil, errcode.New(errcode.SQLGroupingError, "grouping operations are not allowed in %s", ctx.clause).WithPosition(b.pos(x.Location))
	}
	if ctx.inAgg {
		return nil, errcode.New(errcode.SQLGroupingError, "aggregate function calls cannot contain grouping operations").WithPosition(b.pos(x.Location))
	}
	if len(x.Args) > groupingArgsMax {
		return nil, b.semantic("54023", x.Location, "GROUPING must have fewer than 32 arguments")
	}
	g := &groupingRef{loc: x.Location, col: -1}
	for _, a := range x.Args {
		s, err := b.expr(a, sc, exprCtx{clause: ctx.clause})
		if err != nil {
			return nil, err
		}
		g.args = append(g.args, s)
	}
	*ctx.groupings = append(*ctx.groupings, g)
	return g, nil
}

// groupBy binds a GROUP BY clause: the distinct grouping expressions and,
// when the clause holds GROUPING SETS, ROLLUP, CUBE or (), the grouping
// sets as indexes into them. sets is nil for a plain GROUP BY, and a
// clause expanding to a single set is bound as that plain GROUP BY (as
// PostgreSQL does).
func (b *binder) groupBy(sel *pg_query.SelectStmt, sc *scope, targets []plan.Scalar, names []string) (exprs []plan.Scalar, sets [][]int, err error) {
	index := func(s plan.Scalar) int {
		for i, e := range exprs {
			if plan.Equal(e, s) {
				return i
			}
		}
		exprs = append(exprs, s)
		return len(exprs) - 1
	}
	hasSets := false
	product := [][]int{{}}
	for _, g := range sel.GroupClause {
		var item [][]int
		if gs := g.GetGroupingSet(); gs != nil {
			hasSets = true
			if item, err = b.expandGroupingSet(gs, sc, targets, names, index); err != nil {
				return nil, nil, err
			}
		} else {
			s, err := b.groupItem(g, sc, targets, names)
			if err != nil {
				return nil, nil, err
			}
			item = [][]int{{index(s)}}
		}
		if len(product)*len(item) > groupingSetsMax {
			return nil, nil, errcode.New(errcode.SQLStatementTooComplex, "too many grouping sets present (maximum %d)", groupingSetsMax)
		}
		var next [][]int
		for _, p := range product {
			for _, s := range item {
				next = append(next, union(p, s))
			}
		}
		product = next
	}
	if sel.GroupDistinct {
		var distinct [][]int
		for _, s := range product {
			if !slices.ContainsFunc(distinct, func(d []int) bool { return slices.Equal(d, s) }) {
				distinct = append(distinct, s)
			}
		}
		product = distinct
	}
	if !hasSets || len(product) == 1 {
		// One set: a plain GROUP BY over its expressions.
		plain := make([]plan.Scalar, len(product[0]))
		for i, e := range product[0] {
			plain[i] = exprs[e]
		}
		return plain, nil, nil
	}
	return exprs, product, nil
}

// union is the sorted union of two index sets.
func union(a, b []int) []int {
	out := append(append([]int(nil), a...), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// expandGroupingSet expands one GROUPING SETS / ROLLUP / CUBE / () item to
// its grouping sets, as PostgreSQL's expand_grouping_sets does: ROLLUP
// (e1, ..., en) is (e1..en), (e1..en-1), ..., (); CUBE every subset;
// GROUPING SETS the concatenation of its items' sets. A parenthesized list
// inside them is one set.
func (b *binder) expandGroupingSet(gs *pg_query.GroupingSet, sc *scope, targets []plan.Scalar, names []string, index func(plan.Scalar) int) ([][]int, error) {
	// simple binds one element of ROLLUP / CUBE / GROUPING SETS that is an
	// expression or a parenthesized list of them.
	simple := func(n *pg_query.Node) ([]int, error) {
		items := []*pg_query.Node{n}
		if r := n.GetRowExpr(); r != nil && r.RowFormat == pg_query.CoercionForm_COERCE_IMPLICIT_CAST {
			items = r.Args
		}
		var set []int
		for _, it := range items {
			s, err := b.groupItem(it, sc, targets, names)
			if err != nil {
				return nil, err
			}
			set = union(set, []int{index(s)})
		}
		return set, nil
	}
	switch gs.Kind {
	case pg_query.GroupingSetKind_GROUPING_SET_EMPTY:
		return [][]int{{}}, nil
	case pg_query.GroupingSetKind_GROUPING_SET_ROLLUP, pg_query.GroupingSetKind_GROUPING_SET_CUBE:
		var elems [][]int
		for _, n := range gs.Content {
			if n.GetGroupingSet() != nil {
				return nil, b.semantic("42601", gs.Location, "syntax error: grouping sets cannot be nested in %s", gs.Kind)
			}
			s, err := simple(n)
			if err != nil {
				return nil, err
			}
			elems = append(elems, s)
		}
		if gs.Kind == pg_query.GroupingSetKind_GROUPING_SET_ROLLUP {
			out := make([][]int, 0, len(elems)+1)
			for k := len(elems); k >= 0; k-- {
				var set []int
				for _, e := range elems[:k] {
					set = union(set, e)
				}
				out = append(out, set)
			}
			return out, nil
		}
		if len(elems) > cubeElementsMax {
			return nil, b.semantic("54011", gs.Location, "CUBE is limited to %d elements", cubeElementsMax)
		}
		var out [][]int
		for mask := (1 << len(elems)) - 1; mask >= 0; mask-- {
			var set []int
			for i, e := range elems {
				if mask&(1<<(len(elems)-1-i)) != 0 {
					set = union(set, e)
				}
			}
			out = append(out, set)
		}
		return out, nil
	case pg_query.GroupingSetKind_GROUPING_SET_SETS:
		var out [][]int
		for _, n := range gs.Content {
			if inner := n.GetGroupingSet(); inner != nil {
				sets, err := b.expandGroupingSet(inner, sc, targets, names, index)
				if err != nil {
					return nil, err
				}
				out = append(out, sets...)
			} else {
				s, err := simple(n)
				if err != nil {
					return nil, err
				}
				out = append(out, s)
			}
			if len(out) > groupingSetsMax {
				return nil, errcode.New(errcode.SQLStatementTooComplex, "too many grouping sets present (maximum %d)", groupingSetsMax)
			}
		}
		return out, nil
	}
	return nil, b.unsupported(gs.Location, fmt.Sprintf("grouping set kind %s", gs.Kind))
}

// bindGroupings checks each GROUPING() call's arguments are grouping
// expressions (42803 otherwise) and gives each call its column in the
// grouped layout (after the groups and the aggregates), or -1 under a
// plain GROUP BY.
func bindGroupings(groupings []*groupingRef, groupExprs []plan.Scalar, sets [][]int, nAggs int) error {
	for k, g := range groupings {
		for _, a := range g.args {
			if !slices.ContainsFunc(groupExprs, func(e plan.Scalar) bool { return plan.Equal(e, a) }) {
				return errcode.New(errcode.SQLGroupingError, "arguments to GROUPING must be grouping expressions of the associated query level")
			}
		}
		g.col = -1
		if sets != nil {
			g.col = len(groupExprs) + nAggs + k
		}
	}
	return nil
}

// groupingValue is GROUPING(args) in a grouping set: bit i (from the
// right, the last argument lowest) is 1 when the set does not group by
// the i-th argument from the end.
func groupingValue(g *groupingRef, groupExprs []plan.Scalar, set []int) int64 {
	var v int64
	for _, a := range g.args {
		v <<= 1
		grouped := false
		for _, e := range set {
			if plan.Equal(groupExprs[e], a) {
				grouped = true
			}
		}
		if !grouped {
			v |= 1
		}
	}
	return v
}

// buildGroupingSets makes the UNION ALL of one Aggregate per grouping set
// (see the top of this file); agg is the Aggregate over every grouping
// expression that buildAggregate made, whose input (the grouping
// expressions and aggregate arguments) every set's Aggregate shares.
func buildGroupingSets(agg *plan.Aggregate, groupExprs []plan.Scalar, sets [][]int, groupings []*groupingRef) plan.Node {
	nGroups := len(groupExprs)
	absentSomewhere := make([]bool, nGroups)
	for _, set := range sets {
		for i := range absentSomewhere {
			if !slices.Contains(set, i) {
				absentSomewhere[i] = true
			}
		}
	}
	var cols []plan.Column
	for i := 0; i < nGroups; i++ {
		c := agg.Cols[i]
		c.Nullable = c.Nullable || absentSomewhere[i]
		cols = append(cols, c)
	}
	cols = append(cols, agg.Cols[nGroups:]...)
	for k := range groupings {
		cols = append(cols, plan.Column{Name: fmt.Sprintf("grouping%d", k+1), Type: types.TInt4})
	}
	var out plan.Node
	for _, set := range sets {
		branch := &plan.Aggregate{Input: agg.Input, GroupBy: append([]int(nil), set...), Aggs: agg.Aggs}
		for _, g := range set {
			branch.Cols = append(branch.Cols, agg.Cols[g])
		}
		branch.Cols = append(branch.Cols, agg.Cols[nGroups:]...)
		exprs := make([]plan.Scalar, 0, len(cols))
		for i := 0; i < nGroups; i++ {
			if at := slices.Index(set, i); at >= 0 {
				exprs = append(exprs, &plan.ColRef{Index: at, Typ: cols[i].Type, Name: cols[i].Name})
			} else {
				exprs = append(exprs, &plan.Const{Value: nil, Typ: cols[i].Type})
			}
		}
		for a := range agg.Aggs {
			c := branch.Cols[len(set)+a]
			exprs = append(exprs, &plan.ColRef{Index: len(set) + a, Typ: c.Type, Name: c.Name})
		}
		for _, g := range groupings {
			exprs = append(exprs, &plan.Const{Value: groupingValue(g, groupExprs, set), Typ: types.TInt4})
		}
		var node plan.Node = &plan.Project{Input: branch, Exprs: exprs, Cols: cols}
		if out == nil {
			out = node
		} else {
			out = &plan.SetOp{Kind: plan.Union, All: true, Left: out, Right: node, Cols: cols}
		}
	}
	return out
}
