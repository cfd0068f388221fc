package opt

import (
	"github.com/rockstream/rockstream/ivm/sql/plan"
)

// WindowTopK marks a Window whose ROW_NUMBER() output is only read under a
// filter rn ≤ k (also rn < k, rn = k, k ≥ rn): the Window gets Limit k, so
// each partition is cut to its first k rows (a TopK with the same order)
// before the window functions run. The filter stays; the rule applies only
// when every function of that Window is row_number, rank, dense_rank or
// lag, whose values on the first k rows depend on those rows alone.
func WindowTopK(n plan.Node) plan.Node {
	return plan.Transform(n, func(x plan.Node) plan.Node {
		f, ok := x.(*plan.Filter)
		if !ok {
			return x
		}
		for _, c := range plan.Conjuncts(f.Pred) {
			col, k, ok := rowNumberBound(c)
			if !ok {
				continue
			}
			if in, ok := limitWindow(f.Input, col, k); ok {
				return &plan.Filter{Input: in, Pred: f.Pred}
			}
		}
		return x
	})
}

// rowNumberBound matches col ≤ k, col < k, col = k and the mirrored forms,
// returning the largest row number the conjunct admits.
func rowNumberBound(s plan.Scalar) (int, int64, bool) {
	fn, ok := s.(*plan.Func)
	if !ok || !fn.Op || len(fn.Args) != 2 {
		return 0, 0, false
	}
	op := fn.Name
	l, r := fn.Args[0], fn.Args[1]
	if _, ok := column(l); !ok {
		l, r = r, l
		switch op {
		case ">=":
			op = "<="
		case ">":
			op = "<"
		}
	}
	col, ok := column(l)
	if !ok {
		return 0, 0, false
	}
	k, ok := intConst(r)
	if !ok {
		return 0, 0, false
	}
	switch op {
	case "<=", "=":
		return col, max(k, 0), true
	case "<":
		return col, max(k-1, 0), true
	}
	return 0, 0, false
}

func column(s plan.Scalar) (int, bool) {
	if c, ok := s.(*plan.Cast); ok {
		s = c.Arg
	}
	c, ok := s.(*plan.ColRef)
	if !ok {
		return 0, false
	}
	return c.Index, true
}

func intConst(s plan.Scalar) (int64, bool) {
	if c, ok := s.(*plan.Cast); ok {
		s = c.Arg
	}
	c, ok := s.(*plan.Const)
	if !ok {
		return 0, false
	}
	v, ok := c.Value.(int64)
	return v, ok
}

// limitWindow follows column col of n down through Projects, Filters and
// Exchanges to the Window computing it and sets that Window's Limit.
func limitWindow(n plan.Node, col int, k int64) (plan.Node, bool) {
	switch x := n.(type) {
	case *plan.Project:
		c, ok := x.Exprs[col].(*plan.ColRef)
		if !ok {
			return n, false
		}
		in, ok := limitWindow(x.Input, c.Index, k)
		if !ok {
			return n, false
		}
		return x.WithInputs([]plan.Node{in}), true
	case *plan.Filter, *plan.Exchange:
		in, ok := limitWindow(x.Inputs()[0], col, k)
		if !ok {
			return n, false
		}
		return x.WithInputs([]plan.Node{in}), true
	case *plan.Window:
		base := len(x.Input.Schema())
		if col < base || x.Funcs[col-base].Name != "row_number" {
			return n, false
		}
		for _, f := range x.Funcs {
			switch f.Name {
			case "row_number", "rank", "dense_rank", "lag":
			default:
				return n, false
			}
		}
		w := *x
		if w.Limit < 0 || k < w.Limit {
			w.Limit = k
		}
		return &w, true
	}
	return n, false
}
