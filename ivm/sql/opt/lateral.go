package opt

import (
	"fmt"

	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// LateralJoin decorrelates a LATERAL subquery: right references the row of
// left through depth-1 OuterRefs, and the result is left's columns
// followed by right's, joined as kind (InnerJoin or LeftJoin) under on
// (over that combined row; nil for none). The forms:
//
//   - select-project-filter, correlated only in WHERE conjuncts → a join
//     of left with the subquery, the conjuncts its condition
//   - ORDER BY ... LIMIT/OFFSET over rows correlated by WHERE conjuncts
//     inner_expr = outer_expr → the first rows per key (row_number()
//     over the keys, a per-partition top-k), joined on the keys
//   - DISTINCT [ON] over rows correlated by WHERE conjuncts
//     inner_expr = outer_expr → distinct per key, joined on the keys
//   - window functions over rows correlated by WHERE conjuncts
//     inner_expr = outer_expr → the keys lead PARTITION BY
//   - an aggregate whose input is correlated by WHERE conjuncts
//     inner_expr = outer_expr, grouped or not → the aggregate grouped also
//     by the inner expressions, joined on them (without GROUP BY, a left
//     join whose unmatched rows get the aggregate of an empty set)
//
// Correlated conjuncts of an inner join's ON inside the subquery count as
// WHERE conjuncts. Anything else is refused: construct names it (for
// RS-2001 / 0A000).
func LateralJoin(left, right plan.Node, kind plan.JoinKind, on plan.Scalar) (plan.Node, string) {
	if c, ok := on.(*plan.Const); ok && c.Value == true {
		on = nil
	}
	if !plan.HasCorrelation(right) {
		j := &plan.Join{Kind: kind, Left: left, Right: right, Cond: on}
		return j, ""
	}
	right = innerJoinCorrelationToFilter(right)
	// The Projects and Filters above an aggregate (SELECT list, HAVING).
	var chain []plan.Node
	base := right
	for {
		switch x := base.(type) {
		case *plan.Project:
			chain = append(chain, x)
			base = x.Input
			continue
		case *plan.Filter:
			chain = append(chain, x)
			base = x.Input
			continue
		}
		break
	}
	if agg, ok := base.(*plan.Aggregate); ok {
		return lateralAggregate(left, right, chain, agg, kind, on)
	}
	if top, ok := base.(*plan.TopK); ok && plan.HasCorrelation(top.Input) {
		return lateralTopK(left, right, chain, top, kind, on)
	}
	if d, ok := base.(*plan.Distinct); ok && plan.HasCorrelation(d.Input) {
		return lateralDistinct(left, right, chain, d, kind, on)
	}
	if w, ok := base.(*plan.Window); ok && plan.HasCorrelation(w.Input) && !scalarsCorrelated(w) {
		return lateralWindow(left, right, chain, w, kind, on)
	}
	// NB: the SELECT list is computed over the joined rows, not over
	// every row of the subquery's input: an expression that fails on a
	// row no outer row matches must not fail the view (PostgreSQL never
	// evaluates it).
	if out, ok := lateralProjection(left, right, kind, on); ok {
		return out, ""
	}
	inner, preds, ok := pullUp(right, false)
	if !ok {
		if k, ok := keyedDomain(left, right); ok {
			return keyedJoin(left, right, nil, k.node, k, kind, on), ""
		}
		return nil, lateralConstruct(right)
	}
	nLeft := len(left.Schema())
	var conds []plan.Scalar
	for _, p := range preds {
		conds = append(conds, toJoinScope(p, nLeft))
	}
	if on != nil {
		conds = append(conds, on)
	}
	j := &plan.Join{Kind: kind, Left: left, Right: inner, Cond: plan.MakeAnd(conds)}
	return keepColumns(j, left, right, kind, 0), ""
}

// lateralProjection decorrelates a select-project-filter subquery whose
// SELECT list references the row to its left (`LATERAL (SELECT u.v + t.a
// AS w FROM u WHERE ...)`, `LATERAL (SELECT t.a * 2 AS x)`): the join runs
// on the subquery's input and the SELECT list is computed over the joined
// row, for LEFT JOIN LATERAL only where the subquery matched (NULL
// elsewhere, as the subquery has no row there). on is rewritten onto the
// computed values, as part of the join condition.
func lateralProjection(left, right plan.Node, kind plan.JoinKind, on plan.Scalar) (plan.Node, bool) {
	var projs []*plan.Project
	n := right
	for {
		p, ok := n.(*plan.Project)
		if !ok {
			break
		}
		for _, e := range p.Exprs {
			if hasDeepOuterRef(e) || hasCorrelatedSubquery(e) {
				return nil, false
			}
		}
		projs = append(projs, p)
		n = p.Input
	}
	if len(projs) == 0 {
		return nil, false
	}
	inner, preds, ok := pullUp(n, false)
	if !ok {
		return nil, false
	}
	nLeft := len(left.Schema())
	innerCols := inner.Schema()
	// The subquery row marked as present (NULL on a LEFT JOIN's
	// unmatched rows).
	matched := &plan.Project{Input: inner, Exprs: append(plan.ColumnRefs(innerCols), &plan.Const{Value: true, Typ: types.TBool}),
		Cols: append(append([]plan.Column(nil), innerCols...), plan.Column{Name: "?matched", Type: types.TBool, Nullable: true})}
	vals := make([]plan.Scalar, len(n.Schema()))
	for i, c := range n.Schema() {
		vals[i] = &plan.ColRef{Index: nLeft + i, Typ: c.Type, Name: c.Name}
	}
	for i := len(projs) - 1; i >= 0; i-- {
		cur := vals
		next := make([]plan.Scalar, len(projs[i].Exprs))
		for k, e := range projs[i].Exprs {
			next[k] = plan.Rewrite(e, func(x plan.Scalar) plan.Scalar {
				switch y := x.(type) {
				case *plan.ColRef:
					return cur[y.Index]
				case *plan.OuterRef:
					return &plan.ColRef{Index: y.Index, Typ: y.Typ, Name: y.Name}
				}
				return x
			})
		}
		vals = next
	}
	var conds []plan.Scalar
	for _, p := range preds {
		conds = append(conds, toJoinScope(p, nLeft))
	}
	if on != nil {
		conds = append(conds, plan.Rewrite(on, func(x plan.Scalar) plan.Scalar {
			if c, ok := x.(*plan.ColRef); ok && c.Index >= nLeft {
				return vals[c.Index-nLeft]
			}
			return x
		}))
	}
	j := &plan.Join{Kind: kind, Left: left, Right: matched, Cond: plan.MakeAnd(conds)}
	leftCols := left.Schema()
	exprs := plan.ColumnRefs(leftCols)
	cols := append([]plan.Column(nil), leftCols...)
	isMatched := &plan.ColRef{Index: nLeft + len(innerCols), Typ: types.TBool, Name: "?matched"}
	for i, c := range right.Schema() {
		v := vals[i]
		if kind == plan.LeftJoin {
			v = &plan.Case{Whens: []plan.When{{Cond: isMatched, Result: v}}, Else: &plan.Const{Typ: v.Type()}, Typ: v.Type()}
			c.Nullable = true
		}
		exprs = append(exprs, v)
		cols = append(cols, c)
	}
	return &plan.Project{Input: j, Exprs: exprs, Cols: cols}, true
}

// keepColumns projects a lateral join's output (left, skip, then right's
// columns, then any helper columns) onto left's and right's columns.
func keepColumns(j plan.Node, left, right plan.Node, kind plan.JoinKind, skip int) plan.Node {
	nLeft := len(left.Schema())
	rightCols := right.Schema()
	if skip == 0 && len(j.Schema()) == nLeft+len(rightCols) {
		return j
	}
	all := j.Schema()
	var exprs []plan.Scalar
	var cols []plan.Column
	for i := 0; i < nLeft; i++ {
		exprs = append(exprs, &plan.ColRef{Index: i, Typ: all[i].Type, Name: all[i].Name})
		cols = append(cols, all[i])
	}
	for i, c := range rightCols {
		k := nLeft + skip + i
		exprs = append(exprs, &plan.ColRef{Index: k, Typ: all[k].Type, Name: all[k].Name})
		c.Nullable = c.Nullable || kind == plan.LeftJoin
		cols = append(cols, c)
	}
	return &plan.Project{Input: j, Exprs: exprs, Cols: cols}
}

// lateralConstruct names what keeps a LATERAL subquery from being
// decorrelated: the first node on the way down holding the correlation.
func lateralConstruct(n plan.Node) string {
	for {
		if !plan.HasCorrelation(n) {
			break
		}
		switch x := n.(type) {
		case *plan.TopK:
			return "LATERAL subqueries with LIMIT/OFFSET"
		case *plan.Distinct:
			return "LATERAL subqueries with DISTINCT"
		case *plan.Window:
			return "LATERAL subqueries with window functions"
		case *plan.SetOp:
			return "LATERAL subqueries with set operations (UNION/INTERSECT/EXCEPT)"
		case *plan.Aggregate:
			return "LATERAL subqueries aggregating over a non-equality correlation"
		case *plan.Join:
			if scalarsCorrelated(x) {
				return "LATERAL subqueries correlated in a JOIN condition"
			}
		case *plan.Project:
			if scalarsCorrelated(x) {
				return "LATERAL subqueries whose SELECT list references an outer column"
			}
		case *plan.Filter:
			if hasCorrelatedSubquery(x.Pred) {
				return "LATERAL subqueries with correlated subqueries"
			}
		}
		ins := n.Inputs()
		next := -1
		for i, in := range ins {
			if plan.HasCorrelation(in) {
				next = i
				break
			}
		}
		if next < 0 {
			break
		}
		n = ins[next]
	}
	return "this form of LATERAL subquery"
}

func scalarsCorrelated(n plan.Node) bool {
	for _, s := range plan.Scalars(n) {
		if hasOuterRef(s) || hasCorrelatedSubquery(s) {
			return true
		}
	}
	return false
}

// lateralAggregate decorrelates Project/Filter* over an aggregate whose
// input is correlated by equalities (see LateralJoin).
func lateralAggregate(left, right plan.Node, chain []plan.Node, agg *plan.Aggregate, kind plan.JoinKind, on plan.Scalar) (plan.Node, string) {
	for _, n := range chain {
		if scalarsCorrelated(n) {
			return nil, lateralConstruct(right)
		}
	}
	for _, a := range agg.Aggs {
		for _, s := range a.Args {
			if hasOuterRef(s) || hasCorrelatedSubquery(s) {
				return nil, "LATERAL subqueries whose aggregate arguments reference an outer column"
			}
		}
		if a.Filter != nil && (hasOuterRef(a.Filter) || hasCorrelatedSubquery(a.Filter)) {
			return nil, "LATERAL subqueries whose aggregate arguments reference an outer column"
		}
	}
	keyed, ok := keyedInput(left, agg.Input)
	if !ok {
		if keyed.construct != "" {
			return nil, keyed.construct
		}
		return nil, "LATERAL subqueries aggregating over a non-equality correlation"
	}
	nLeft := len(left.Schema())
	nKeys, preCols, shift := keyed.nKeys, keyed.cols, keyed.shift
	grouped := &plan.Aggregate{Input: keyed.node}
	for i := 0; i < nKeys; i++ {
		grouped.GroupBy = append(grouped.GroupBy, i)
		grouped.Cols = append(grouped.Cols, preCols[i])
	}
	for _, g := range agg.GroupBy {
		grouped.GroupBy = append(grouped.GroupBy, g+nKeys)
	}
	for _, a := range agg.Aggs {
		c := a
		c.Args = make([]plan.Scalar, len(a.Args))
		for i, arg := range a.Args {
			c.Args[i] = shift(arg)
		}
		c.Filter = shift(a.Filter)
		grouped.Aggs = append(grouped.Aggs, c)
	}
	grouped.Cols = append(grouped.Cols, agg.Cols...)
	if len(agg.GroupBy) > 0 {
		// Grouped: one row per (key, group).
		return keyedJoin(left, right, chain, grouped, keyed, kind, on), ""
	}
	// Global: exactly one row per left row, so a left join whatever kind;
	// an unmatched row gets the aggregate of an empty set (count = 0,
	// others NULL).
	j := keyed.join(plan.LeftJoin, left, grouped, nil)
	vals := make([]plan.Scalar, len(agg.Cols))
	for i := range agg.Cols {
		var v plan.Scalar = &plan.ColRef{Index: nLeft + nKeys + i, Typ: agg.Cols[i].Type, Name: agg.Cols[i].Name}
		if agg.Aggs[i].Func == "count" {
			v = &plan.Coalesce{Args: []plan.Scalar{v, &plan.Const{Value: int64(0), Typ: types.TInt8}}, Typ: types.TInt8}
		}
		vals[i] = v
	}
	var having []plan.Scalar
	for i := len(chain) - 1; i >= 0; i-- {
		through := func(e plan.Scalar) plan.Scalar {
			cur := vals
			return plan.Rewrite(e, func(x plan.Scalar) plan.Scalar {
				if c, ok := x.(*plan.ColRef); ok {
					return cur[c.Index]
				}
				return x
			})
		}
		switch x := chain[i].(type) {
		case *plan.Filter:
			having = append(having, through(x.Pred))
		case *plan.Project:
			next := make([]plan.Scalar, len(x.Exprs))
			for k, e := range x.Exprs {
				next[k] = through(e)
			}
			vals = next
		}
	}
	var node plan.Node = j
	if kind == plan.LeftJoin && (len(having) > 0 || on != nil) {
		// LEFT JOIN LATERAL: the row whose aggregate row HAVING or ON
		// rejects keeps NULLs instead.
		conds := having
		if on != nil {
			conds = append(conds, plan.Rewrite(on, func(x plan.Scalar) plan.Scalar {
				if c, ok := x.(*plan.ColRef); ok && c.Index >= nLeft {
					return vals[c.Index-nLeft]
				}
				return x
			}))
		}
		keep := plan.MakeAnd(conds)
		for i, v := range vals {
			vals[i] = &plan.Case{Whens: []plan.When{{Cond: keep, Result: v}}, Else: &plan.Const{Typ: v.Type()}, Typ: v.Type()}
		}
		having, on = nil, nil
	}
	if len(having) > 0 {
		node = &plan.Filter{Input: node, Pred: plan.MakeAnd(having)}
	}
	leftCols := left.Schema()
	exprs := plan.ColumnRefs(leftCols)
	cols := append([]plan.Column(nil), leftCols...)
	for i, c := range right.Schema() {
		exprs = append(exprs, vals[i])
		cols = append(cols, c)
	}
	node = &plan.Project{Input: node, Exprs: exprs, Cols: cols}
	if on != nil {
		node = &plan.Filter{Input: node, Pred: on}
	}
	return node, ""
}

// keyed is a correlated input decorrelated into rows carrying their
// correlation keys first: node = keys ++ the input's columns.
type keyed struct {
	node      plan.Node
	nKeys     int
	cols      []plan.Column // node's columns
	outers    []plan.Scalar // the outer side of each key's equality
	construct string
	// domain is set when the keys are the outer row's columns domain
	// (keyedDomain): they match the left side's columns domain
	// IS NOT DISTINCT FROM (a NULL key is a key too).
	domain []int
}

// join joins left with right, whose first nKeys columns are the keys, on
// the keys and then extra (over left ++ right).
func (k keyed) join(kind plan.JoinKind, left, right plan.Node, extra plan.Scalar) plan.Node {
	nLeft := len(left.Schema())
	if k.domain == nil {
		conds := k.conds(nLeft)
		if extra != nil {
			conds = append(conds, extra)
		}
		return &plan.Join{Kind: kind, Left: left, Right: right, Cond: plan.MakeAnd(conds)}
	}
	if extra != nil {
		// NB: the null-safe keys make every key of the join null-safe;
		// hide extra's equalities from key extraction.
		extra = &plan.Case{Whens: []plan.When{{Cond: extra, Result: &plan.Const{Value: true, Typ: types.TBool}}}, Else: &plan.Const{Value: false, Typ: types.TBool}, Typ: types.TBool}
	}
	j := &plan.Join{Kind: kind, Left: left, Right: right, Cond: extra}
	for i, c := range k.domain {
		j.EquiKeys = append(j.EquiKeys, plan.EquiKey{Left: c, Right: i, NullSafe: true})
	}
	return j
}

func (k keyed) shift(s plan.Scalar) plan.Scalar {
	if s == nil {
		return nil
	}
	return plan.RemapColumns(s, func(c int) int { return c + k.nKeys })
}

// conds are the join conditions outer_i = key_i, with the keys at
// nLeft+i of the join row.
func (k keyed) conds(nLeft int) []plan.Scalar {
	var out []plan.Scalar
	for i, o := range k.outers {
		outer := plan.Rewrite(o, func(x plan.Scalar) plan.Scalar {
			if r, ok := x.(*plan.OuterRef); ok {
				return &plan.ColRef{Index: r.Index, Typ: r.Typ, Name: r.Name}
			}
			return x
		})
		out = append(out, &plan.Func{Name: "=", Op: true, Typ: types.TBool, Args: []plan.Scalar{
			outer, &plan.ColRef{Index: nLeft + i, Typ: k.cols[i].Type, Name: k.cols[i].Name}}})
	}
	return out
}

// keyedUnderChain is keyedInput for the input in of an operator under
// Project/Filter* chain, which must not be correlated themselves; refused
// names the construct that cannot be decorrelated ("" when it can), what
// being the operator ("with DISTINCT").
func keyedUnderChain(left, right plan.Node, chain []plan.Node, in plan.Node, what string) (k keyed, refused string) {
	for _, n := range chain {
		if scalarsCorrelated(n) {
			return keyed{}, lateralConstruct(right)
		}
	}
	k, ok := keyedInput(left, in)
	switch {
	case ok:
		return k, ""
	case k.construct != "":
		return k, k.construct
	}
	return k, "LATERAL subqueries " + what + " over a non-equality correlation"
}

// keyedInput decorrelates in, whose correlation must be WHERE conjuncts
// inner_expr = outer_expr: the rows of in with the inner expressions as
// key columns first (grouping or partitioning by them reproduces the
// per-outer-row evaluation).
func keyedInput(left, in plan.Node) (keyed, bool) {
	inner, preds, ok := pullUp(in, false)
	if !ok {
		if k, ok := keyedDomain(left, in); ok {
			return k, true
		}
		return keyed{construct: lateralConstruct(in)}, false
	}
	var k keyed
	var inners []plan.Scalar
	for _, p := range preds {
		f, ok := p.(*plan.Func)
		if !ok || f.Name != "=" || len(f.Args) != 2 {
			return keyed{}, false
		}
		a, b := f.Args[0], f.Args[1]
		if hasOuterRef(a) && !hasOuterRef(b) {
			a, b = b, a
		}
		if hasOuterRef(a) || !onlyOuterRefs(b) {
			return keyed{}, false
		}
		inners = append(inners, a)
		k.outers = append(k.outers, b)
	}
	k.nKeys = len(inners)
	var pre []plan.Scalar
	for i, e := range inners {
		pre = append(pre, e)
		k.cols = append(k.cols, plan.Column{Name: fmt.Sprintf("corr%d", i+1), Type: e.Type(), Nullable: true})
	}
	inCols := inner.Schema()
	for i := range in.Schema() {
		pre = append(pre, &plan.ColRef{Index: i, Typ: inCols[i].Type, Name: inCols[i].Name})
		k.cols = append(k.cols, inCols[i])
	}
	k.node = &plan.Project{Input: inner, Exprs: pre, Cols: k.cols}
	return k, true
}

// keyedJoin rebuilds chain (Projects and Filters, top first, over the
// columns of base without its keys) over base with the keys passed
// through first, and joins left with it on the keys (and on).
func keyedJoin(left, right plan.Node, chain []plan.Node, base plan.Node, k keyed, kind plan.JoinKind, on plan.Scalar) plan.Node {
	nLeft := len(left.Schema())
	cur := base
	for i := len(chain) - 1; i >= 0; i-- {
		switch x := chain[i].(type) {
		case *plan.Filter:
			cur = &plan.Filter{Input: cur, Pred: k.shift(x.Pred)}
		case *plan.Project:
			exprs := plan.ColumnRefs(k.cols[:k.nKeys])
			cols := append([]plan.Column(nil), k.cols[:k.nKeys]...)
			for _, e := range x.Exprs {
				exprs = append(exprs, k.shift(e))
			}
			cur = &plan.Project{Input: cur, Exprs: exprs, Cols: append(cols, x.Cols...)}
		}
	}
	if on != nil {
		on = plan.RemapColumns(on, func(c int) int {
			if c >= nLeft {
				return c + k.nKeys
			}
			return c
		})
	}
	return keepColumns(k.join(kind, left, cur, on), left, right, kind, k.nKeys)
}

// lateralTopK decorrelates Project/Filter* over ORDER BY ... LIMIT/OFFSET
// whose input is correlated by equalities: row_number() partitioned by the
// keys keeps each key's rows OFFSET+1 .. OFFSET+LIMIT.
func lateralTopK(left, right plan.Node, chain []plan.Node, top *plan.TopK, kind plan.JoinKind, on plan.Scalar) (plan.Node, string) {
	k, refused := keyedUnderChain(left, right, chain, top.Input, "with LIMIT/OFFSET")
	if refused != "" {
		return nil, refused
	}
	width := len(k.cols)
	win := &plan.Window{Input: k.node, Limit: -1,
		Funcs: []plan.WindowFunc{{Name: "row_number", Typ: types.TInt8}},
		Cols:  []plan.Column{{Name: "rn", Type: types.TInt8}}}
	for i := 0; i < k.nKeys; i++ {
		win.PartitionBy = append(win.PartitionBy, i)
	}
	for _, o := range top.Order {
		o.Col += k.nKeys
		win.Order = append(win.Order, o)
	}
	rn := &plan.ColRef{Index: width, Typ: types.TInt8, Name: "rn"}
	bound := func(op string, v int64) plan.Scalar {
		return &plan.Func{Name: op, Op: true, Typ: types.TBool, Args: []plan.Scalar{rn, &plan.Const{Value: v, Typ: types.TInt8}}}
	}
	var keep []plan.Scalar
	if top.Limit >= 0 {
		keep = append(keep, bound("<=", top.Offset+top.Limit))
	}
	if top.Offset > 0 {
		keep = append(keep, bound(">", top.Offset))
	}
	var cut plan.Node = win
	if len(keep) > 0 {
		cut = &plan.Filter{Input: win, Pred: plan.MakeAnd(keep)}
	}
	base := &plan.Project{Input: cut, Exprs: plan.ColumnRefs(k.cols), Cols: k.cols}
	return keyedJoin(left, right, chain, base, k, kind, on), ""
}

// lateralDistinct decorrelates Project/Filter* over DISTINCT [ON] whose
// input is correlated by equalities: distinct per key (the keys lead the
// DISTINCT ON list, or the whole row).
func lateralDistinct(left, right plan.Node, chain []plan.Node, d *plan.Distinct, kind plan.JoinKind, on plan.Scalar) (plan.Node, string) {
	k, refused := keyedUnderChain(left, right, chain, d.Input, "with DISTINCT")
	if refused != "" {
		return nil, refused
	}
	dist := &plan.Distinct{Input: k.node}
	if len(d.On) > 0 {
		for i := 0; i < k.nKeys; i++ {
			dist.On = append(dist.On, i)
		}
		for _, c := range d.On {
			dist.On = append(dist.On, c+k.nKeys)
		}
		for _, o := range d.Order {
			o.Col += k.nKeys
			dist.Order = append(dist.Order, o)
		}
	}
	return keyedJoin(left, right, chain, dist, k, kind, on), ""
}

// innerJoinCorrelationToFilter moves the conjuncts of inner joins' ON
// conditions that reference an outer row into a filter above the join
// (the same rows: an inner join's condition is a filter of its cross
// product), where decorrelation pulls them up.
func innerJoinCorrelationToFilter(n plan.Node) plan.Node {
	return plan.Transform(n, func(x plan.Node) plan.Node {
		j, ok := x.(*plan.Join)
		if !ok || j.Kind != plan.InnerJoin || j.Cond == nil || !hasOuterRef(j.Cond) {
			return x
		}
		var keep, lift []plan.Scalar
		for _, c := range plan.Conjuncts(j.Cond) {
			if hasOuterRef(c) && !plan.HasSubquery(c) {
				lift = append(lift, c)
			} else {
				keep = append(keep, c)
			}
		}
		if len(lift) == 0 {
			return x
		}
		k := *j
		k.Cond = nil
		if len(keep) > 0 {
			k.Cond = plan.MakeAnd(keep)
		}
		return &plan.Filter{Input: &k, Pred: plan.MakeAnd(lift)}
	})
}

// lateralWindow decorrelates Project/Filter* over window functions (one
// Window per OVER clause, stacked) whose input is correlated by
// equalities: the keys lead every PARTITION BY, so each outer row's rows
// are windowed on their own.
func lateralWindow(left, right plan.Node, chain []plan.Node, w *plan.Window, kind plan.JoinKind, on plan.Scalar) (plan.Node, string) {
	wins := []*plan.Window{w}
	for {
		inner, ok := wins[len(wins)-1].Input.(*plan.Window)
		if !ok || scalarsCorrelated(inner) {
			break
		}
		wins = append(wins, inner)
	}
	k, refused := keyedUnderChain(left, right, chain, wins[len(wins)-1].Input, "with window functions")
	if refused != "" {
		return nil, refused
	}
	var cur plan.Node = k.node
	for i := len(wins) - 1; i >= 0; i-- {
		w := wins[i]
		win := &plan.Window{Input: cur, Cols: w.Cols, Limit: w.Limit}
		for i := 0; i < k.nKeys; i++ {
			win.PartitionBy = append(win.PartitionBy, i)
		}
		for _, c := range w.PartitionBy {
			win.PartitionBy = append(win.PartitionBy, c+k.nKeys)
		}
		for _, o := range w.Order {
			o.Col += k.nKeys
			win.Order = append(win.Order, o)
		}
		for _, f := range w.Funcs {
			g := f
			g.Args = make([]plan.Scalar, len(f.Args))
			for i, a := range f.Args {
				g.Args[i] = k.shift(a)
			}
			g.Filter = k.shift(f.Filter)
			win.Funcs = append(win.Funcs, g)
		}
		cur = win
	}
	return keyedJoin(left, right, chain, cur, k, kind, on), ""
}

// keyedDomain decorrelates in when its correlation is in the arguments of
// functions in FROM (and in filters and SELECT lists above them):
// `LATERAL (SELECT x, count(*) FROM unnest(t.tags) AS x GROUP BY x)`. The
// keys are the outer columns it reads; each function runs over their
// distinct values (the domain, a ProjectSet over DISTINCT left columns)
// and the rows above carry the keys first. Joins above such a function
// keep it on their preserved side.
func keyedDomain(left, in plan.Node) (keyed, bool) {
	used := map[int]bool{}
	ok := true
	var walk func(n plan.Node)
	walk = func(n plan.Node) {
		for _, sc := range plan.Scalars(n) {
			if hasDeepOuterRef(sc) || hasCorrelatedSubquery(sc) {
				ok = false
			}
			plan.Walk(sc, func(x plan.Scalar) bool {
				if r, isRef := x.(*plan.OuterRef); isRef && r.Depth == 1 {
					used[r.Index] = true
				}
				return true
			})
		}
		for _, c := range n.Inputs() {
			walk(c)
		}
	}
	walk(in)
	if !ok || len(used) == 0 {
		return keyed{}, false
	}
	var k keyed
	k.domain = sortedKeys(used)
	k.nKeys = len(k.domain)
	leftCols := left.Schema()
	pos := map[int]int{}
	var dexprs []plan.Scalar
	for i, c := range k.domain {
		pos[c] = i
		dexprs = append(dexprs, &plan.ColRef{Index: c, Typ: leftCols[c].Type, Name: leftCols[c].Name})
		k.cols = append(k.cols, plan.Column{Name: fmt.Sprintf("corr%d", i+1), Type: leftCols[c].Type, Nullable: true})
	}
	keyCols := append([]plan.Column(nil), k.cols...)
	domain := &plan.Distinct{Input: &plan.Project{Input: left, Exprs: dexprs, Cols: keyCols}}
	// bind rewrites a scalar over n's row into one over keys ++ n's row.
	bind := func(s plan.Scalar) plan.Scalar {
		if s == nil {
			return nil
		}
		return plan.Rewrite(s, func(x plan.Scalar) plan.Scalar {
			switch y := x.(type) {
			case *plan.ColRef:
				return &plan.ColRef{Index: y.Index + k.nKeys, Typ: y.Typ, Name: y.Name, Qualifier: y.Qualifier}
			case *plan.OuterRef:
				return &plan.ColRef{Index: pos[y.Index], Typ: y.Typ, Name: y.Name}
			}
			return x
		})
	}
	var rewrite func(n plan.Node) (plan.Node, bool)
	rewrite = func(n plan.Node) (plan.Node, bool) {
		switch x := n.(type) {
		case *plan.FuncScan:
			f := *x
			f.Args = make([]plan.Scalar, len(x.Args))
			for i, a := range x.Args {
				// The arguments see only keys: outer references.
				f.Args[i] = plan.Rewrite(a, func(e plan.Scalar) plan.Scalar {
					if r, ok := e.(*plan.OuterRef); ok {
						return &plan.ColRef{Index: pos[r.Index], Typ: r.Typ, Name: r.Name}
					}
					return e
				})
			}
			return &plan.ProjectSet{Input: domain, Funcs: []*plan.FuncScan{&f}, Cols: append(append([]plan.Column(nil), keyCols...), f.Cols...)}, true
		case *plan.Filter:
			in, ok := rewrite(x.Input)
			if !ok {
				return nil, false
			}
			return &plan.Filter{Input: in, Pred: bind(x.Pred)}, true
		case *plan.Project:
			in, ok := rewrite(x.Input)
			if !ok {
				return nil, false
			}
			exprs := plan.ColumnRefs(keyCols)
			for _, e := range x.Exprs {
				exprs = append(exprs, bind(e))
			}
			return &plan.Project{Input: in, Exprs: exprs, Cols: append(append([]plan.Column(nil), keyCols...), x.Cols...)}, true
		case *plan.Join:
			l, r := plan.HasCorrelation(x.Left), plan.HasCorrelation(x.Right)
			if l == r || len(x.EquiKeys) > 0 {
				return nil, false
			}
			nl := len(x.Left.Schema())
			if l && x.Kind != plan.RightJoin && x.Kind != plan.FullJoin {
				in, ok := rewrite(x.Left)
				if !ok {
					return nil, false
				}
				j := *x
				j.Left, j.Cond = in, bind(x.Cond)
				return &j, true
			}
			if r && x.Kind == plan.InnerJoin {
				in, ok := rewrite(x.Right)
				if !ok {
					return nil, false
				}
				// The keys come after the left columns: move them first.
				cond := plan.Rewrite(x.Cond, func(e plan.Scalar) plan.Scalar {
					switch y := e.(type) {
					case *plan.ColRef:
						if y.Index >= nl {
							return &plan.ColRef{Index: y.Index + k.nKeys, Typ: y.Typ, Name: y.Name, Qualifier: y.Qualifier}
						}
					case *plan.OuterRef:
						return &plan.ColRef{Index: nl + pos[y.Index], Typ: y.Typ, Name: y.Name}
					}
					return e
				})
				j := &plan.Join{Kind: plan.InnerJoin, Left: x.Left, Right: in, Cond: cond}
				all := j.Schema()
				var exprs []plan.Scalar
				var cols []plan.Column
				order := []int{}
				for i := 0; i < k.nKeys; i++ {
					order = append(order, nl+i)
				}
				for i := 0; i < nl; i++ {
					order = append(order, i)
				}
				for i := nl + k.nKeys; i < len(all); i++ {
					order = append(order, i)
				}
				for _, c := range order {
					exprs = append(exprs, &plan.ColRef{Index: c, Typ: all[c].Type, Name: all[c].Name})
					cols = append(cols, all[c])
				}
				return &plan.Project{Input: j, Exprs: exprs, Cols: cols}, true
			}
			return nil, false
		}
		// Anything else (an uncorrelated input alone has no keys; joins
		// keep theirs as they are).
		return nil, false
	}
	node, ok := rewrite(in)
	if !ok {
		return keyed{}, false
	}
	k.cols = append(k.cols, in.Schema()...)
	k.node = node
	return k, true
}

func sortedKeys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	//lint:maprange sorted below
	for c := range m {
		out = append(out, c)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
