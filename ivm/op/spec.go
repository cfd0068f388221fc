package op

import "github.com/rockstream/rockstream/ivm/expr"

// AggFunc is an aggregate function.
type AggFunc uint8

// Aggregate functions. Result types follow PostgreSQL: count → int8;
// sum(int2/int4) → int8, sum(int8/numeric) → numeric, sum(float4) → float4,
// sum(float8) → float8, sum(interval) → interval; avg(int*/numeric) →
// numeric, avg(float*) → float8; min/max → argument type; bool_and/or → bool.
const (
	AggCountStar AggFunc = iota + 1 // COUNT(*): Arg is nil
	AggCount
	AggSum
	AggAvg
	AggMin
	AggMax
	AggBoolAnd
	AggBoolOr
	// AggStringAgg is string_agg(Arg, Delimiter [ORDER BY ...]) → text.
	AggStringAgg
	// AggArrayAgg is array_agg(Arg [ORDER BY ...]) → Arg's array type.
	AggArrayAgg
	// AggVarPop, AggVarSamp, AggStddevPop and AggStddevSamp are var_pop,
	// var_samp (= variance), stddev_pop and stddev_samp (= stddev) of an
	// int2/int4/int8/numeric argument → numeric (agg_variance.go).
	AggVarPop
	AggVarSamp
	AggStddevPop
	AggStddevSamp
	// AggBitAnd, AggBitOr and AggBitXor are bit_and, bit_or and bit_xor of
	// an int2/int4/int8 argument → its type (agg_bits.go).
	AggBitAnd
	AggBitOr
	AggBitXor
	// AggPercentileCont, AggPercentileDisc and AggMode are the ordered-set
	// aggregates percentile_cont(Fraction) WITHIN GROUP (ORDER BY Arg),
	// percentile_disc(Fraction) WITHIN GROUP (ORDER BY Arg) and mode()
	// WITHIN GROUP (ORDER BY Arg) (agg_ordered_set.go): percentile_cont
	// over float8 → float8 and over interval → interval, percentile_disc
	// and mode → Arg's type; a float8[] Fraction gives an array of them.
	AggPercentileCont
	AggPercentileDisc
	AggMode
	// AggJSONAgg and AggJSONBAgg are json_agg(Arg [ORDER BY ...]) → json
	// and jsonb_agg(Arg [ORDER BY ...]) → jsonb; AggJSONObjectAgg and
	// AggJSONBObjectAgg are json_object_agg(Arg, Value [ORDER BY ...]) →
	// json and jsonb_object_agg(Arg, Value [ORDER BY ...]) → jsonb, Arg
	// being the key (agg_json.go). Kept like array_agg.
	AggJSONAgg
	AggJSONBAgg
	AggJSONObjectAgg
	AggJSONBObjectAgg
)

func (f AggFunc) String() string {
	switch f {
	case AggCountStar:
		return "count(*)"
	case AggCount:
		return "count"
	case AggSum:
		return "sum"
	case AggAvg:
		return "avg"
	case AggMin:
		return "min"
	case AggMax:
		return "max"
	case AggBoolAnd:
		return "bool_and"
	case AggBoolOr:
		return "bool_or"
	case AggStringAgg:
		return "string_agg"
	case AggArrayAgg:
		return "array_agg"
	case AggVarPop:
		return "var_pop"
	case AggVarSamp:
		return "var_samp"
	case AggStddevPop:
		return "stddev_pop"
	case AggStddevSamp:
		return "stddev_samp"
	case AggBitAnd:
		return "bit_and"
	case AggBitOr:
		return "bit_or"
	case AggBitXor:
		return "bit_xor"
	case AggPercentileCont:
		return "percentile_cont"
	case AggPercentileDisc:
		return "percentile_disc"
	case AggMode:
		return "mode"
	case AggJSONAgg:
		return "json_agg"
	case AggJSONBAgg:
		return "jsonb_agg"
	case AggJSONObjectAgg:
		return "json_object_agg"
	case AggJSONBObjectAgg:
		return "jsonb_object_agg"
	}
	return "?"
}

// AggregateCall is one aggregate in a SELECT list:
// Func([DISTINCT] Arg) [FILTER (WHERE Filter)].
type AggregateCall struct {
	Func AggFunc
	// Arg is the argument, evaluated per input row; nil for COUNT(*).
	Arg expr.Expr
	// Distinct aggregates over distinct non-NULL argument values.
	Distinct bool
	// Filter, when set, restricts the rows the aggregate sees.
	Filter expr.Expr
	// Name is the output column name.
	Name string
	// Delimiter is string_agg's second argument, evaluated per row (the
	// delimiter placed before that row's value).
	Delimiter expr.Expr
	// Value is json_object_agg's and jsonb_object_agg's second argument
	// (Arg is the key).
	Value expr.Expr
	// OrderBy is the ORDER BY inside string_agg/array_agg. Without it the
	// values are ordered by the value itself (PostgreSQL leaves the order
	// to the plan; ascending value order is deterministic). For an
	// ordered-set aggregate Arg is the WITHIN GROUP expression and OrderBy
	// is empty (ascending) or that same expression descending.
	OrderBy []AggOrderKey
	// Fraction is the direct argument of percentile_cont and
	// percentile_disc: a float8 or float8[] expression over no columns,
	// evaluated once per group when the result is computed.
	Fraction expr.Expr
}

// AggOrderKey is one ORDER BY item inside an aggregate call.
type AggOrderKey struct {
	Expr       expr.Expr
	Descending bool
	// NullsFirst places NULLs first; PostgreSQL's default is NULLS LAST
	// for ASC and NULLS FIRST for DESC (set it accordingly).
	NullsFirst bool
}

// AggregateSpec is GROUP BY GroupBy with Calls. The output row is the
// group-by columns followed by one column per call. With no GroupBy the
// aggregate is global: it always has exactly one output row, as in
// PostgreSQL (count 0, sum NULL on empty input).
type AggregateSpec struct {
	GroupBy []int
	Calls   []AggregateCall
	// Watermark, when set, names a GROUP BY column that is a window over
	// an event-time column with a watermark: a group's state is forgotten
	// once the watermark passes its window (agg_watermark.go).
	Watermark *AggregateWatermark
}

// JoinKind is the kind of join.
type JoinKind uint8

// Join kinds.
const (
	JoinInner JoinKind = iota + 1
	JoinLeft
	JoinRight
	JoinFull
	// JoinSemi outputs each left row (with its weight) that has at least one
	// match: EXISTS / IN.
	JoinSemi
	// JoinAnti outputs each left row that has no match: NOT EXISTS, or
	// NOT IN when NullAware is set.
	JoinAnti
)

func (k JoinKind) String() string {
	switch k {
	case JoinInner:
		return "inner"
	case JoinLeft:
		return "left"
	case JoinRight:
		return "right"
	case JoinFull:
		return "full"
	case JoinSemi:
		return "semi"
	case JoinAnti:
		return "anti"
	}
	return "?"
}

// JoinSpec describes a join of a left and a right input. Rows match when
// their key columns are equal (NULL never equals anything unless NullSafe)
// and Residual (over the concatenated left++right row) is true. With no
// keys the join is a cross or theta join. The output row is left++right
// (NULL-padded for outer joins); semi and anti joins output left rows.
type JoinSpec struct {
	Kind      JoinKind
	LeftKeys  []int
	RightKeys []int
	// Residual is an extra predicate over left++right; nil means true.
	Residual expr.Expr
	// NullSafe makes every key's equality IS NOT DISTINCT FROM
	// (decorrelation).
	NullSafe bool
	// NullSafeKeys, when set (one flag per key), makes only the flagged
	// keys IS NOT DISTINCT FROM; it overrides NullSafe.
	NullSafeKeys []bool
	// NullAware gives JoinAnti the semantics of `left.k NOT IN (SELECT
	// right.k ...)`: a NULL on either side makes the predicate NULL, and an
	// empty right side passes every left row. Requires exactly one key
	// column and no Residual.
	NullAware bool
	// RightConstant marks an inner join whose right input changes only in
	// its first step (a constant relation such as VALUES, fed once): its
	// left rows are not arranged, since no later right change probes
	// them, so the join keeps no state growing with the left input (a
	// HOP window's join with its offsets).
	RightConstant bool
	// Watermark, when set, names a join key column that is a window over
	// an event-time column with a watermark on both sides: a key's
	// arranged rows are forgotten once the watermark passes its window
	// (join_watermark.go).
	Watermark *JoinWatermark
}

// SortKey is one ORDER BY item over a column.
type SortKey struct {
	Column     int
	Descending bool
	// NullsFirst places NULLs first; PostgreSQL's default is NULLS LAST
	// for ASC and NULLS FIRST for DESC (set it accordingly).
	NullsFirst bool
}

// TopKSpec is ORDER BY OrderBy LIMIT Limit OFFSET Offset, per partition of
// PartitionBy columns (none: one partition). Limit < 0 means no limit. Ties
// are broken by the whole row so the result is deterministic.
type TopKSpec struct {
	PartitionBy []int
	OrderBy     []SortKey
	Limit       int64
	Offset      int64
	// InsertOnly: the input never deletes a row (scans of insert-only
	// tables and sources through filters, projections and inner joins),
	// so the state keeps only each partition's first OFFSET + LIMIT rows
	// (TopK.pruned). A deletion arriving anyway fails the step.
	InsertOnly bool
}

// SetOpKind is a set operation over two inputs of the same schema.
type SetOpKind uint8

// Set operations (UNION ALL is linear and is UnionAll; UNION is
// Distinct(UnionAll)).
const (
	SetIntersect SetOpKind = iota + 1
	SetIntersectAll
	SetExcept
	SetExceptAll
)
