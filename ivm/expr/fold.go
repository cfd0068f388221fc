package expr

import (
	"github.com/rockstream/rockstream/ivm/types"
)

// Fold simplifies constant subexpressions the way PostgreSQL's planner does
// (eval_const_expressions), in the same order, so that the same errors
// surface at plan time and the same unreachable subexpressions are skipped:
//
//   - operators, casts and immutable functions whose arguments are all
//     constants are evaluated (strict ones with a NULL argument become NULL
//     without being called);
//   - AND/OR fold left to right and stop at the first constant false/true,
//     leaving the rest unvisited;
//   - CASE drops branches whose condition folds to false or NULL without
//     folding their results, and stops at a condition that folds to true;
//   - COALESCE drops constant NULL arguments and stops at the first constant
//     non-NULL one.
//
// As in PostgreSQL, a constant error in a reachable branch is raised even
// if no row would ever take that branch ("CASE WHEN x > 0 THEN 1/0 END"
// fails at plan time). Stable and volatile functions and time-zone
// dependent conversions are not folded. The compiler calls Fold once after
// binding; the result evaluates identically to e.
func Fold(e Expr) (Expr, error) {
	switch x := e.(type) {
	case *Const, *ColumnRef, *Param:
		return e, nil
	case *And:
		return foldAndOr(x.Args, false)
	case *Or:
		return foldAndOr(x.Args, true)
	case *Case:
		return foldCase(x)
	case *Coalesce:
		var args []Expr
		for _, a := range x.Args {
			f, err := Fold(a)
			if err != nil {
				return nil, err
			}
			if c, ok := f.(*Const); ok {
				if c.Value == nil {
					continue
				}
				args = append(args, f)
				break
			}
			args = append(args, f)
		}
		switch len(args) {
		case 0:
			return Null(x.Typ), nil
		case 1:
			return args[0], nil
		}
		return &Coalesce{Args: args, Typ: x.Typ}, nil
	case *Between:
		return foldBetween(x)
	}
	// Generic: fold the children, then evaluate when all are constants.
	children := Children(e)
	folded := make([]Expr, len(children))
	allConst := true
	anyNull := false
	for i, c := range children {
		f, err := Fold(c)
		if err != nil {
			return nil, err
		}
		folded[i] = f
		k, ok := f.(*Const)
		if !ok {
			allConst = false
		} else if k.Value == nil {
			anyNull = true
		}
	}
	out := withChildren(e, folded)
	if !foldable(out) {
		return out, nil
	}
	if anyNull && strictNode(out) {
		return Null(out.Type()), nil
	}
	if !allConst {
		return out, nil
	}
	v, err := out.Eval(nil, nil)
	if err != nil {
		return nil, err
	}
	return NewConst(out.Type(), v), nil
}

// foldable reports whether a node may be evaluated at plan time.
func foldable(e Expr) bool {
	switch x := e.(type) {
	case *Call:
		return x.Fn.Volatility == Immutable
	case *Cast:
		if castDependsOnZone(x.X.Type(), x.Typ) || castDependsOnStyle(x.X.Type(), x.Typ) {
			return false
		}
		if k, ok := x.X.(*Const); ok {
			return sameUnderEveryStyle(k, x.Typ)
		}
		return true
	case *Binary:
		return !((x.Info.Left.Kind == types.KindTimestampTZ || x.Info.Right.Kind == types.KindTimestampTZ) && (x.Info.Op == "+" || x.Info.Op == "-") &&
			x.Info.Result.Kind == types.KindTimestampTZ)
	}
	return true
}

// strictNode reports nodes that are NULL whenever an argument is NULL.
func strictNode(e Expr) bool {
	switch x := e.(type) {
	case *Call:
		return x.Fn.Strict
	case *Binary, *Unary, *Cast, *Not:
		return true
	}
	return false
}

// withChildren rebuilds e with new children (same order as Children).
func withChildren(e Expr, c []Expr) Expr {
	switch x := e.(type) {
	case *Not:
		return &Not{X: c[0]}
	case *IsNull:
		return &IsNull{X: c[0], Negated: x.Negated}
	case *BoolTest:
		return &BoolTest{X: c[0], Test: x.Test}
	case *DistinctFrom:
		return &DistinctFrom{L: c[0], R: c[1], Cmp: x.Cmp, Negated: x.Negated}
	case *NullIf:
		return &NullIf{X: c[0], Y: c[1], Cmp: x.Cmp}
	case *MinMax:
		return &MinMax{Args: c, Typ: x.Typ, Greatest: x.Greatest}
	case *InList:
		return &InList{X: c[0], List: c[1:], Cmp: x.Cmp, Negated: x.Negated}
	case *Like:
		var esc Expr
		if len(c) > 2 {
			esc = c[2]
		}
		return newLike(c[0], c[1], esc, x.CaseInsensitive, x.Negated)
	case *RegexMatch:
		return newRegexMatch(c[0], c[1], x.CaseInsensitive, x.Negated)
	case *Binary:
		return &Binary{Info: x.Info, L: c[0], R: c[1]}
	case *Unary:
		return &Unary{Op: x.Op, X: c[0], Typ: x.Typ, Fn: x.Fn}
	case *Cast:
		return &Cast{X: c[0], Typ: x.Typ, Explicit: x.Explicit}
	case *Call:
		return &Call{Fn: specialize(x.Fn, c), Args: c, ArgTypes: x.ArgTypes, Typ: x.Typ}
	case *AnyAll:
		return &AnyAll{Info: x.Info, X: c[0], Arr: c[1], All: x.All}
	}
	return e
}

func foldAndOr(args []Expr, isOr bool) (Expr, error) {
	var out []Expr
	sawNull := false
	for _, a := range args {
		f, err := Fold(a)
		if err != nil {
			return nil, err
		}
		if c, ok := f.(*Const); ok {
			switch {
			case c.Value == nil:
				sawNull = true
				continue
			case c.Value.(bool) == isOr:
				// true in OR / false in AND decides; the rest is not visited.
				return NewConst(types.TBool, isOr), nil
			default:
				continue // the neutral element
			}
		}
		out = append(out, f)
	}
	if sawNull {
		out = append(out, Null(types.TBool))
	}
	switch len(out) {
	case 0:
		return NewConst(types.TBool, !isOr), nil
	case 1:
		if sawNull {
			return Null(types.TBool), nil
		}
		return out[0], nil
	}
	if isOr {
		return &Or{Args: out}, nil
	}
	return &And{Args: out}, nil
}

func foldCase(x *Case) (Expr, error) {
	var operand Expr
	if x.Operand != nil {
		f, err := Fold(x.Operand)
		if err != nil {
			return nil, err
		}
		operand = f
	}
	out := &Case{Operand: operand, Cmp: x.Cmp, Typ: x.Typ}
	for _, w := range x.Whens {
		cond, err := Fold(w.Cond)
		if err != nil {
			return nil, err
		}
		if c, ok := cond.(*Const); ok {
			decided, taken := false, false
			if operand == nil {
				decided, taken = true, c.Value == true
			} else if oc, ok := operand.(*Const); ok {
				decided = true
				taken = oc.Value != nil && c.Value != nil && types.Compare(x.Cmp, oc.Value, c.Value) == 0
			} else if c.Value == nil {
				decided = true // operand = NULL is never true
			}
			if decided && !taken {
				continue
			}
			if decided && taken {
				res, err := Fold(w.Result)
				if err != nil {
					return nil, err
				}
				if len(out.Whens) == 0 {
					return res, nil
				}
				out.Else = res
				return out, nil
			}
		}
		res, err := Fold(w.Result)
		if err != nil {
			return nil, err
		}
		out.Whens = append(out.Whens, When{Cond: cond, Result: res})
	}
	if x.Else != nil {
		res, err := Fold(x.Else)
		if err != nil {
			return nil, err
		}
		out.Else = res
	}
	if len(out.Whens) == 0 {
		if out.Else == nil {
			return Null(x.Typ), nil
		}
		return out.Else, nil
	}
	return out, nil
}

// foldBetween follows PostgreSQL's expansion x >= lo AND x <= hi (NOT:
// x < lo OR x > hi): when the first comparison decides, hi is not visited.
func foldBetween(x *Between) (Expr, error) {
	fx, err := Fold(x.X)
	if err != nil {
		return nil, err
	}
	flo, err := Fold(x.Lo)
	if err != nil {
		return nil, err
	}
	if !x.Symmetric {
		cx, ok1 := fx.(*Const)
		cl, ok2 := flo.(*Const)
		if ok1 && ok2 && cx.Value != nil && cl.Value != nil {
			ge := types.Compare(x.Cmp, cx.Value, cl.Value) >= 0
			if !ge {
				return NewConst(types.TBool, x.Negated), nil
			}
		}
	}
	fhi, err := Fold(x.Hi)
	if err != nil {
		return nil, err
	}
	out := &Between{X: fx, Lo: flo, Hi: fhi, Cmp: x.Cmp, Negated: x.Negated, Symmetric: x.Symmetric}
	_, c1 := fx.(*Const)
	_, c2 := flo.(*Const)
	_, c3 := fhi.(*Const)
	if c1 && c2 && c3 {
		v, err := out.Eval(nil, nil)
		if err != nil {
			return nil, err
		}
		return NewConst(types.TBool, v), nil
	}
	return out, nil
}
