package types

import (
	"bytes"
	"encoding/json"
	"io"
	"sort"
	"strings"
)

// JSON input. json keeps the text as written (after validation); jsonb is
// stored in PostgreSQL's canonical output form: object keys sorted by
// length then bytes with the last duplicate winning, ", " and ": "
// separators, numbers printed as numeric.

// ParseJSON validates json text.
func ParseJSON(s string) (Datum, error) {
	if !json.Valid([]byte(s)) {
		return nil, InputError(StateInvalidTextRepresentation, "invalid input syntax for type json")
	}
	return s, nil
}

// ParseJSONB validates json text and returns jsonb's canonical text.
func ParseJSONB(s string) (Datum, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var b bytes.Buffer
	if err := canonicalJSON(dec, &b); err != nil {
		return nil, InputError(StateInvalidTextRepresentation, "invalid input syntax for type json")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, InputError(StateInvalidTextRepresentation, "invalid input syntax for type json")
	}
	return b.String(), nil
}

func canonicalJSON(dec *json.Decoder, b *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	return canonicalValue(dec, tok, b)
}

func canonicalValue(dec *json.Decoder, tok json.Token, b *bytes.Buffer) error {
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '[':
			b.WriteByte('[')
			first := true
			for dec.More() {
				if !first {
					b.WriteString(", ")
				}
				first = false
				if err := canonicalJSON(dec, b); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			b.WriteByte(']')
			return nil
		case '{':
			type member struct{ key, val string }
			var members []member
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				key, ok := kt.(string)
				if !ok {
					return io.ErrUnexpectedEOF
				}
				var vb bytes.Buffer
				if err := canonicalJSON(dec, &vb); err != nil {
					return err
				}
				members = append(members, member{key, vb.String()})
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			// Last duplicate wins; order by key length, then bytes.
			last := map[string]int{}
			for i, m := range members {
				last[m.key] = i
			}
			var kept []member
			for i, m := range members {
				if last[m.key] == i {
					kept = append(kept, m)
				}
			}
			sort.Slice(kept, func(i, j int) bool {
				if len(kept[i].key) != len(kept[j].key) {
					return len(kept[i].key) < len(kept[j].key)
				}
				return kept[i].key < kept[j].key
			})
			b.WriteByte('{')
			for i, m := range kept {
				if i > 0 {
					b.WriteString(", ")
				}
				writeJSONString(b, m.key)
				b.WriteString(": ")
				b.WriteString(m.val)
			}
			b.WriteByte('}')
			return nil
		}
		return io.ErrUnexpectedEOF
	case string:
		writeJSONString(b, v)
	case json.Number:
		d, err := ParseNumeric(string(v))
		if err != nil {
			return err
		}
		b.Write(AppendNumeric(nil, d))
	case bool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case nil:
		b.WriteString("null")
	}
	return nil
}

// writeJSONString escapes as PostgreSQL's escape_json does.
func writeJSONString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		default:
			if c < 0x20 {
				const hexDigits = "0123456789abcdef"
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xf])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}
