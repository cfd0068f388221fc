package opt

import (
	"fmt"

	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// Decorrelate rewrites subquery predicates and uncorrelated or
// correlated scalar subqueries into joins the incremental engine runs:
//
//   - WHERE [NOT] EXISTS (q)          → Semi / Anti join
//   - WHERE x IN (q)                  → Semi join on x = q.col
//   - WHERE x NOT IN (q), uncorrelated → null-aware Anti join (a NULL in
//     q, or a NULL x with q non-empty, removes the row, as in SQL)
//   - (SELECT agg ...) uncorrelated, global aggregate → cross join with its
//     single row
//   - (SELECT agg ... WHERE inner.k = outer.k) correlated, global
//     aggregate → Left join with the subquery grouped by its correlation
//     columns (count(*) becomes COALESCE(count, 0): the "count bug")
//   - WHERE p OR x IN (q) OR EXISTS (r) ... → a UNION ALL of disjoint
//     branches: the rows where p is true, then those where it is not and
//     the first subquery matches (a semi join), then those where neither
//     is and the next one matches (the earlier ones' complements are anti
//     joins), ...
//
// Subqueries nested inside subqueries are decorrelated first, so an IN
// subquery whose WHERE compares with a correlated aggregate of its own rows
// (TPC-H Q20) becomes a join before it is itself turned into a semi join.
//
// Correlation is pulled up through Filter, Project and (for semi/anti
// joins, which ignore duplicates) Distinct; anything else is left in
// place and rejected by CheckMaintainable (RS-2001).
func Decorrelate(n plan.Node) plan.Node {
	return plan.Transform(n, func(x plan.Node) plan.Node {
		x = decorrelateNested(x)
		switch y := x.(type) {
		case *plan.Filter:
			return decorrelateFilter(y)
		case *plan.Project:
			return decorrelateProject(y)
		}
		return x
	})
}

// decorrelateNested decorrelates the plans of the subqueries x's
// expressions hold.
func decorrelateNested(x plan.Node) plan.Node {
	has := false
	for _, s := range plan.Scalars(x) {
		if plan.HasSubquery(s) {
			has = true
			break
		}
	}
	if !has {
		return x
	}
	changed := false
	y := plan.MapScalars(x, func(s plan.Scalar) plan.Scalar {
		return plan.Rewrite(s, func(e plan.Scalar) plan.Scalar {
			sq, ok := e.(*plan.Subquery)
			if !ok {
				return e
			}
			p := Decorrelate(sq.Plan)
			if p == sq.Plan {
				return e
			}
			c := *sq
			c.Plan = p
			changed = true
			return &c
		})
	})
	if !changed {
		return x
	}
	return y
}

// decorrelateFilter handles subquery conjuncts of a WHERE clause.
func decorrelateFilter(f *plan.Filter) plan.Node {
	input := f.Input
	var rest []plan.Scalar
	changed := false
	for _, c := range subqueryConjuncts(f.Pred) {
		sq, negated := asSubquery(c)
		if sq != nil && (sq.Kind == plan.SubExists || sq.Kind == plan.SubIn) {
			if j, ok := subqueryJoin(input, sq, negated != sq.Negate); ok {
				input = j
				changed = true
				continue
			}
		}
		if j, ok := decorrelateOr(input, c); ok {
			input = j
			changed = true
			continue
		}
		// Scalar subqueries inside the conjunct.
		if newInput, rewritten, ok := liftScalarSubqueries(input, c); ok {
			input = newInput
			rest = append(rest, rewritten)
			changed = true
			continue
		}
		rest = append(rest, c)
	}
	if !changed {
		return f
	}
	width := len(f.Input.Schema())
	out := filterOver(input, rest)
	if len(out.Schema()) != width {
		out = &plan.Project{Input: out, Exprs: plan.ColumnRefs(out.Schema())[:width], Cols: f.Input.Schema()}
	}
	return out
}

// decorrelateProject lifts scalar subqueries out of a select list.
func decorrelateProject(p *plan.Project) plan.Node {
	input := p.Input
	exprs := make([]plan.Scalar, len(p.Exprs))
	changed := false
	for i, e := range p.Exprs {
		if newInput, rewritten, ok := liftScalarSubqueries(input, e); ok {
			input, exprs[i], changed = newInput, rewritten, true
			continue
		}
		exprs[i] = e
	}
	if !changed {
		return p
	}
	return &plan.Project{Input: input, Exprs: exprs, Cols: p.Cols}
}

// subqueryConjuncts is plan.Conjuncts(pred) with NOT pushed down (De
// Morgan's laws hold in SQL's three-valued logic) through the conjuncts
// holding subqueries, so `NOT (x IN (q) OR p)` is `NOT x IN (q) AND NOT
// p` and `NOT (EXISTS (q) AND p)` is `NOT EXISTS (q) OR NOT p`.
func subqueryConjuncts(pred plan.Scalar) []plan.Scalar {
	var out []plan.Scalar
	for _, c := range plan.Conjuncts(pred) {
		if !plan.HasSubquery(c) {
			out = append(out, c)
			continue
		}
		c = pushNot(c, false)
		if b, ok := c.(*plan.BoolOp); ok && b.Op == plan.And {
			out = append(out, subqueryConjuncts(c)...)
			continue
		}
		out = append(out, c)
	}
	return out
}

// pushNot returns s (negated when neg) with NOT moved below AND and OR.
func pushNot(s plan.Scalar, neg bool) plan.Scalar {
	b, ok := s.(*plan.BoolOp)
	if !ok {
		if neg {
			return &plan.BoolOp{Op: plan.Not, Args: []plan.Scalar{s}}
		}
		return s
	}
	switch b.Op {
	case plan.Not:
		return pushNot(b.Args[0], !neg)
	case plan.And, plan.Or:
		op := b.Op
		if neg && op == plan.And {
			op = plan.Or
		} else if neg {
			op = plan.And
		}
		args := make([]plan.Scalar, len(b.Args))
		for i, a := range b.Args {
			args[i] = pushNot(a, neg)
		}
		return &plan.BoolOp{Op: op, Args: args}
	}
	if neg {
		return &plan.BoolOp{Op: plan.Not, Args: []plan.Scalar{s}}
	}
	return s
}

// asSubquery recognises `sub` and `NOT sub`.
func asSubquery(c plan.Scalar) (*plan.Subquery, bool) {
	if sq, ok := c.(*plan.Subquery); ok {
		return sq, false
	}
	if b, ok := c.(*plan.BoolOp); ok && b.Op == plan.Not {
		if sq, ok := b.Args[0].(*plan.Subquery); ok {
			return sq, true
		}
	}
	return nil, false
}

// decorrelateOr rewrites a disjunction some of whose disjuncts are
// [NOT] EXISTS or [NOT] IN subqueries (the others free of subqueries) into
// a UNION ALL of disjoint branches of input: the rows where the plain
// disjuncts are true, then, for each subquery in turn, the rows where no
// earlier disjunct is true and the subquery is (a semi or anti join over
// the earlier subqueries' complements). Each row of input lands in at
// most one branch, so duplicates are kept as the WHERE clause keeps them.
// A NOT IN (a null-aware anti join: no plain complement) must be the
// only one and comes last.
func decorrelateOr(input plan.Node, c plan.Scalar) (plan.Node, bool) {
	b, ok := c.(*plan.BoolOp)
	if !ok || b.Op != plan.Or || !plan.HasSubquery(c) {
		return nil, false
	}
	var disjuncts []plan.Scalar
	var flatten func(s plan.Scalar)
	flatten = func(s plan.Scalar) {
		if o, ok := s.(*plan.BoolOp); ok && o.Op == plan.Or {
			for _, a := range o.Args {
				flatten(a)
			}
			return
		}
		disjuncts = append(disjuncts, s)
	}
	flatten(c)
	type subPred struct {
		sq      *plan.Subquery
		negated bool
	}
	var plain []plan.Scalar
	var subs, last []subPred
	for _, d := range disjuncts {
		if !plan.HasSubquery(d) {
			plain = append(plain, d)
			continue
		}
		sq, negated := asSubquery(d)
		if sq == nil || (sq.Kind != plan.SubExists && sq.Kind != plan.SubIn) {
			return nil, false
		}
		sp := subPred{sq: sq, negated: negated != sq.Negate}
		if sp.negated && sq.Kind == plan.SubIn {
			last = append(last, sp)
		} else {
			subs = append(subs, sp)
		}
	}
	if len(last) > 1 {
		return nil, false
	}
	subs = append(subs, last...)
	var branches []plan.Node
	rest := input // the rows where no earlier disjunct is true
	if len(plain) > 0 {
		var p plan.Scalar = plain[0]
		if len(plain) > 1 {
			p = &plan.BoolOp{Op: plan.Or, Args: plain}
		}
		isTrue := &plan.Coalesce{Args: []plan.Scalar{p, &plan.Const{Value: false, Typ: types.TBool}}, Typ: types.TBool}
		branches = append(branches, &plan.Filter{Input: rest, Pred: isTrue})
		rest = &plan.Filter{Input: rest, Pred: &plan.BoolOp{Op: plan.Not, Args: []plan.Scalar{isTrue}}}
	}
	for i, sp := range subs {
		j, ok := subqueryJoin(rest, sp.sq, sp.negated)
		if !ok {
			return nil, false
		}
		branches = append(branches, j)
		if i < len(subs)-1 {
			// The rows where this subquery is not true: an IN without a
			// match (a NULL comparison is not true either), an EXISTS
			// without a row, a NOT EXISTS with one.
			kind := plan.AntiJoin
			if sp.negated {
				kind = plan.SemiJoin
			}
			if rest, ok = subqueryJoinKind(rest, sp.sq, kind); !ok {
				return nil, false
			}
		}
	}
	out := branches[0]
	cols := input.Schema()
	for _, br := range branches[1:] {
		out = &plan.SetOp{Kind: plan.Union, All: true, Left: out, Right: br, Cols: cols}
	}
	return out, true
}

// subqueryJoin turns EXISTS / IN into a semi or anti join of input.
func subqueryJoin(input plan.Node, sq *plan.Subquery, negated bool) (plan.Node, bool) {
	kind := plan.SemiJoin
	if negated {
		kind = plan.AntiJoin
	}
	j, ok := subqueryJoinKind(input, sq, kind)
	if !ok {
		return nil, false
	}
	if negated && sq.Kind == plan.SubIn {
		if plan.HasCorrelation(sq.Plan) {
			// Correlated NOT IN needs per-outer-row NULL accounting the
			// null-aware anti join does not do: leave it (RS-2001).
			return nil, false
		}
		j.(*plan.Join).NullAware = true
	}
	return j, true
}

// subqueryJoinKind joins input with the rows of EXISTS / IN subquery sq
// (on the IN comparison and the correlation), as a semi or anti join.
func subqueryJoinKind(input plan.Node, sq *plan.Subquery, kind plan.JoinKind) (plan.Node, bool) {
	if sq.Test != nil && (plan.HasSubquery(sq.Test) || hasOuterRef(sq.Test)) {
		return nil, false
	}
	setContext := true // semi/anti joins ignore duplicates
	inner, preds, ok := pullUp(sq.Plan, setContext)
	if !ok {
		return nil, false
	}
	nLeft := len(input.Schema())
	var conds []plan.Scalar
	if sq.Kind == plan.SubIn {
		// The IN column is the subquery's first output column.
		col := inner.Schema()[0]
		conds = append(conds, &plan.Func{Name: "=", Op: true, Typ: types.TBool, Args: []plan.Scalar{
			sq.Test, &plan.ColRef{Index: nLeft, Typ: col.Type, Name: col.Name}}})
	}
	for _, p := range preds {
		conds = append(conds, toJoinScope(p, nLeft))
	}
	return &plan.Join{Kind: kind, Left: input, Right: inner, Cond: plan.MakeAnd(conds)}, true
}

// toJoinScope rewrites a pulled-up predicate (OuterRef depth 1 = the outer
// row, ColRef = the subquery row) into the join's left++right row.
func toJoinScope(p plan.Scalar, nLeft int) plan.Scalar {
	return plan.Rewrite(p, func(x plan.Scalar) plan.Scalar {
		switch y := x.(type) {
		case *plan.OuterRef:
			return &plan.ColRef{Index: y.Index, Typ: y.Typ, Name: y.Name}
		case *plan.ColRef:
			return &plan.ColRef{Index: y.Index + nLeft, Typ: y.Typ, Name: y.Name, Qualifier: y.Qualifier}
		}
		return x
	})
}

// pullUp removes correlated predicates (those with depth-1 OuterRefs) from
// a subquery plan, returning the decorrelated plan (whose output starts
// with the original output columns, possibly followed by columns the
// predicates need) and the predicates over that output.
func pullUp(n plan.Node, setContext bool) (plan.Node, []plan.Scalar, bool) {
	if !plan.HasCorrelation(n) {
		return n, nil, true
	}
	switch x := n.(type) {
	case *plan.Filter:
		in, preds, ok := pullUp(x.Input, setContext)
		if !ok {
			return nil, nil, false
		}
		var local []plan.Scalar
		for _, c := range plan.Conjuncts(x.Pred) {
			if plan.HasSubquery(c) {
				if hasCorrelatedSubquery(c) {
					return nil, nil, false
				}
				local = append(local, c)
				continue
			}
			if hasDeepOuterRef(c) {
				return nil, nil, false
			}
			if hasOuterRef(c) {
				preds = append(preds, c)
			} else {
				local = append(local, c)
			}
		}
		return filterOver(in, local), preds, true
	case *plan.Project:
		for _, e := range x.Exprs {
			if hasOuterRef(e) || hasCorrelatedSubquery(e) {
				return nil, nil, false
			}
		}
		in, preds, ok := pullUp(x.Input, setContext)
		if !ok {
			return nil, nil, false
		}
		if len(preds) == 0 {
			return &plan.Project{Input: in, Exprs: x.Exprs, Cols: x.Cols}, nil, true
		}
		// Pass through the input columns the predicates need.
		exprs := append([]plan.Scalar(nil), x.Exprs...)
		cols := append([]plan.Column(nil), x.Cols...)
		inCols := in.Schema()
		pos := map[int]int{}
		for _, p := range preds {
			for _, c := range sortedColumns(p) {
				if _, done := pos[c]; !done {
					pos[c] = len(exprs)
					exprs = append(exprs, &plan.ColRef{Index: c, Typ: inCols[c].Type, Name: inCols[c].Name})
					cols = append(cols, plan.Column{Name: inCols[c].Name, Type: inCols[c].Type, Nullable: inCols[c].Nullable})
				}
			}
		}
		out := make([]plan.Scalar, len(preds))
		for i, p := range preds {
			out[i] = plan.RemapColumns(p, func(c int) int { return pos[c] })
		}
		return &plan.Project{Input: in, Exprs: exprs, Cols: cols}, out, true
	case *plan.Distinct:
		if setContext && len(x.On) == 0 {
			return pullUp(x.Input, setContext)
		}
	}
	return nil, nil, false
}

func sortedColumns(s plan.Scalar) []int {
	used := plan.ColumnsUsed(s)
	out := make([]int, 0, len(used))
	//lint:maprange sorted below
	for c := range used {
		out = append(out, c)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func hasDeepOuterRef(s plan.Scalar) bool {
	found := false
	plan.Walk(s, func(x plan.Scalar) bool {
		if o, ok := x.(*plan.OuterRef); ok && o.Depth > 1 {
			found = true
		}
		return !found
	})
	return found
}

func hasCorrelatedSubquery(s plan.Scalar) bool {
	found := false
	plan.Walk(s, func(x plan.Scalar) bool {
		if sq, ok := x.(*plan.Subquery); ok && plan.HasCorrelation(sq.Plan) {
			found = true
		}
		return !found
	})
	return found
}

// liftScalarSubqueries replaces scalar subqueries in e by columns of joins
// added to input. ok is false when e has none or one cannot be lifted.
func liftScalarSubqueries(input plan.Node, e plan.Scalar) (plan.Node, plan.Scalar, bool) {
	found := false
	failed := false
	out := plan.Rewrite(e, func(x plan.Scalar) plan.Scalar {
		sq, ok := x.(*plan.Subquery)
		if !ok || sq.Kind != plan.SubScalar || failed {
			return x
		}
		newInput, col, ok := scalarJoin(input, sq)
		if !ok {
			failed = true
			return x
		}
		input = newInput
		found = true
		return col
	})
	if !found || failed {
		return nil, nil, false
	}
	return input, out, true
}

// scalarJoin joins input with a scalar subquery that is a global aggregate
// (exactly one row per outer row, so no cardinality check is needed) and
// returns the column holding its value.
func scalarJoin(input plan.Node, sq *plan.Subquery) (plan.Node, plan.Scalar, bool) {
	nLeft := len(input.Schema())
	// Accept Project* over a global Aggregate.
	var projs []*plan.Project
	n := sq.Plan
	for {
		p, ok := n.(*plan.Project)
		if !ok {
			break
		}
		projs = append(projs, p)
		n = p.Input
	}
	agg, ok := n.(*plan.Aggregate)
	if !ok || len(agg.GroupBy) != 0 {
		return nil, nil, false
	}
	for _, p := range projs {
		for _, e := range p.Exprs {
			if hasOuterRef(e) || plan.HasSubquery(e) {
				return nil, nil, false
			}
		}
	}
	if !plan.HasCorrelation(agg) {
		// Exactly one row: an inner cross join keeps every outer row.
		j := &plan.Join{Kind: plan.InnerJoin, Left: input, Right: sq.Plan}
		col := sq.Plan.Schema()[0]
		return j, &plan.ColRef{Index: nLeft, Typ: col.Type, Name: col.Name}, true
	}
	// Correlated: group the aggregate's input by the correlation columns.
	inner, preds, ok := pullUp(agg.Input, false)
	if !ok || len(preds) == 0 {
		return nil, nil, false
	}
	// Every predicate must be inner_expr = outer_expr so grouping by the
	// inner side reproduces per-outer-row aggregation.
	type pair struct{ inner, outer plan.Scalar }
	var pairs []pair
	for _, p := range preds {
		f, ok := p.(*plan.Func)
		if !ok || f.Name != "=" || len(f.Args) != 2 {
			return nil, nil, false
		}
		a, b := f.Args[0], f.Args[1]
		if hasOuterRef(a) && !hasOuterRef(b) {
			a, b = b, a
		}
		if hasOuterRef(a) || !onlyOuterRefs(b) {
			return nil, nil, false
		}
		pairs = append(pairs, pair{inner: a, outer: b})
	}
	// Grouped aggregate: Project(inner → keys ++ original agg input cols).
	inCols := inner.Schema()
	var pre []plan.Scalar
	var preCols []plan.Column
	for i, pr := range pairs {
		pre = append(pre, pr.inner)
		preCols = append(preCols, plan.Column{Name: fmt.Sprintf("corr%d", i+1), Type: pr.inner.Type(), Nullable: true})
	}
	nKeys := len(pairs)
	for i, c := range inCols {
		if i >= len(agg.Input.Schema()) {
			break // columns pulled up for the predicates only
		}
		pre = append(pre, &plan.ColRef{Index: i, Typ: c.Type, Name: c.Name})
		preCols = append(preCols, c)
	}
	grouped := &plan.Aggregate{Input: &plan.Project{Input: inner, Exprs: pre, Cols: preCols}}
	for i := 0; i < nKeys; i++ {
		grouped.GroupBy = append(grouped.GroupBy, i)
		grouped.Cols = append(grouped.Cols, preCols[i])
	}
	for _, a := range agg.Aggs {
		c := a
		c.Args = make([]plan.Scalar, len(a.Args))
		for i, arg := range a.Args {
			c.Args[i] = plan.RemapColumns(arg, func(k int) int { return k + nKeys })
		}
		if a.Filter != nil {
			c.Filter = plan.RemapColumns(a.Filter, func(k int) int { return k + nKeys })
		}
		grouped.Aggs = append(grouped.Aggs, c)
	}
	grouped.Cols = append(grouped.Cols, agg.Cols...)
	// Left join input with the grouped aggregate on the correlation keys.
	var conds []plan.Scalar
	for i, pr := range pairs {
		outer := plan.Rewrite(pr.outer, func(x plan.Scalar) plan.Scalar {
			if o, ok := x.(*plan.OuterRef); ok {
				return &plan.ColRef{Index: o.Index, Typ: o.Typ, Name: o.Name}
			}
			return x
		})
		conds = append(conds, &plan.Func{Name: "=", Op: true, Typ: types.TBool, Args: []plan.Scalar{
			outer, &plan.ColRef{Index: nLeft + i, Typ: preCols[i].Type, Name: preCols[i].Name}}})
	}
	j := &plan.Join{Kind: plan.LeftJoin, Left: input, Right: grouped, Cond: plan.MakeAnd(conds)}
	// The aggregate values as seen through the subquery's projections,
	// with the count bug fixed: an outer row with no group gets the
	// aggregate of an empty set (count = 0, others NULL).
	aggVals := make([]plan.Scalar, len(agg.Cols))
	for i := range agg.Cols {
		var v plan.Scalar = &plan.ColRef{Index: nLeft + nKeys + i, Typ: agg.Cols[i].Type, Name: agg.Cols[i].Name}
		if agg.Aggs[i].Func == "count" {
			v = &plan.Coalesce{Args: []plan.Scalar{v, &plan.Const{Value: int64(0), Typ: types.TInt8}}, Typ: types.TInt8}
		}
		aggVals[i] = v
	}
	var val plan.Scalar = aggVals[0]
	vals := aggVals
	for i := len(projs) - 1; i >= 0; i-- {
		p := projs[i]
		next := make([]plan.Scalar, len(p.Exprs))
		for k, e := range p.Exprs {
			next[k] = plan.Rewrite(e, func(x plan.Scalar) plan.Scalar {
				if c, ok := x.(*plan.ColRef); ok {
					return vals[c.Index]
				}
				return x
			})
		}
		vals = next
	}
	val = vals[0]
	return j, val, true
}

func onlyOuterRefs(s plan.Scalar) bool {
	ok := true
	plan.Walk(s, func(x plan.Scalar) bool {
		switch y := x.(type) {
		case *plan.ColRef, *plan.Subquery:
			ok = false
		case *plan.OuterRef:
			if y.Depth != 1 {
				ok = false
			}
		}
		return ok
	})
	return ok
}
