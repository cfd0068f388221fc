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
	case "#>", "#>>", "?|", "?&":
		return types.ArrayOf(types.TText), true
	case "@>", "<@", "||":
		return types.TJSONB, true
	case "-":
		return types.TText, true
	case "#-":
		return types.ArrayOf(types.TText), true
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
	asText := op == "->>" || op == "#>>"
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
	case (op == "#>" || op == "#>>") && isTextArray(r):
		return info(op, types.TJSONB, types.ArrayOf(types.TText), result, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			v, err := jsonbValue(a)
			if err != nil {
				return nil, err
			}
			found, ok := jsonbPath(v, b.(types.Array).Values)
			if !ok {
				return nil, nil
			}
			return jsonbResult(found, asText), nil
		})
	case (op == "?|" || op == "?&") && isTextArray(r):
		all := op == "?&"
		return info(op, types.TJSONB, types.ArrayOf(types.TText), types.TBool, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			v, err := jsonbValue(a)
			if err != nil {
				return nil, err
			}
			for _, k := range b.(types.Array).Values {
				if k == nil {
					continue
				}
				if jsonbExists(v, k.(string)) != all {
					return !all, nil
				}
			}
			return all, nil
		})
	case (op == "@>" || op == "<@") && r.Kind == types.KindJSONB:
		swap := op == "<@"
		return info(op, types.TJSONB, types.TJSONB, types.TBool, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			if swap {
				a, b = b, a
			}
			x, err := jsonbValue(a)
			if err != nil {
				return nil, err
			}
			y, err := jsonbValue(b)
			if err != nil {
				return nil, err
			}
			return jsonbContainsTop(x, y), nil
		})
	case op == "||" && r.Kind == types.KindJSONB:
		return info(op, types.TJSONB, types.TJSONB, types.TJSONB, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			x, err := jsonbValue(a)
			if err != nil {
				return nil, err
			}
			y, err := jsonbValue(b)
			if err != nil {
				return nil, err
			}
			return jsonbConcat(x, y)
		})
	case op == "-" && r.Kind.IsString():
		return info(op, types.TJSONB, types.TText, types.TJSONB, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			v, err := jsonbValue(a)
			if err != nil {
				return nil, err
			}
			return jsonbDeleteKeys(v, []types.Datum{b})
		})
	case op == "-" && isTextArray(r):
		return info(op, types.TJSONB, types.ArrayOf(types.TText), types.TJSONB, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			v, err := jsonbValue(a)
			if err != nil {
				return nil, err
			}
			return jsonbDeleteKeys(v, b.(types.Array).Values)
		})
	case op == "-" && (r.Kind == types.KindInt4 || r.Kind == types.KindInt2):
		return info(op, types.TJSONB, types.TInt4, types.TJSONB, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			v, err := jsonbValue(a)
			if err != nil {
				return nil, err
			}
			return jsonbDeleteIndex(v, b.(int64))
		})
	case op == "#-" && isTextArray(r):
		return info(op, types.TJSONB, types.ArrayOf(types.TText), types.TJSONB, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			v, err := jsonbValue(a)
			if err != nil {
				return nil, err
			}
			if v.Kind < types.JSONArray {
				return nil, EvalError(StateInvalidParameterValue, "cannot delete path in scalar")
			}
			out, err := jsonbSetPath(v, b.(types.Array).Values, 0, nil, false)
			if err != nil {
				return nil, err
			}
			return out.JSONBText(), nil
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

func isTextArray(t types.Type) bool {
	return t.Kind == types.KindArray && t.Elem != nil && t.Elem.Kind.IsString()
}

// jsonbPath follows a #> path as get_jsonb_path_all does: object steps by
// key, array steps by an integer (negative from the end; not an integer:
// NULL), a NULL step or a scalar on the way gives NULL (ok false). Unlike
// -> int, a top-level scalar is no array here: '1'::jsonb #> '{0}' is NULL.
func jsonbPath(v *types.JSONValue, path []types.Datum) (*types.JSONValue, bool) {
	for _, step := range path {
		if step == nil {
			return nil, false
		}
		switch v.Kind {
		case types.JSONObject:
			v = jsonObjectField(v, step.(string))
		case types.JSONArray:
			i, ok := strtolInt32(step.(string))
			if !ok {
				return nil, false
			}
			v = jsonArrayElement(v, i)
		default:
			return nil, false
		}
		if v == nil {
			return nil, false
		}
	}
	return v, true
}

// strtolInt32 parses s as C's strtol does for a path index (leading
// white space, an optional sign, digits, nothing after), within int4.
func strtolInt32(s string) (int64, bool) {
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if i == len(s) {
		return 0, false
	}
	var n int64
	for ; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
		if n > 1<<31 {
			return 0, false
		}
	}
	if neg {
		n = -n
	}
	if n > 1<<31-1 || n < -(1<<31) {
		return 0, false
	}
	return n, true
}

// jsonbContainsTop is jsonb @> jsonb (JsonbDeepContains): the top-level
// kinds must agree, except that an array may contain a top-level scalar.
func jsonbContainsTop(x, y *types.JSONValue) bool {
	if (x.Kind == types.JSONObject) != (y.Kind == types.JSONObject) {
		return false
	}
	xs, ys := x.Kind < types.JSONArray, y.Kind < types.JSONArray
	switch {
	case xs && ys:
		return jsonScalarEqual(x, y)
	case xs:
		return false
	case ys:
		y = &types.JSONValue{Kind: types.JSONArray, Elems: []*types.JSONValue{y}}
	}
	return jsonbContains(x, y)
}

// jsonbContains reports whether container x contains container y of the
// same kind: every pair of y is in x (values contained recursively), or
// every element of y is matched by some element of x.
func jsonbContains(x, y *types.JSONValue) bool {
	if x.Kind != y.Kind {
		return false
	}
	if x.Kind == types.JSONObject {
		for i, k := range y.Keys {
			xv := jsonObjectField(x, k)
			if xv == nil {
				return false
			}
			yv := y.Vals[i]
			if xv.Kind != yv.Kind {
				return false
			}
			if yv.Kind < types.JSONArray {
				if !jsonScalarEqual(xv, yv) {
					return false
				}
			} else if !jsonbContains(xv, yv) {
				return false
			}
		}
		return true
	}
	for _, ye := range y.Elems {
		found := false
		for _, xe := range x.Elems {
			if ye.Kind < types.JSONArray {
				found = xe.Kind == ye.Kind && jsonScalarEqual(xe, ye)
			} else {
				found = jsonbContains(xe, ye)
			}
			if found {
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func jsonScalarEqual(x, y *types.JSONValue) bool {
	if x.Kind != y.Kind {
		return false
	}
	switch x.Kind {
	case types.JSONString:
		return x.Str == y.Str
	case types.JSONNumber:
		return types.CompareJSONB(x.Str, y.Str) == 0
	case types.JSONBool:
		return x.Bool == y.Bool
	}
	return true
}

// jsonbConcat is jsonb || jsonb (IteratorConcat): two objects merge (the
// right side's keys win); otherwise both sides become element lists (an
// array its elements, an object or a scalar itself) and concatenate.
func jsonbConcat(x, y *types.JSONValue) (types.Datum, error) {
	if x.Kind == types.JSONObject && y.Kind == types.JSONObject {
		out := &types.JSONValue{Kind: types.JSONObject}
		out.Keys = append(append(out.Keys, x.Keys...), y.Keys...)
		out.Vals = append(append(out.Vals, x.Vals...), y.Vals...)
		return types.ParseJSONB(out.JSONBText())
	}
	elems := func(v *types.JSONValue) []*types.JSONValue {
		if v.Kind == types.JSONArray {
			return v.Elems
		}
		return []*types.JSONValue{v}
	}
	out := &types.JSONValue{Kind: types.JSONArray}
	out.Elems = append(append(out.Elems, elems(x)...), elems(y)...)
	return out.JSONBText(), nil
}

// jsonbDeleteKeys is jsonb - text and jsonb - text[]: object members with
// those keys, or array string elements with those values, are removed.
func jsonbDeleteKeys(v *types.JSONValue, keys []types.Datum) (types.Datum, error) {
	if v.Kind < types.JSONArray {
		return nil, EvalError(StateInvalidParameterValue, "cannot delete from scalar")
	}
	drop := func(s string) bool {
		for _, k := range keys {
			if k != nil && k.(string) == s {
				return true
			}
		}
		return false
	}
	if v.Kind == types.JSONObject {
		out := &types.JSONValue{Kind: types.JSONObject}
		for i, k := range v.Keys {
			if !drop(k) {
				out.Keys, out.Vals = append(out.Keys, k), append(out.Vals, v.Vals[i])
			}
		}
		return out.JSONBText(), nil
	}
	out := &types.JSONValue{Kind: types.JSONArray}
	for _, e := range v.Elems {
		if e.Kind != types.JSONString || !drop(e.Str) {
			out.Elems = append(out.Elems, e)
		}
	}
	return out.JSONBText(), nil
}

// jsonbDeleteIndex is jsonb - int (jsonb_delete_idx).
func jsonbDeleteIndex(v *types.JSONValue, i int64) (types.Datum, error) {
	switch v.Kind {
	case types.JSONObject:
		return nil, EvalError(StateInvalidParameterValue, "cannot delete from object using integer index")
	case types.JSONArray:
	default:
		return nil, EvalError(StateInvalidParameterValue, "cannot delete from scalar")
	}
	n := int64(len(v.Elems))
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return v.JSONBText(), nil
	}
	out := &types.JSONValue{Kind: types.JSONArray}
	out.Elems = append(append(out.Elems, v.Elems[:i]...), v.Elems[i+1:]...)
	return out.JSONBText(), nil
}

// jsonbSetPath is setPath: it replaces (newValue non-nil) or deletes
// (newValue nil) the value at path; with create, a missing last key is
// added and an index past either end of an array prepends or appends. A
// path through a missing member or a scalar changes nothing.
func jsonbSetPath(v *types.JSONValue, path []types.Datum, level int, newValue *types.JSONValue, create bool) (*types.JSONValue, error) {
	if level >= len(path) {
		return v, nil
	}
	if path[level] == nil {
		return nil, EvalError(StateNullValueNotAllowed, "path element at position %d is null", level+1)
	}
	step := path[level].(string)
	last := level == len(path)-1
	switch v.Kind {
	case types.JSONObject:
		out := &types.JSONValue{Kind: types.JSONObject}
		found := false
		for i, k := range v.Keys {
			if k != step {
				out.Keys, out.Vals = append(out.Keys, k), append(out.Vals, v.Vals[i])
				continue
			}
			found = true
			if last {
				if newValue != nil {
					out.Keys, out.Vals = append(out.Keys, k), append(out.Vals, newValue)
				}
				continue
			}
			sub, err := jsonbSetPath(v.Vals[i], path, level+1, newValue, create)
			if err != nil {
				return nil, err
			}
			out.Keys, out.Vals = append(out.Keys, k), append(out.Vals, sub)
		}
		if !found && last && create && newValue != nil {
			out.Keys, out.Vals = append(out.Keys, step), append(out.Vals, newValue)
		}
		return out, nil
	case types.JSONArray:
		i, ok := strtolInt32(step)
		if !ok {
			return nil, EvalError(StateInvalidTextRepr, "path element at position %d is not an integer: \"%s\"", level+1, step)
		}
		n := int64(len(v.Elems))
		if i < 0 {
			i += n
		}
		out := &types.JSONValue{Kind: types.JSONArray}
		if i < 0 || i >= n {
			out.Elems = v.Elems
			if last && create && newValue != nil {
				if i < 0 {
					out.Elems = append([]*types.JSONValue{newValue}, v.Elems...)
				} else {
					out.Elems = append(append([]*types.JSONValue{}, v.Elems...), newValue)
				}
			}
			return out, nil
		}
		for j, e := range v.Elems {
			if int64(j) != i {
				out.Elems = append(out.Elems, e)
				continue
			}
			if last {
				if newValue != nil {
					out.Elems = append(out.Elems, newValue)
				}
				continue
			}
			sub, err := jsonbSetPath(e, path, level+1, newValue, create)
			if err != nil {
				return nil, err
			}
			out.Elems = append(out.Elems, sub)
		}
		return out, nil
	}
	return v, nil
}
