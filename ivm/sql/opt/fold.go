package opt

import (
	"math"

	"github.com/cockroachdb/apd/v3"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// FoldConstants simplifies expressions whose value is known at compile
// time: boolean identities (x AND true, x OR true, NOT false; conjuncts
// every arm of an OR has are taken out of it, see factorOr), IS NULL of
// constants, comparisons and integer arithmetic of constants (left alone
// when evaluating would raise an error, so the error still happens at run
// time, row by row), and removes filters that are always true. A filter
// that is always false or NULL becomes an empty Values.
func FoldConstants(n plan.Node) plan.Node {
	return plan.Transform(n, func(x plan.Node) plan.Node {
		x = plan.MapScalars(x, FoldScalar)
		switch y := x.(type) {
		case *plan.Filter:
			if c, ok := y.Pred.(*plan.Const); ok {
				if c.Value == true {
					return y.Input
				}
				return &plan.Values{Cols: y.Schema()}
			}
		case *plan.Join:
			if c, ok := y.Cond.(*plan.Const); ok && c.Value == true {
				j := *y
				j.Cond = nil
				return &j
			}
		}
		return x
	})
}

// FoldScalar folds one expression bottom-up.
func FoldScalar(s plan.Scalar) plan.Scalar {
	return plan.Rewrite(s, foldNode)
}

func isConst(s plan.Scalar) (*plan.Const, bool) {
	c, ok := s.(*plan.Const)
	return c, ok
}

func boolConst(v any) *plan.Const { return &plan.Const{Value: v, Typ: types.TBool} }

func foldNode(s plan.Scalar) plan.Scalar {
	switch x := s.(type) {
	case *plan.BoolOp:
		switch x.Op {
		case plan.Not:
			if c, ok := isConst(x.Args[0]); ok {
				if c.Value == nil {
					return boolConst(nil)
				}
				return boolConst(!c.Value.(bool))
			}
			if inner, ok := x.Args[0].(*plan.BoolOp); ok && inner.Op == plan.Not {
				return inner.Args[0]
			}
		case plan.And, plan.Or:
			// AND: false dominates, true is the identity; OR: the reverse.
			dominant, identity := false, true
			if x.Op == plan.Or {
				dominant, identity = true, false
			}
			var args []plan.Scalar
			sawNull := false
			for _, a := range x.Args {
				// Flatten nested ANDs/ORs of the same kind.
				var parts []plan.Scalar
				if inner, ok := a.(*plan.BoolOp); ok && inner.Op == x.Op {
					parts = inner.Args
				} else {
					parts = []plan.Scalar{a}
				}
				for _, p := range parts {
					if c, ok := isConst(p); ok {
						if c.Value == nil {
							sawNull = true
							continue
						}
						if c.Value.(bool) == dominant {
							return boolConst(dominant)
						}
						if c.Value.(bool) == identity {
							continue
						}
					}
					args = append(args, p)
				}
			}
			if sawNull {
				args = append(args, boolConst(nil))
			}
			switch len(args) {
			case 0:
				return boolConst(identity)
			case 1:
				if !sawNull {
					return args[0]
				}
				return boolConst(nil)
			}
			if x.Op == plan.Or && !sawNull {
				return factorOr(args)
			}
			return &plan.BoolOp{Op: x.Op, Args: args}
		}
	case *plan.IsNull:
		if c, ok := isConst(x.Arg); ok {
			return boolConst((c.Value == nil) != x.Negate)
		}
	case *plan.Func:
		if x.Volatile {
			return x
		}
		if v, ok := evalConstFunc(x); ok {
			return &plan.Const{Value: v, Typ: x.Typ}
		}
	case *plan.Coalesce:
		var args []plan.Scalar
		for _, a := range x.Args {
			if c, ok := isConst(a); ok {
				if c.Value == nil {
					continue
				}
				if len(args) == 0 {
					return c
				}
				args = append(args, a)
				break
			}
			args = append(args, a)
		}
		switch len(args) {
		case 0:
			return &plan.Const{Typ: x.Typ}
		case 1:
			return args[0]
		}
		return &plan.Coalesce{Args: args, Typ: x.Typ}
	case *plan.Case:
		var whens []plan.When
		for _, w := range x.Whens {
			if c, ok := isConst(w.Cond); ok {
				if c.Value == true {
					if len(whens) == 0 {
						return w.Result
					}
					return &plan.Case{Whens: whens, Else: w.Result, Typ: x.Typ}
				}
				continue // false or NULL: the arm never fires
			}
			whens = append(whens, w)
		}
		if len(whens) == 0 {
			return x.Else
		}
		return &plan.Case{Whens: whens, Else: x.Else, Typ: x.Typ}
	}
	return s
}

// factorOr takes the conjuncts every arm of an OR has out of it, as
// PostgreSQL does: (a AND b) OR (a AND c) is a AND (b OR c), and (a) OR
// (a AND c) is a (both hold in three-valued logic). A join condition
// repeated in every arm (TPC-H Q19) then joins the tables by key instead
// of filtering their cross product. Conjuncts holding a volatile function
// or a subquery stay where they are.
func factorOr(arms []plan.Scalar) plan.Scalar {
	or := &plan.BoolOp{Op: plan.Or, Args: arms}
	conj := make([][]plan.Scalar, len(arms))
	for i, a := range arms {
		conj[i] = plan.Conjuncts(a)
	}
	var common []plan.Scalar
	for _, c := range conj[0] {
		if !factorable(c) {
			continue
		}
		inAll := true
		for _, other := range conj[1:] {
			found := false
			for _, d := range other {
				if plan.Equal(c, d) {
					found = true
					break
				}
			}
			if !found {
				inAll = false
				break
			}
		}
		dup := false
		for _, d := range common {
			dup = dup || plan.Equal(c, d)
		}
		if inAll && !dup {
			common = append(common, c)
		}
	}
	if len(common) == 0 {
		return or
	}
	var rest []plan.Scalar
	for _, cs := range conj {
		var left []plan.Scalar
		for _, c := range cs {
			isCommon := false
			for _, d := range common {
				isCommon = isCommon || plan.Equal(c, d)
			}
			if !isCommon {
				left = append(left, c)
			}
		}
		if len(left) == 0 {
			// This arm is the common part alone: the OR is just it.
			return plan.MakeAnd(common)
		}
		rest = append(rest, plan.MakeAnd(left))
	}
	return plan.MakeAnd(append(common, &plan.BoolOp{Op: plan.Or, Args: rest}))
}

// factorable says a conjunct may move out of an OR: it has no volatile
// function (evaluated once instead of once an arm) and no subquery.
func factorable(c plan.Scalar) bool {
	ok := true
	plan.Walk(c, func(e plan.Scalar) bool {
		switch y := e.(type) {
		case *plan.Subquery:
			ok = false
		case *plan.Func:
			if y.Volatile {
				ok = false
			}
		}
		return ok
	})
	return ok
}

// evalConstFunc evaluates comparisons and integer arithmetic over constant
// operands; ok is false when it cannot (non-constant, unsupported types,
// or an evaluation error such as overflow or division by zero).
func evalConstFunc(f *plan.Func) (types.Datum, bool) {
	if !f.Op || len(f.Args) != 2 {
		return nil, false
	}
	l, lok := isConst(f.Args[0])
	r, rok := isConst(f.Args[1])
	if !lok || !rok {
		return nil, false
	}
	if l.Value == nil || r.Value == nil {
		// Every operator here is strict.
		return nil, true
	}
	if l.Typ.Kind != r.Typ.Kind || l.Typ.Kind == types.KindChar || l.Typ.Kind == types.KindName {
		// Different kinds or blank-padded comparison: leave it to run time.
		return nil, false
	}
	cmp, cmpOK := compareConst(l.Value, r.Value)
	switch f.Name {
	case "=":
		return cmp == 0, cmpOK
	case "<>":
		return cmp != 0, cmpOK
	case "<":
		return cmp < 0, cmpOK
	case "<=":
		return cmp <= 0, cmpOK
	case ">":
		return cmp > 0, cmpOK
	case ">=":
		return cmp >= 0, cmpOK
	}
	a, aok := l.Value.(int64)
	b, bok := r.Value.(int64)
	if !aok || !bok || !f.Typ.Kind.IsInteger() {
		return nil, false
	}
	lo, hi := intRange(f.Typ.Kind)
	var v int64
	switch f.Name {
	case "+":
		v = a + b
		if (b > 0 && v < a) || (b < 0 && v > a) {
			return nil, false
		}
	case "-":
		v = a - b
		if (b < 0 && v < a) || (b > 0 && v > a) {
			return nil, false
		}
	case "*":
		if a != 0 && b != 0 {
			v = a * b
			if v/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
				return nil, false
			}
		}
	default:
		return nil, false
	}
	if v < lo || v > hi {
		return nil, false
	}
	return v, true
}

func intRange(k types.Kind) (int64, int64) {
	switch k {
	case types.KindInt2:
		return math.MinInt16, math.MaxInt16
	case types.KindInt4:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// compareConst compares two constants of the same Go type.
func compareConst(a, b types.Datum) (int, bool) {
	switch x := a.(type) {
	case int64:
		y, ok := b.(int64)
		if !ok {
			return 0, false
		}
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	case bool:
		y, ok := b.(bool)
		if !ok {
			return 0, false
		}
		switch {
		case x == y:
			return 0, true
		case !x:
			return -1, true
		}
		return 1, true
	case string:
		y, ok := b.(string)
		if !ok {
			return 0, false
		}
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	case *apd.Decimal:
		y, ok := b.(*apd.Decimal)
		if !ok || x.Form != apd.Finite || y.Form != apd.Finite {
			return 0, false
		}
		return x.Cmp(y), true
	}
	return 0, false
}
