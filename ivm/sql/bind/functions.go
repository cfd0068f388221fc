package bind

import (
	"github.com/rockstream/rockstream/ivm/types"
)

// funcSig is one overload of a scalar function. NB: a local adapter until
// ivm/expr's function registry lands; the binder then asks the registry.
type funcSig struct {
	args []types.Type
	// variadic repeats the last arg type.
	variadic bool
	result   types.Type
	// sameAsArg makes the result the (resolved) type of argument 0.
	sameAsArg bool
	volatile  bool
	// stable functions (now()) may not appear in materialized views.
	stable bool
	// zoned functions depend on the session's TimeZone only: a
	// materialized view is maintained in the zone it was created in
	// (catalog.Relation.TimeZone), so they are allowed there.
	zoned bool
}

// scalarFuncs lists the supported scalar functions and their overloads,
// in PostgreSQL's preference order.
//
//lint:immutable a constant table; never assigned after init.
var scalarFuncs = map[string][]funcSig{
	"lower":            {{args: []types.Type{types.TText}, result: types.TText}},
	"upper":            {{args: []types.Type{types.TText}, result: types.TText}},
	"length":           {{args: []types.Type{types.TText}, result: types.TInt4}},
	"char_length":      {{args: []types.Type{types.TText}, result: types.TInt4}},
	"character_length": {{args: []types.Type{types.TText}, result: types.TInt4}},
	"octet_length":     {{args: []types.Type{types.TText}, result: types.TInt4}},
	"btrim":            {{args: []types.Type{types.TText}, result: types.TText}, {args: []types.Type{types.TText, types.TText}, result: types.TText}},
	"ltrim":            {{args: []types.Type{types.TText}, result: types.TText}, {args: []types.Type{types.TText, types.TText}, result: types.TText}},
	"rtrim":            {{args: []types.Type{types.TText}, result: types.TText}, {args: []types.Type{types.TText, types.TText}, result: types.TText}},
	"substr":           {{args: []types.Type{types.TText, types.TInt4}, result: types.TText}, {args: []types.Type{types.TText, types.TInt4, types.TInt4}, result: types.TText}},
	"substring":        {{args: []types.Type{types.TText, types.TInt4}, result: types.TText}, {args: []types.Type{types.TText, types.TInt4, types.TInt4}, result: types.TText}},
	"replace":          {{args: []types.Type{types.TText, types.TText, types.TText}, result: types.TText}},
	"concat":           {{args: []types.Type{types.TText}, variadic: true, result: types.TText}},
	"left":             {{args: []types.Type{types.TText, types.TInt4}, result: types.TText}},
	"right":            {{args: []types.Type{types.TText, types.TInt4}, result: types.TText}},
	"strpos":           {{args: []types.Type{types.TText, types.TText}, result: types.TInt4}},
	"abs": {
		{args: []types.Type{types.TInt2}, result: types.TInt2}, {args: []types.Type{types.TInt4}, result: types.TInt4},
		{args: []types.Type{types.TInt8}, result: types.TInt8}, {args: []types.Type{types.TNumeric}, result: types.TNumeric},
		{args: []types.Type{types.TFloat4}, result: types.TFloat4}, {args: []types.Type{types.TFloat8}, result: types.TFloat8},
	},
	"round": {{args: []types.Type{types.TFloat8}, result: types.TFloat8}, {args: []types.Type{types.TNumeric}, result: types.TNumeric}, {args: []types.Type{types.TNumeric, types.TInt4}, result: types.TNumeric}},
	"trunc": {{args: []types.Type{types.TFloat8}, result: types.TFloat8}, {args: []types.Type{types.TNumeric}, result: types.TNumeric}, {args: []types.Type{types.TNumeric, types.TInt4}, result: types.TNumeric}},
	"floor": {{args: []types.Type{types.TFloat8}, result: types.TFloat8}, {args: []types.Type{types.TNumeric}, result: types.TNumeric}},
	"ceil":  {{args: []types.Type{types.TFloat8}, result: types.TFloat8}, {args: []types.Type{types.TNumeric}, result: types.TNumeric}},
	"sqrt":  {{args: []types.Type{types.TFloat8}, result: types.TFloat8}, {args: []types.Type{types.TNumeric}, result: types.TNumeric}},
	"mod": {
		{args: []types.Type{types.TInt2, types.TInt2}, result: types.TInt2}, {args: []types.Type{types.TInt4, types.TInt4}, result: types.TInt4},
		{args: []types.Type{types.TInt8, types.TInt8}, result: types.TInt8}, {args: []types.Type{types.TNumeric, types.TNumeric}, result: types.TNumeric},
	},
	"date_trunc": {{args: []types.Type{types.TText, types.TTimestamp}, result: types.TTimestamp}, {args: []types.Type{types.TText, types.TTimestampTZ}, result: types.TTimestampTZ, zoned: true}, {args: []types.Type{types.TText, types.TInterval}, result: types.TInterval}},
	"date_part":  {{args: []types.Type{types.TText, types.TTimestamp}, result: types.TFloat8}, {args: []types.Type{types.TText, types.TTimestampTZ}, result: types.TFloat8, zoned: true}, {args: []types.Type{types.TText, types.TInterval}, result: types.TFloat8}, {args: []types.Type{types.TText, types.TDate}, result: types.TFloat8}},
	"extract":    {{args: []types.Type{types.TText, types.TTimestamp}, result: types.TNumeric}, {args: []types.Type{types.TText, types.TTimestampTZ}, result: types.TNumeric, zoned: true}, {args: []types.Type{types.TText, types.TInterval}, result: types.TNumeric}, {args: []types.Type{types.TText, types.TDate}, result: types.TNumeric}},
	"now":        {{result: types.TTimestampTZ, stable: true}},
	"random":     {{result: types.TFloat8, volatile: true}},
	"md5":        {{args: []types.Type{types.TText}, result: types.TText}},
	"nullif":     {},
	"greatest":   {},
	"least":      {},
}

// aggResult returns the result type of aggregate name over arg (PostgreSQL
// 15's pg_aggregate); ok is false when there is no such aggregate for arg.
func aggResult(name string, args []types.Type) (types.Type, bool) {
	if name == "count" {
		return types.TInt8, len(args) <= 1
	}
	if len(args) == 2 && (name == "json_object_agg" || name == "jsonb_object_agg") {
		if args[0].Kind == types.KindRecord || args[1].Kind == types.KindRecord {
			return types.Type{}, false
		}
		if name == "json_object_agg" {
			return types.Type{Kind: types.KindJSON, Typmod: -1}, true
		}
		return types.TJSONB, true
	}
	if len(args) != 1 {
		if name == "string_agg" && len(args) == 2 {
			// PostgreSQL has string_agg(text, text) (and bytea, which the
			// binder refuses as unsupported); anything else is 42883.
			return types.TText, args[0].Kind.IsString() && args[1].Kind.IsString()
		}
		return types.Type{}, false
	}
	a := baseType(args[0])
	switch name {
	case "sum":
		switch a.Kind {
		case types.KindInt2, types.KindInt4:
			return types.TInt8, true
		case types.KindInt8, types.KindNumeric:
			return types.TNumeric, true
		case types.KindFloat4, types.KindFloat8, types.KindInterval:
			return a, true
		}
	case "avg":
		switch a.Kind {
		case types.KindInt2, types.KindInt4, types.KindInt8, types.KindNumeric:
			return types.TNumeric, true
		case types.KindFloat4, types.KindFloat8:
			return types.TFloat8, true
		case types.KindInterval:
			return types.TInterval, true
		}
	case "min", "max":
		switch categoryOf(a.Kind) {
		case catNumeric, catString, catDatetime, catTimespan, catBool:
			if a.Kind == types.KindBool {
				return types.Type{}, false
			}
			if a.Kind.IsString() && a.Kind != types.KindChar {
				return types.TText, true
			}
			return a, true
		}
		if a.Kind == types.KindUUID {
			return a, true
		}
	case "bool_and", "bool_or", "every":
		return types.TBool, a.Kind == types.KindBool
	case "bit_and", "bit_or", "bit_xor":
		switch a.Kind {
		case types.KindInt2, types.KindInt4, types.KindInt8:
			return a, true
		}
	case "var_pop", "var_samp", "variance", "stddev_pop", "stddev_samp", "stddev":
		switch a.Kind {
		case types.KindInt2, types.KindInt4, types.KindInt8, types.KindNumeric:
			return types.TNumeric, true
		case types.KindFloat4, types.KindFloat8:
			// NB: refused by the binder (isFloatVariance).
			return types.TFloat8, true
		}
	case "array_agg":
		if a.Kind == types.KindArray || a.Kind == types.KindUnknown {
			return types.Type{}, false
		}
		return types.ArrayOf(a), true
	case "json_agg":
		return types.Type{Kind: types.KindJSON, Typmod: -1}, a.Kind != types.KindRecord
	case "jsonb_agg":
		return types.TJSONB, a.Kind != types.KindRecord
	}
	return types.Type{}, false
}

// isAggregate reports the aggregate functions the binder knows.
func isAggregate(name string) bool {
	switch name {
	case "count", "sum", "avg", "min", "max", "bool_and", "bool_or", "every", "string_agg", "array_agg", "bit_and", "bit_or", "bit_xor",
		"json_agg", "jsonb_agg", "json_object_agg", "jsonb_object_agg":
		return true
	}
	return isVarianceAggregate(name)
}

// isVarianceAggregate names the variance and standard deviation
// aggregates (exact over int2/int4/int8/numeric, like PostgreSQL).
func isVarianceAggregate(name string) bool {
	switch name {
	case "var_pop", "var_samp", "variance", "stddev_pop", "stddev_samp", "stddev":
		return true
	}
	return false
}

// isFloatVariance reports a variance aggregate over a float argument:
// PostgreSQL accumulates those with the order-dependent Youngs–Cramer
// recurrence, which retractions cannot reproduce, so they are refused.
func isFloatVariance(name string, args []types.Type) bool {
	if !isVarianceAggregate(name) || len(args) != 1 {
		return false
	}
	k := baseType(args[0]).Kind
	return k == types.KindFloat4 || k == types.KindFloat8
}

// isUnsupportedAggregate names aggregates PostgreSQL has but RockStream does
// not support yet (so they fail with a named RS-2001, not "no such function").
func isUnsupportedAggregate(name string) bool {
	switch name {
	case "corr", "covar_pop", "covar_samp",
		"regr_slope", "xmlagg":
		return true
	}
	return false
}
