package opt

import (
	"github.com/rockstream/rockstream/ivm/sql/plan"
)

// PruneColumns drops columns no ancestor reads: unused Project outputs go,
// and a Project keeping only the needed columns is placed over scans that
// have unused columns, so joins and aggregates carry (and keep in state)
// only what the query uses. The plan's output schema is unchanged.
func PruneColumns(n plan.Node) plan.Node {
	out, _ := prune(n, allRequired(len(n.Schema())))
	return out
}

func allRequired(n int) []bool {
	r := make([]bool, n)
	for i := range r {
		r[i] = true
	}
	return r
}

func identityMap(n int) []int {
	m := make([]int, n)
	for i := range m {
		m[i] = i
	}
	return m
}

func markUsed(req []bool, s plan.Scalar, offset int) {
	if s == nil {
		return
	}
	//lint:maprange marking a set; order does not matter
	for c := range plan.ColumnsUsed(s) {
		if c-offset >= 0 && c-offset < len(req) {
			req[c-offset] = true
		}
	}
}

func remap(s plan.Scalar, m []int) plan.Scalar {
	if s == nil {
		return nil
	}
	return plan.RemapColumns(s, func(i int) int { return m[i] })
}

// prune returns n restricted to (at least) the required columns and the
// mapping from n's old column indexes to new ones (-1 = dropped).
func prune(n plan.Node, req []bool) (plan.Node, []int) {
	if plan.NodeHasCorrelatedSubquery(n) {
		// OuterRefs inside its subqueries index its input row: keep the
		// input's columns where they are.
		ins := n.Inputs()
		out := make([]plan.Node, len(ins))
		for i, in := range ins {
			out[i], _ = prune(in, allRequired(len(in.Schema())))
		}
		if len(ins) > 0 {
			n = n.WithInputs(out)
		}
		return n, identityMap(len(n.Schema()))
	}
	switch x := n.(type) {
	case *plan.Project:
		need := make([]bool, len(x.Input.Schema()))
		var keep []int
		for i, e := range x.Exprs {
			if req[i] || plan.IsVolatile(e) {
				keep = append(keep, i)
				markUsed(need, e, 0)
			}
		}
		in, m := prune(x.Input, need)
		exprs := make([]plan.Scalar, len(keep))
		cols := make([]plan.Column, len(keep))
		out := make([]int, len(x.Exprs))
		for i := range out {
			out[i] = -1
		}
		for k, i := range keep {
			exprs[k] = remap(x.Exprs[i], m)
			cols[k] = x.Cols[i]
			out[i] = k
		}
		return &plan.Project{Input: in, Exprs: exprs, Cols: cols}, out
	case *plan.Filter:
		need := append([]bool(nil), req...)
		markUsed(need, x.Pred, 0)
		in, m := prune(x.Input, need)
		return &plan.Filter{Input: in, Pred: remap(x.Pred, m)}, m
	case *plan.Join:
		nLeft := len(x.Left.Schema())
		nRight := len(x.Right.Schema())
		needL := make([]bool, nLeft)
		needR := make([]bool, nRight)
		for i, r := range req {
			if !r {
				continue
			}
			if i < nLeft {
				needL[i] = true
			} else {
				needR[i-nLeft] = true
			}
		}
		for _, k := range x.EquiKeys {
			needL[k.Left] = true
			needR[k.Right] = true
		}
		markUsed(needL, x.Cond, 0)
		markUsed(needR, x.Cond, nLeft)
		l, ml := prune(x.Left, needL)
		r, mr := prune(x.Right, needR)
		newNLeft := len(l.Schema())
		m := make([]int, nLeft+nRight)
		for i := 0; i < nLeft; i++ {
			m[i] = ml[i]
		}
		for i := 0; i < nRight; i++ {
			if mr[i] < 0 {
				m[nLeft+i] = -1
			} else {
				m[nLeft+i] = mr[i] + newNLeft
			}
		}
		j := *x
		j.Left, j.Right = l, r
		j.EquiKeys = make([]plan.EquiKey, len(x.EquiKeys))
		for i, k := range x.EquiKeys {
			j.EquiKeys[i] = plan.EquiKey{Left: ml[k.Left], Right: mr[k.Right], NullSafe: k.NullSafe}
		}
		j.Cond = remap(x.Cond, m)
		if x.Kind == plan.SemiJoin || x.Kind == plan.AntiJoin {
			return &j, ml
		}
		return &j, m
	case *plan.Aggregate:
		need := make([]bool, len(x.Input.Schema()))
		for _, g := range x.GroupBy {
			need[g] = true
		}
		for _, a := range x.Aggs {
			for _, arg := range a.Args {
				markUsed(need, arg, 0)
			}
			markUsed(need, a.Filter, 0)
		}
		in, m := prune(x.Input, need)
		a := *x
		a.Input = in
		a.GroupBy = make([]int, len(x.GroupBy))
		for i, g := range x.GroupBy {
			a.GroupBy[i] = m[g]
		}
		a.Aggs = make([]plan.AggCall, len(x.Aggs))
		for i, c := range x.Aggs {
			args := make([]plan.Scalar, len(c.Args))
			for k, arg := range c.Args {
				args[k] = remap(arg, m)
			}
			c.Args = args
			c.Filter = remap(c.Filter, m)
			a.Aggs[i] = c
		}
		return &a, identityMap(len(x.Cols))
	case *plan.Session:
		// A row's session depends on its time and key only: other input
		// columns may go (rows that become equal add up as weights).
		nIn := len(x.Input.Schema())
		need := append([]bool(nil), req[:nIn]...)
		need[x.Time] = true
		for _, k := range x.Keys {
			need[k] = true
		}
		in, m := prune(x.Input, need)
		s := *x
		s.Input = in
		s.Time = m[x.Time]
		s.Keys = make([]int, len(x.Keys))
		for i, k := range x.Keys {
			s.Keys[i] = m[k]
		}
		nNew := len(in.Schema())
		out := append(append([]int(nil), m...), nNew, nNew+1)
		return &s, out
	case *plan.Window:
		// The functions read their partition, order and argument columns;
		// other input columns pass through and may go. Rows that become
		// equal add up as weights, which the window numbers as as many
		// rows (they differ only in columns nothing reads).
		nIn := len(x.Input.Schema())
		need := append([]bool(nil), req[:nIn]...)
		for _, p := range x.PartitionBy {
			need[p] = true
		}
		for _, k := range x.Order {
			need[k.Col] = true
		}
		for _, f := range x.Funcs {
			for _, a := range f.Args {
				markUsed(need, a, 0)
			}
			markUsed(need, f.Filter, 0)
		}
		in, m := prune(x.Input, need)
		w := *x
		w.Input = in
		w.PartitionBy = make([]int, len(x.PartitionBy))
		for i, p := range x.PartitionBy {
			w.PartitionBy[i] = m[p]
		}
		w.Order = make([]plan.SortKey, len(x.Order))
		for i, k := range x.Order {
			k.Col = m[k.Col]
			w.Order[i] = k
		}
		w.Funcs = make([]plan.WindowFunc, len(x.Funcs))
		for i, f := range x.Funcs {
			args := make([]plan.Scalar, len(f.Args))
			for j, a := range f.Args {
				args[j] = remap(a, m)
			}
			f.Args = args
			f.Filter = remap(f.Filter, m)
			w.Funcs[i] = f
		}
		nNew := len(in.Schema())
		out := append([]int(nil), m...)
		for i := range x.Cols {
			out = append(out, nNew+i)
		}
		return &w, out
	case *plan.Scan:
		cols := x.Schema()
		all := true
		for _, r := range req {
			if !r {
				all = false
			}
		}
		if all {
			return x, identityMap(len(cols))
		}
		var exprs []plan.Scalar
		var outCols []plan.Column
		m := make([]int, len(cols))
		for i, c := range cols {
			m[i] = -1
			if req[i] {
				m[i] = len(exprs)
				exprs = append(exprs, &plan.ColRef{Index: i, Typ: c.Type, Name: c.Name})
				outCols = append(outCols, c)
			}
		}
		return &plan.Project{Input: x, Exprs: exprs, Cols: outCols}, m
	}
	// Distinct, SetOp, TopK, Values and unknown nodes need every column of
	// their inputs (their result depends on whole rows).
	ins := n.Inputs()
	if len(ins) > 0 {
		out := make([]plan.Node, len(ins))
		for i, in := range ins {
			p, m := prune(in, allRequired(len(in.Schema())))
			if !isIdentity(m) {
				// Cannot happen: all columns were required.
				p = in
			}
			out[i] = p
		}
		n = n.WithInputs(out)
	}
	return n, identityMap(len(n.Schema()))
}

func isIdentity(m []int) bool {
	for i, v := range m {
		if v != i {
			return false
		}
	}
	return true
}

// MergeProjects composes a Project over a Project into one and removes
// identity Projects (same columns, same order).
func MergeProjects(n plan.Node) plan.Node {
	return plan.Transform(n, func(x plan.Node) plan.Node {
		p, ok := x.(*plan.Project)
		if !ok {
			return x
		}
		if inner, ok := p.Input.(*plan.Project); ok && canInline(p, inner) && !plan.NodeHasCorrelatedSubquery(p) {
			exprs := make([]plan.Scalar, len(p.Exprs))
			for i, e := range p.Exprs {
				exprs[i] = plan.Rewrite(e, func(s plan.Scalar) plan.Scalar {
					if c, ok := s.(*plan.ColRef); ok {
						return inner.Exprs[c.Index]
					}
					return s
				})
			}
			p = &plan.Project{Input: inner.Input, Exprs: exprs, Cols: p.Cols}
		}
		in := p.Input.Schema()
		if len(p.Exprs) == len(in) {
			identity := true
			for i, e := range p.Exprs {
				if c, ok := e.(*plan.ColRef); !ok || c.Index != i {
					identity = false
					break
				}
			}
			if identity {
				if _, isScan := p.Input.(*plan.Scan); !isScan || sameNames(p.Cols, in) {
					return p.Input
				}
			}
		}
		return p
	})
}

func sameNames(a, b []plan.Column) bool {
	for i := range a {
		if a[i].Name != b[i].Name {
			return false
		}
	}
	return true
}

// canInline reports whether outer's references to inner's expressions may
// be replaced by the expressions themselves: no volatile or subquery
// expression gets duplicated or dropped.
func canInline(outer, inner *plan.Project) bool {
	uses := make([]int, len(inner.Exprs))
	for _, e := range outer.Exprs {
		plan.Walk(e, func(s plan.Scalar) bool {
			if c, ok := s.(*plan.ColRef); ok {
				uses[c.Index]++
			}
			return true
		})
	}
	for i, e := range inner.Exprs {
		if !movable(e) && uses[i] != 1 {
			return false
		}
		switch e.(type) {
		case *plan.ColRef, *plan.Const, *plan.Param:
		default:
			if uses[i] > 1 {
				return false
			}
		}
	}
	return true
}
