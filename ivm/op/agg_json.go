package op

import (
	"fmt"
	"strings"

	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/types"
)

// JSON aggregates: json_agg, jsonb_agg, json_object_agg and
// jsonb_object_agg, kept like array_agg (agg_ordered.go) in a per-group
// ordered multiset, so a retraction removes exactly one element and a
// touched group's result is rebuilt in order. An element is (value or key,
// its JSON text); the text is made when the row arrives, with the
// session settings of the view (a timestamptz in its TimeZone), as
// PostgreSQL converts each value when it is aggregated. NULL values are
// aggregated (as null); a NULL key fails with 22023.

func isJSONAgg(f AggFunc) bool {
	return f == AggJSONAgg || f == AggJSONBAgg || f == AggJSONObjectAgg || f == AggJSONBObjectAgg
}

func jsonAggResultType(call AggregateCall) (types.Type, error) {
	if call.Arg.Type().Kind == types.KindRecord {
		return types.Type{}, fmt.Errorf("%s of a row is not supported", call.Func)
	}
	object := call.Func == AggJSONObjectAgg || call.Func == AggJSONBObjectAgg
	if object != (call.Value != nil) {
		return types.Type{}, fmt.Errorf("%s needs %s", call.Func, map[bool]string{true: "a key and a value", false: "one argument"}[object])
	}
	if call.Func == AggJSONAgg || call.Func == AggJSONObjectAgg {
		return types.Type{Kind: types.KindJSON, Typmod: -1}, nil
	}
	return types.TJSONB, nil
}

// jsonAggFragment is a row's piece of a JSON aggregate: the value's JSON
// text, or the object's `"key" : value` field.
func jsonAggFragment(env *expr.Env, call AggregateCall, row types.Row, v types.Datum) (string, error) {
	switch call.Func {
	case AggJSONAgg, AggJSONBAgg:
		return expr.JSONAggElement(env, call.Arg.Type(), v, call.Func == AggJSONBAgg), nil
	}
	val, err := call.Value.Eval(env, row)
	if err != nil {
		return "", err
	}
	return expr.JSONObjectAggField(env, call.Arg.Type(), v, call.Value.Type(), val, call.Func == AggJSONBObjectAgg)
}

// buildJSONAgg joins the fragments of elements (in order, each repeated
// by its positive weight, once for DISTINCT) as PostgreSQL's final
// functions print them: json_agg `[1, 2]` (an array or row value after
// the first on a new line), json_object_agg `{ "a" : 1, "b" : 2 }`, and
// the jsonb forms normalised (a repeated jsonb_object_agg key keeps its
// last value). NULL when no row was aggregated.
func buildJSONAgg(call AggregateCall, elements []types.Row, weights []int64) (types.Datum, error) {
	var sb strings.Builder
	object := call.Func == AggJSONObjectAgg || call.Func == AggJSONBObjectAgg
	switch {
	case call.Func == AggJSONObjectAgg:
		sb.WriteString("{ ")
	case object:
		sb.WriteByte('{')
	default:
		sb.WriteByte('[')
	}
	structured := call.Func == AggJSONAgg && call.Arg.Type().Kind == types.KindArray
	count := eachCopy(call, elements, weights, func(e types.Row, count int) {
		if count > 0 {
			sb.WriteString(", ")
			if structured && e[0] != nil {
				sb.WriteString("\n ")
			}
		}
		sb.WriteString(e[1].(string))
	})
	if count == 0 {
		return nil, nil
	}
	switch {
	case call.Func == AggJSONObjectAgg:
		sb.WriteString(" }")
	case object:
		sb.WriteByte('}')
	default:
		sb.WriteByte(']')
	}
	if call.Func == AggJSONBAgg || call.Func == AggJSONBObjectAgg {
		return types.ParseJSONB(sb.String())
	}
	return sb.String(), nil
}
