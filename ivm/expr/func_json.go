package expr

import (
	"math"
	"strings"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/ivm/types"
)

// jsonb functions. Results are built as JSON text and canonicalised by
// types.ParseJSONB (key order, last duplicate wins), as PostgreSQL's
// jsonb input does.

func registerJSON(add adder) {
	add(&Func{Name: "jsonb_typeof", Args: []types.Type{types.TJSONB}, Result: types.TText, Strict: true,
		Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
			v, err := jsonbValue(a[0])
			if err != nil {
				return nil, err
			}
			return [...]string{"null", "string", "number", "boolean", "array", "object"}[v.Kind], nil
		}})
	add(&Func{Name: "jsonb_array_length", Args: []types.Type{types.TJSONB}, Result: types.TInt4, Strict: true,
		Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
			v, err := jsonbValue(a[0])
			if err != nil {
				return nil, err
			}
			switch v.Kind {
			case types.JSONArray:
				return int64(len(v.Elems)), nil
			case types.JSONObject:
				return nil, EvalError(StateInvalidParameterValue, "cannot get array length of a non-array")
			}
			return nil, EvalError(StateInvalidParameterValue, "cannot get array length of a scalar")
		}})
	for _, asText := range []bool{false, true} {
		name, result := "jsonb_extract_path", types.TJSONB
		if asText {
			name, result = "jsonb_extract_path_text", types.TText
		}
		asText := asText
		// NB: VARIADIC text[] needs at least one path element; the
		// repeated last parameter stands for the rest.
		add(&Func{Name: name, Args: []types.Type{types.TJSONB, types.TText, types.TText}, Variadic: true, Result: result, Strict: true,
			Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
				v, err := jsonbValue(a[0])
				if err != nil {
					return nil, err
				}
				found, ok := jsonbPath(v, a[1:])
				if !ok {
					return nil, nil
				}
				return jsonbResult(found, asText), nil
			}})
	}
	jsonbSet := func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
		v, err := jsonbValue(a[0])
		if err != nil {
			return nil, err
		}
		if v.Kind < types.JSONArray {
			return nil, EvalError(StateInvalidParameterValue, "cannot set path in scalar")
		}
		nv, err := jsonbValue(a[2])
		if err != nil {
			return nil, err
		}
		create := len(a) < 4 || a[3].(bool)
		out, err := jsonbSetPath(v, a[1].(types.Array).Values, 0, nv, create)
		if err != nil {
			return nil, err
		}
		return types.ParseJSONB(out.JSONBText())
	}
	add(&Func{Name: "jsonb_set", Args: []types.Type{types.TJSONB, types.ArrayOf(types.TText), types.TJSONB}, Result: types.TJSONB, Strict: true, Eval: jsonbSet},
		&Func{Name: "jsonb_set", Args: []types.Type{types.TJSONB, types.ArrayOf(types.TText), types.TJSONB, types.TBool}, Result: types.TJSONB, Strict: true, Eval: jsonbSet})
	add(&Func{Name: "jsonb_pretty", Args: []types.Type{types.TJSONB}, Result: types.TText, Strict: true,
		Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
			v, err := jsonbValue(a[0])
			if err != nil {
				return nil, err
			}
			var b strings.Builder
			appendPretty(&b, v, 0)
			return b.String(), nil
		}})
	// The json builders keep the text they make: json_build_object's
	// " : " separators, numbers as their output functions print them.
	add(&Func{Name: "json_typeof", Args: []types.Type{{Kind: types.KindJSON, Typmod: -1}}, Result: types.TText, Strict: true,
		Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
			v, err := types.ParseJSONValue(a[0].(string))
			if err != nil {
				return nil, err
			}
			return [...]string{"null", "string", "number", "boolean", "array", "object"}[v.Kind], nil
		}})
	jsonType := types.Type{Kind: types.KindJSON, Typmod: -1}
	add(&Func{Name: "to_json", Args: []types.Type{anyType}, Result: jsonType, Strict: true, Volatility: Stable,
		Eval: func(env *Env, ts []types.Type, a []types.Datum) (types.Datum, error) {
			var b strings.Builder
			appendJSONDatum(&b, env, ts[0], a[0], ",")
			return b.String(), nil
		}})
	add(&Func{Name: "json_build_array", Args: []types.Type{anyType}, Variadic: true, Result: jsonType, Volatility: Stable,
		Eval: func(env *Env, ts []types.Type, a []types.Datum) (types.Datum, error) {
			var b strings.Builder
			b.WriteByte('[')
			for i := range a {
				if i > 0 {
					b.WriteString(", ")
				}
				appendJSONDatum(&b, env, ts[i], a[i], ",")
			}
			b.WriteByte(']')
			return b.String(), nil
		}})
	add(&Func{Name: "json_build_object", Args: []types.Type{anyType}, Variadic: true, Result: jsonType, Volatility: Stable,
		Eval: func(env *Env, ts []types.Type, a []types.Datum) (types.Datum, error) {
			if len(a)%2 != 0 {
				return nil, EvalError(StateInvalidParameterValue, "argument list must have even number of elements")
			}
			var b strings.Builder
			b.WriteByte('{')
			for i := 0; i < len(a); i += 2 {
				if a[i] == nil {
					return nil, EvalError(StateInvalidParameterValue, "argument %d cannot be null", i+1)
				}
				switch ts[i].Kind {
				case types.KindArray, types.KindJSON, types.KindJSONB, types.KindRecord:
					return nil, EvalError(StateInvalidParameterValue, "key value must be scalar, not array, composite, or json")
				}
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(types.QuoteJSON(types.FormatStyle(ts[i], a[i], jsonStyle(env))))
				b.WriteString(" : ")
				appendJSONDatum(&b, env, ts[i+1], a[i+1], ",")
			}
			b.WriteByte('}')
			return b.String(), nil
		}})
	add(&Func{Name: "jsonb_strip_nulls", Args: []types.Type{types.TJSONB}, Result: types.TJSONB, Strict: true,
		Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
			v, err := jsonbValue(a[0])
			if err != nil {
				return nil, err
			}
			stripNulls(v)
			return v.JSONBText(), nil
		}})
	add(&Func{Name: "to_jsonb", Args: []types.Type{anyType}, Result: types.TJSONB, Strict: true, Volatility: Stable,
		Eval: func(env *Env, ts []types.Type, a []types.Datum) (types.Datum, error) {
			var b strings.Builder
			appendToJSON(&b, env, ts[0], a[0])
			return types.ParseJSONB(b.String())
		}})
	add(&Func{Name: "jsonb_build_array", Args: []types.Type{anyType}, Variadic: true, Result: types.TJSONB, Volatility: Stable,
		Eval: func(env *Env, ts []types.Type, a []types.Datum) (types.Datum, error) {
			var b strings.Builder
			b.WriteByte('[')
			for i := range a {
				if i > 0 {
					b.WriteString(", ")
				}
				appendToJSON(&b, env, ts[i], a[i])
			}
			b.WriteByte(']')
			return types.ParseJSONB(b.String())
		}})
	add(&Func{Name: "jsonb_build_object", Args: []types.Type{anyType}, Variadic: true, Result: types.TJSONB, Volatility: Stable,
		Eval: func(env *Env, ts []types.Type, a []types.Datum) (types.Datum, error) {
			if len(a)%2 != 0 {
				return nil, EvalError(StateInvalidParameterValue, "argument list must have even number of elements")
			}
			var b strings.Builder
			b.WriteByte('{')
			for i := 0; i < len(a); i += 2 {
				if a[i] == nil {
					return nil, EvalError(StateInvalidParameterValue, "argument %d: key must not be null", i+1)
				}
				switch ts[i].Kind {
				case types.KindArray, types.KindJSON, types.KindJSONB, types.KindRecord:
					return nil, EvalError(StateInvalidParameterValue, "key value must be scalar, not array, composite, or json")
				}
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(types.QuoteJSON(types.FormatStyle(ts[i], a[i], jsonStyle(env))))
				b.WriteString(": ")
				appendToJSON(&b, env, ts[i+1], a[i+1])
			}
			b.WriteByte('}')
			return types.ParseJSONB(b.String())
		}})
}

// appendPretty writes v as jsonb_pretty does: one member or element per
// line, four spaces per level, an empty container's brackets on two lines.
func appendPretty(b *strings.Builder, v *types.JSONValue, level int) {
	indent := func(n int) {
		b.WriteByte('\n')
		b.WriteString(strings.Repeat("    ", n))
	}
	switch v.Kind {
	case types.JSONArray:
		b.WriteByte('[')
		for i, e := range v.Elems {
			if i > 0 {
				b.WriteByte(',')
			}
			indent(level + 1)
			appendPretty(b, e, level+1)
		}
		indent(level)
		b.WriteByte(']')
	case types.JSONObject:
		b.WriteByte('{')
		for i, k := range v.Keys {
			if i > 0 {
				b.WriteByte(',')
			}
			indent(level + 1)
			b.WriteString(types.QuoteJSON(k))
			b.WriteString(": ")
			appendPretty(b, v.Vals[i], level+1)
		}
		indent(level)
		b.WriteByte('}')
	default:
		b.WriteString(v.JSONBText())
	}
}

func stripNulls(v *types.JSONValue) {
	switch v.Kind {
	case types.JSONArray:
		for _, e := range v.Elems {
			stripNulls(e)
		}
	case types.JSONObject:
		keys, vals := v.Keys[:0], v.Vals[:0]
		for i, e := range v.Vals {
			if e.Kind == types.JSONNull {
				continue
			}
			stripNulls(e)
			keys, vals = append(keys, v.Keys[i]), append(vals, e)
		}
		v.Keys, v.Vals = keys, vals
	}
}

// appendToJSON writes d as JSON the way PostgreSQL's datum_to_jsonb does:
// numbers as numbers (non-finite ones as strings), booleans, json as is,
// arrays as arrays, timestamps in ISO 8601 with a T, anything else as its
// text output in a string.
func appendToJSON(b *strings.Builder, env *Env, t types.Type, d types.Datum) {
	appendJSONDatum(b, env, t, d, ", ")
}

// appendJSONDatum is appendToJSON with the separator of SQL array
// elements: json's to_json writes [1,2], jsonb's [1, 2].
func appendJSONDatum(b *strings.Builder, env *Env, t types.Type, d types.Datum, arraySep string) {
	if d == nil {
		b.WriteString("null")
		return
	}
	switch t.Kind {
	case types.KindInt2, types.KindInt4, types.KindInt8:
		b.WriteString(types.Format(t, d))
		return
	case types.KindFloat4, types.KindFloat8:
		if f := d.(float64); math.IsNaN(f) || math.IsInf(f, 0) {
			b.WriteString(types.QuoteJSON(types.Format(t, d)))
		} else {
			b.WriteString(types.FormatStyle(t, d, envStyle(env)))
		}
		return
	case types.KindNumeric:
		if n := d.(*apd.Decimal); n.Form != apd.Finite {
			b.WriteString(types.QuoteJSON(types.Format(t, d)))
		} else {
			b.WriteString(types.Format(t, d))
		}
		return
	case types.KindBool:
		if d.(bool) {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
		return
	case types.KindJSON, types.KindJSONB:
		b.WriteString(d.(string))
		return
	case types.KindArray:
		arr := d.(types.Array)
		elem := arr.Elem
		if t.Elem != nil {
			elem = *t.Elem
		}
		b.WriteByte('[')
		for i, e := range arr.Values {
			if i > 0 {
				b.WriteString(arraySep)
			}
			appendJSONDatum(b, env, elem, e, arraySep)
		}
		b.WriteByte(']')
		return
	case types.KindTimestamp, types.KindTimestampTZ:
		s := types.FormatTZ(t, d, envZone(env))
		if strings.Contains(s, "infinity") {
			b.WriteString(types.QuoteJSON(s))
			return
		}
		// XSD's form: a T between date and time, " BC" kept at the end.
		s, bc := strings.CutSuffix(s, " BC")
		s = strings.Replace(s, " ", "T", 1)
		if t.Kind == types.KindTimestampTZ {
			// The offset in full (+00:00), as XSD dates have it.
			if i := strings.LastIndexAny(s, "+-"); i > 10 && len(s)-i == 3 {
				s += ":00"
			}
		}
		if bc {
			s += " BC"
		}
		b.WriteString(types.QuoteJSON(s))
		return
	}
	b.WriteString(types.QuoteJSON(types.FormatStyle(t, d, jsonStyle(env))))
}

// AppendJSON writes d (of type t) as JSON the way PostgreSQL's to_json
// does, timestamps with time zone in UTC: connectors writing rows as JSON
// (the KAFKA sink) use it so a row reads as row_to_json would print it.
func AppendJSON(b *strings.Builder, t types.Type, d types.Datum) {
	appendToJSON(b, nil, t, d)
}

// JSONAggElement is one element of json_agg (jsonb false: written as
// to_json writes it, arrays as [1,2]) or jsonb_agg (as to_jsonb does).
func JSONAggElement(env *Env, t types.Type, d types.Datum, jsonb bool) string {
	var b strings.Builder
	if jsonb {
		appendToJSON(&b, env, t, d)
	} else {
		appendJSONDatum(&b, env, t, d, ",")
	}
	return b.String()
}

// JSONObjectAggField is one `key : value` field of json_object_agg
// (`"k" : v`) or jsonb_object_agg (`"k": v`): the key as a JSON string
// (numbers and booleans quoted), which must not be NULL (22023) nor an
// array or json (22023), as PostgreSQL's datum_to_json with a scalar key.
func JSONObjectAggField(env *Env, kt types.Type, k types.Datum, vt types.Type, v types.Datum, jsonb bool) (string, error) {
	if k == nil {
		return "", EvalError(StateInvalidParameterValue, "field name must not be null")
	}
	switch kt.Kind {
	case types.KindArray, types.KindJSON, types.KindJSONB, types.KindRecord:
		return "", EvalError(StateInvalidParameterValue, "key value must be scalar, not array, composite, or json")
	}
	var b strings.Builder
	appendJSONDatum(&b, env, kt, k, ",")
	key := b.String()
	if !strings.HasPrefix(key, `"`) {
		key = types.QuoteJSON(key)
	}
	b.Reset()
	b.WriteString(key)
	if jsonb {
		b.WriteString(": ")
		appendToJSON(&b, env, vt, v)
	} else {
		b.WriteString(" : ")
		appendJSONDatum(&b, env, vt, v, ",")
	}
	return b.String(), nil
}
