package expr

// Walkthrough (how the compiler and the operators use this package).
//
// Building. The compiler binds SQL into trees with the New* constructors,
// which resolve types exactly as PostgreSQL's parser does and insert the
// implicit casts:
//
//	x := &ColumnRef{Index: 0, Typ: types.TInt4, Name: "x"}
//	lit := NewConst(types.TUnknown, "10")        // an untyped literal
//	gt, _ := NewBinary(">", x, lit)              // '10' becomes int4 10
//	sum, _ := NewBinary("+", x, NewConst(types.TNumeric, d)) // int4 → numeric
//	c, _ := NewCase(nil, []When{{Cond: gt, Result: sum}}, nil)
//	f, _ := NewCall("round", c, NewConst(types.TInt4, int64(2)))
//	e, err := Fold(f)                            // plan-time constant folding
//
// Constructors: NewBinary (arithmetic, comparison, ||, bitwise, LIKE as
// ~~, regex ~), NewUnary, NewAnd/NewOr/NewNot, NewIsNull, NewBoolTest,
// NewDistinctFrom, NewCase, NewCoalesce, NewNullIf, NewGreatest/NewLeast,
// NewIn, NewBetween, NewLike, NewCast (explicit), Coerce (implicit or
// assignment), NewCall (the function library), NewConst/Null, Param.
//
// Type resolution without building: LookupBinaryOp, LookupUnaryOp,
// ComparisonType, CommonType (select_common_type), CanImplicitCast, CanCast,
// TypeCategory, IsPreferred, LookupFunc, Overloads, FunctionNames.
//
// Views. A view may only contain Immutable expressions: check
// ExprVolatility(e) == Immutable (now(), timestamptz arithmetic and
// time-zone dependent casts are Stable; clock_timestamp() is Volatile).
// Views evaluate with a fixed Env (UTC, no statement time).
//
// Evaluating. e.Eval(env, row) returns a Datum (nil is NULL) or an
// *errcode.Error (RS-2060 sql.evaluation_error, RS-2061 invalid text input)
// carrying PostgreSQL's SQLSTATE (22012, 22003, 22P02, ...). EvalBatch and
// FilterBatch run over a slice of rows and report the failing row.
//
// Semantics are checked against a real PostgreSQL 15 (pg_test.go,
// cast_pg_test.go, random_pg_test.go); known differences: regular
// expressions use Go's RE2 syntax (no back-references), lower/upper/initcap
// map ASCII letters only (the C locale), cbrt and the transcendental float
// functions use Go's math library (last-bit differences from glibc are
// possible), and age() rejects infinite timestamps.
