package keyenc

import (
	"fmt"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/ivm/types"
)

// jsonb keys follow types.CompareJSONB (PostgreSQL's jsonb btree order).
// Each value is a kind byte in jbvType order, then:
//
//	null                 nothing
//	string               escaped bytes (as text)
//	number               the numeric encoding (1.0 and 1.00 share a key)
//	boolean              1 byte 0/1
//	array                4-byte element count, then the elements
//	object               4-byte pair count, then escaped key and value pairs
//
// A top-level scalar is encoded as PostgreSQL stores it, a one-element
// "raw scalar" array: the array kind, count 1, a raw byte 0, the value; a
// top-level array has raw byte 1 after its count. The count comes first
// because it decides before the raw flag (an empty array sorts below
// every scalar).
const (
	jsonKeyNull   = 0x00
	jsonKeyString = 0x01
	jsonKeyNumber = 0x02
	jsonKeyBool   = 0x03
	jsonKeyArray  = 0x10
	jsonKeyObject = 0x11
)

func appendJSONB(dst []byte, s string) []byte {
	v, err := types.ParseJSONValue(s)
	if err != nil {
		panic(fmt.Sprintf("keyenc: corrupt jsonb %q: %v", s, err))
	}
	switch v.Kind {
	case types.JSONArray:
		dst = append(dst, jsonKeyArray)
		dst = appendUint32(dst, uint32(len(v.Elems)))
		dst = append(dst, 1)
		for _, e := range v.Elems {
			dst = appendJSONValue(dst, e)
		}
		return dst
	case types.JSONObject:
		return appendJSONValue(dst, v)
	}
	dst = append(dst, jsonKeyArray)
	dst = appendUint32(dst, 1)
	dst = append(dst, 0)
	return appendJSONValue(dst, v)
}

func appendJSONValue(dst []byte, v *types.JSONValue) []byte {
	switch v.Kind {
	case types.JSONNull:
		return append(dst, jsonKeyNull)
	case types.JSONString:
		return appendEscaped(append(dst, jsonKeyString), v.Str)
	case types.JSONNumber:
		d, err := types.ParseNumeric(v.Str)
		if err != nil {
			panic(fmt.Sprintf("keyenc: corrupt jsonb number %q: %v", v.Str, err))
		}
		return appendNumeric(append(dst, jsonKeyNumber), d)
	case types.JSONBool:
		if v.Bool {
			return append(dst, jsonKeyBool, 1)
		}
		return append(dst, jsonKeyBool, 0)
	case types.JSONArray:
		dst = appendUint32(append(dst, jsonKeyArray), uint32(len(v.Elems)))
		for _, e := range v.Elems {
			dst = appendJSONValue(dst, e)
		}
		return dst
	}
	dst = appendUint32(append(dst, jsonKeyObject), uint32(len(v.Keys)))
	for i, k := range v.Keys {
		dst = appendEscaped(dst, k)
		dst = appendJSONValue(dst, v.Vals[i])
	}
	return dst
}

// jsonb decodes a jsonb key back to canonical text (numbers reduced).
func (r *reader) jsonb() types.Datum {
	switch r.byte1() {
	case jsonKeyArray:
		n := r.u32()
		raw := r.byte1()
		if raw == 0 {
			if n != 1 {
				r.fail("jsonb raw scalar with %d elements", n)
				return nil
			}
			return r.jsonValue(0).JSONBText()
		}
		v := &types.JSONValue{Kind: types.JSONArray}
		for i := uint32(0); i < n && r.err == nil; i++ {
			v.Elems = append(v.Elems, r.jsonValue(1))
		}
		return v.JSONBText()
	case jsonKeyObject:
		return r.jsonObject(1).JSONBText()
	}
	r.fail("bad jsonb key kind")
	return nil
}

// jsonDepthMax bounds nesting while decoding a key, so corrupt input fails
// instead of exhausting the stack (PostgreSQL's own limit is the stack).
const jsonDepthMax = 10000

func (r *reader) jsonValue(depth int) *types.JSONValue {
	if depth > jsonDepthMax {
		r.fail("jsonb key nested too deeply")
		return &types.JSONValue{}
	}
	switch r.byte1() {
	case jsonKeyNull:
		return &types.JSONValue{Kind: types.JSONNull}
	case jsonKeyString:
		return &types.JSONValue{Kind: types.JSONString, Str: string(r.escaped())}
	case jsonKeyNumber:
		d, _ := r.numeric().(*apd.Decimal)
		if d == nil {
			return &types.JSONValue{}
		}
		return &types.JSONValue{Kind: types.JSONNumber, Str: string(types.AppendNumeric(nil, d))}
	case jsonKeyBool:
		return &types.JSONValue{Kind: types.JSONBool, Bool: r.byte1() == 1}
	case jsonKeyArray:
		n := r.u32()
		v := &types.JSONValue{Kind: types.JSONArray}
		for i := uint32(0); i < n && r.err == nil; i++ {
			v.Elems = append(v.Elems, r.jsonValue(depth+1))
		}
		return v
	case jsonKeyObject:
		return r.jsonObject(depth)
	}
	r.fail("bad jsonb value kind")
	return &types.JSONValue{}
}

func (r *reader) jsonObject(depth int) *types.JSONValue {
	n := r.u32()
	v := &types.JSONValue{Kind: types.JSONObject}
	for i := uint32(0); i < n && r.err == nil; i++ {
		v.Keys = append(v.Keys, string(r.escaped()))
		v.Vals = append(v.Vals, r.jsonValue(depth+1))
	}
	return v
}
