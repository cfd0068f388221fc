package expr

import (
	"github.com/rockstream/rockstream/ivm/types"
)

// jsonb operators (PostgreSQL's jsonb_object_field, jsonb_array_element,
// their _text forms, and jsonb_exists). Values are jsonb canonical text;
// a missing key, an index out of range or the wrong container kind gives
// NULL, as in PostgreSQL.

// JSONOperandType is the type an untyped literal takes on the right of a
// jsonb operator whose left side has type l. PostgreSQL resolves jsonb ->
// 'k' to the text overload (the string category wins over int4), so the
// generic "an unknown side takes the other side's type" rule does not
// apply. ok is false when op is not such an operator.
func JSONOperandType(op string, l types.Type) (types.Type, bool) {
	if l.Kind != types.KindJSONB {
		return types.Type{}, false
	}
	switch op {
	case "->", "->>", "?":
		return types.TText, true
	}
	return types.Type{}, false
}

func lookupJSONOp(op string, l, r types.Type) (OpInfo, bool) {
	if l.Kind != types.KindJSONB {
		return OpInfo{}, false
	}
	if r.Kind == types.KindUnknown {
		r, _ = JSONOperandType(op, l)
	}
	asText := op == "->>"
	result := types.TJSONB
	if asText {
		result = types.TText
	}
	switch {
	case (op == "->" || op == "->>") && r.Kind.IsString():
		return info(op, types.TJSONB, types.TText, result, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			v, err := jsonbValue(a)
			if err != nil || v.Kind != types.JSONObject {
				return nil, err
			}
			return jsonbResult(jsonObjectField(v, b.(string)), asText), nil
		})
	case (op == "->" || op == "->>") && (r.Kind == types.KindInt4 || r.Kind == types.KindInt2):
		return info(op, types.TJSONB, types.TInt4, result, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			v, err := jsonbValue(a)
			if err != nil || v.Kind == types.JSONObject {
				return nil, err
			}
			if v.Kind != types.JSONArray {
				// NB: PostgreSQL stores a top-level scalar as a one-element
				// array, and -> int sees it as one: '1'::jsonb -> 0 is 1.
				v = &types.JSONValue{Kind: types.JSONArray, Elems: []*types.JSONValue{v}}
			}
			return jsonbResult(jsonArrayElement(v, b.(int64)), asText), nil
		})
	case op == "?" && r.Kind.IsString():
		return info(op, types.TJSONB, types.TText, types.TBool, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			v, err := jsonbValue(a)
			if err != nil {
				return nil, err
			}
			return jsonbExists(v, b.(string)), nil
		})
	}
	return OpInfo{}, false
}

func jsonbValue(d types.Datum) (*types.JSONValue, error) {
	return types.ParseJSONValue(d.(string))
}

// jsonObjectField is the value of key k, or nil. Objects parsed from jsonb
// hold each key once.
func jsonObjectField(v *types.JSONValue, k string) *types.JSONValue {
	for i, key := range v.Keys {
		if key == k {
			return v.Vals[i]
		}
	}
	return nil
}

// jsonArrayElement is element i (negative counts from the end), or nil.
func jsonArrayElement(v *types.JSONValue, i int64) *types.JSONValue {
	n := int64(len(v.Elems))
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return nil
	}
	return v.Elems[i]
}

// jsonbResult is a found value as jsonb, or as text for the ->> forms
// (a string's value unquoted; JSON null is SQL NULL).
func jsonbResult(v *types.JSONValue, asText bool) types.Datum {
	switch {
	case v == nil:
		return nil
	case !asText:
		return v.JSONBText()
	case v.Kind == types.JSONNull:
		return nil
	case v.Kind == types.JSONString:
		return v.Str
	}
	return v.JSONBText()
}

// jsonbExists is jsonb ? text: a top-level key of an object, a string
// element of an array, or the string itself.
func jsonbExists(v *types.JSONValue, k string) bool {
	switch v.Kind {
	case types.JSONObject:
		return jsonObjectField(v, k) != nil
	case types.JSONArray:
		for _, e := range v.Elems {
			if e.Kind == types.JSONString && e.Str == k {
				return true
			}
		}
	case types.JSONString:
		return v.Str == k
	}
	return false
}
