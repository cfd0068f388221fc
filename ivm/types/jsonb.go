package types

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"
)

// JSONKind is the kind of one JSON value. The order of the constants is
// PostgreSQL's jbvType order, which its jsonb btree comparison uses
// between values of different kinds: null < string < number < boolean <
// array < object.
type JSONKind uint8

// JSON value kinds, in jsonb comparison order.
const (
	JSONNull JSONKind = iota
	JSONString
	JSONNumber
	JSONBool
	JSONArray
	JSONObject
)

// JSONValue is a parsed JSON document. Objects parsed from jsonb text keep
// jsonb's storage order (keys by length, then bytes; no duplicates), since
// the canonical text is written in that order.
type JSONValue struct {
	Kind JSONKind
	// Str is a string's value or a number's text.
	Str  string
	Bool bool
	// Elems are an array's elements.
	Elems []*JSONValue
	// Keys and Vals are an object's members, in document order.
	Keys []string
	Vals []*JSONValue
}

// ParseJSONValue parses valid JSON text (json input already validated, or
// jsonb canonical text) into a tree.
func ParseJSONValue(s string) (*JSONValue, error) {
	p := jsonParser{s: s}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, p.fail()
	}
	return v, nil
}

type jsonParser struct {
	s string
	i int
}

func (p *jsonParser) fail() error {
	return InputError(StateInvalidTextRepresentation, "invalid input syntax for type json")
}

func (p *jsonParser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value() (*JSONValue, error) {
	p.space()
	if p.i >= len(p.s) {
		return nil, p.fail()
	}
	switch c := p.s[p.i]; {
	case c == '{':
		p.i++
		v := &JSONValue{Kind: JSONObject}
		p.space()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return v, nil
		}
		for {
			p.space()
			if p.i >= len(p.s) || p.s[p.i] != '"' {
				return nil, p.fail()
			}
			k, err := p.str()
			if err != nil {
				return nil, err
			}
			p.space()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return nil, p.fail()
			}
			p.i++
			e, err := p.value()
			if err != nil {
				return nil, err
			}
			v.Keys = append(v.Keys, k)
			v.Vals = append(v.Vals, e)
			p.space()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.s) && p.s[p.i] == '}' {
				p.i++
				return v, nil
			}
			return nil, p.fail()
		}
	case c == '[':
		p.i++
		v := &JSONValue{Kind: JSONArray}
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return v, nil
		}
		for {
			e, err := p.value()
			if err != nil {
				return nil, err
			}
			v.Elems = append(v.Elems, e)
			p.space()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.s) && p.s[p.i] == ']' {
				p.i++
				return v, nil
			}
			return nil, p.fail()
		}
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return &JSONValue{Kind: JSONString, Str: s}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.i
		for p.i < len(p.s) && strings.IndexByte("+-.eE0123456789", p.s[p.i]) >= 0 {
			p.i++
		}
		return &JSONValue{Kind: JSONNumber, Str: p.s[start:p.i]}, nil
	case strings.HasPrefix(p.s[p.i:], "true"):
		p.i += 4
		return &JSONValue{Kind: JSONBool, Bool: true}, nil
	case strings.HasPrefix(p.s[p.i:], "false"):
		p.i += 5
		return &JSONValue{Kind: JSONBool}, nil
	case strings.HasPrefix(p.s[p.i:], "null"):
		p.i += 4
		return &JSONValue{Kind: JSONNull}, nil
	}
	return nil, p.fail()
}

// str reads a quoted string at p.i, decoding escapes.
func (p *jsonParser) str() (string, error) {
	p.i++ // opening quote
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return "", p.fail()
			}
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, ok := p.hex4()
				if !ok {
					return "", p.fail()
				}
				if r >= 0xD800 && r < 0xDC00 && strings.HasPrefix(p.s[p.i:], `\u`) {
					p.i += 2
					lo, ok := p.hex4()
					if !ok {
						return "", p.fail()
					}
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				}
				b.WriteRune(r)
			default:
				return "", p.fail()
			}
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return "", p.fail()
}

func (p *jsonParser) hex4() (rune, bool) {
	if p.i+4 > len(p.s) {
		return 0, false
	}
	v, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(v), true
}

// JSONBText renders a tree as jsonb's canonical output (", " and ": "
// separators, numbers as written in the tree).
func (v *JSONValue) JSONBText() string {
	var b strings.Builder
	v.appendJSONB(&b)
	return b.String()
}

func (v *JSONValue) appendJSONB(b *strings.Builder) {
	switch v.Kind {
	case JSONNull:
		b.WriteString("null")
	case JSONBool:
		b.WriteString(strconv.FormatBool(v.Bool))
	case JSONNumber:
		b.WriteString(v.Str)
	case JSONString:
		b.WriteString(QuoteJSON(v.Str))
	case JSONArray:
		b.WriteByte('[')
		for i, e := range v.Elems {
			if i > 0 {
				b.WriteString(", ")
			}
			e.appendJSONB(b)
		}
		b.WriteByte(']')
	case JSONObject:
		b.WriteByte('{')
		for i, k := range v.Keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(QuoteJSON(k))
			b.WriteString(": ")
			v.Vals[i].appendJSONB(b)
		}
		b.WriteByte('}')
	}
}

// QuoteJSON quotes s as a JSON string the way PostgreSQL's escape_json does.
func QuoteJSON(s string) string {
	var b bytes.Buffer
	writeJSONString(&b, s)
	return b.String()
}

// CompareJSONB orders two jsonb values (canonical text) as PostgreSQL's
// jsonb btree operator class does (compareJsonbContainers): values of
// different kinds by kind (null < string < number < boolean < array <
// object); arrays by element count, then element by element; objects by
// pair count, then pair by pair in storage order (key, then value);
// strings bytewise (the C collation); numbers numerically (1.0 = 1.00).
// A top-level scalar is stored as a one-element "raw scalar" array, which
// makes an empty top-level array sort below every scalar, and a scalar
// below a one-element array.
func CompareJSONB(a, b string) int {
	if a == b {
		return 0
	}
	x, err := ParseJSONValue(a)
	if err != nil {
		panic(fmt.Sprintf("types.CompareJSONB: corrupt jsonb %q: %v", a, err))
	}
	y, err := ParseJSONValue(b)
	if err != nil {
		panic(fmt.Sprintf("types.CompareJSONB: corrupt jsonb %q: %v", b, err))
	}
	return compareJSONTop(x, y)
}

// compareJSONTop compares top-level values, where scalars are raw-scalar
// pseudo arrays of one element.
func compareJSONTop(x, y *JSONValue) int {
	xs, ys := x.Kind < JSONArray, y.Kind < JSONArray
	if xs && ys {
		return compareJSONValues(x, y)
	}
	if x.Kind == JSONObject || y.Kind == JSONObject {
		return compareJSONValues(x, y)
	}
	// Both are (pseudo) arrays.
	nx, ny := 1, 1
	if !xs {
		nx = len(x.Elems)
	}
	if !ys {
		ny = len(y.Elems)
	}
	if nx != ny {
		return cmpInt(int64(nx), int64(ny))
	}
	if xs != ys {
		// NB: compareJsonbContainers lets the element count override the
		// raw-scalar flag; with equal counts the raw scalar sorts first.
		if xs {
			return -1
		}
		return 1
	}
	return compareJSONValues(x, y)
}

// compareJSONValues compares two values below the top level.
func compareJSONValues(x, y *JSONValue) int {
	if x.Kind != y.Kind {
		return cmpInt(int64(x.Kind), int64(y.Kind))
	}
	switch x.Kind {
	case JSONNull:
		return 0
	case JSONString:
		return strings.Compare(x.Str, y.Str)
	case JSONNumber:
		return CompareNumeric(jsonNumber(x.Str), jsonNumber(y.Str))
	case JSONBool:
		switch {
		case x.Bool == y.Bool:
			return 0
		case !x.Bool:
			return -1
		}
		return 1
	case JSONArray:
		if len(x.Elems) != len(y.Elems) {
			return cmpInt(int64(len(x.Elems)), int64(len(y.Elems)))
		}
		for i := range x.Elems {
			if c := compareJSONValues(x.Elems[i], y.Elems[i]); c != 0 {
				return c
			}
		}
		return 0
	}
	if len(x.Keys) != len(y.Keys) {
		return cmpInt(int64(len(x.Keys)), int64(len(y.Keys)))
	}
	for i := range x.Keys {
		if c := strings.Compare(x.Keys[i], y.Keys[i]); c != 0 {
			return c
		}
		if c := compareJSONValues(x.Vals[i], y.Vals[i]); c != 0 {
			return c
		}
	}
	return 0
}

func jsonNumber(s string) *apd.Decimal {
	d, err := ParseNumeric(s)
	if err != nil {
		panic(fmt.Sprintf("types: corrupt jsonb number %q: %v", s, err))
	}
	return d
}

// JSONBHashText is a text that is equal for two jsonb values exactly when
// CompareJSONB says they are equal: the canonical text with every number
// reduced (1.50 and 1.5 hash alike, as they compare equal).
func JSONBHashText(s string) string {
	if !strings.ContainsAny(s, ".") {
		// NB: canonical numbers have no exponent; only a fraction can
		// carry trailing zeros, so text without '.' is already reduced.
		return s
	}
	v, err := ParseJSONValue(s)
	if err != nil {
		panic(fmt.Sprintf("types.JSONBHashText: corrupt jsonb %q: %v", s, err))
	}
	reduceJSONNumbers(v)
	return v.JSONBText()
}

func reduceJSONNumbers(v *JSONValue) {
	switch v.Kind {
	case JSONNumber:
		d := jsonNumber(v.Str)
		var r apd.Decimal
		r.Reduce(d)
		v.Str = r.Text('f')
	case JSONArray:
		for _, e := range v.Elems {
			reduceJSONNumbers(e)
		}
	case JSONObject:
		for _, e := range v.Vals {
			reduceJSONNumbers(e)
		}
	}
}
