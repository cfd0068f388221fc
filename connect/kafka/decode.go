package kafka

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
	"github.com/rockstream/rockstream/ivm/types"
)

// decoder turns a record's value (and, for a tombstone, its key) into a
// row of the source's columns. Its errors are the text a dead letter
// carries.
type decoder struct {
	format  string
	columns []catalog.Column
	key     []int

	// Scratch state of jsonRow, reused between records: the column of
	// each field name, each column's raw field, and allColumns.
	byName map[string]int
	raws   []json.RawMessage
	all    []int
}

// row decodes a record's value into a full row.
func (d *decoder) row(value []byte) (types.Row, error) {
	switch d.format {
	case ddl.KafkaFormatJSON:
		return d.jsonRow(value, d.allColumns())
	case ddl.KafkaFormatCSV:
		return d.csvRow(value, d.allColumns())
	default:
		return d.textRow(value, d.allColumns())
	}
}

// keyOf decodes a tombstone's record key into the key columns' values:
// a JSON object with the key columns (or, for a one-column key, a bare
// JSON value or plain text), a CSV line of the key columns, or the key's
// text.
func (d *decoder) keyOf(key []byte) (types.Row, error) {
	if key == nil {
		return nil, fmt.Errorf("a record without a value (a tombstone) has no key either")
	}
	switch d.format {
	case ddl.KafkaFormatJSON:
		trimmed := bytes.TrimSpace(key)
		if len(trimmed) > 0 && trimmed[0] == '{' {
			return d.jsonRow(key, d.key)
		}
		if len(d.key) != 1 {
			return nil, fmt.Errorf("the key of a tombstone must be a JSON object with the %d key columns", len(d.key))
		}
		col := d.columns[d.key[0]]
		var raw json.RawMessage
		if json.Unmarshal(trimmed, &raw) == nil {
			v, err := jsonValue(col, raw)
			if err != nil {
				return nil, err
			}
			return d.keyRow(v)
		}
		v, err := textValue(col, string(key))
		if err != nil {
			return nil, err
		}
		return d.keyRow(v)
	case ddl.KafkaFormatCSV:
		return d.csvRow(key, d.key)
	default:
		return d.textRow(key, d.key)
	}
}

func (d *decoder) keyRow(v types.Datum) (types.Row, error) {
	if v == nil {
		return nil, fmt.Errorf("key column \"%s\" is null", d.columns[d.key[0]].Name)
	}
	return types.Row{v}, nil
}

func (d *decoder) allColumns() []int {
	if len(d.all) != len(d.columns) {
		d.all = make([]int, len(d.columns))
		for i := range d.all {
			d.all[i] = i
		}
	}
	return d.all
}

// jsonRow reads the columns at indexes from a JSON object by name. It is
// the hot path of a JSON source: it scans the object's top-level fields in
// place (after json.Valid) into a scratch slice reused between records,
// instead of unmarshalling each record into a map. jsonRowReference is
// the plain form it is tested against.
func (d *decoder) jsonRow(b []byte, indexes []int) (types.Row, error) {
	if d.byName == nil {
		d.byName = make(map[string]int, len(d.columns))
		for i, c := range d.columns {
			d.byName[c.Name] = i
		}
		d.raws = make([]json.RawMessage, len(d.columns))
	}
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		// Not an object, or malformed: the reference says exactly why.
		return d.jsonRowReference(b, indexes)
	}
	clear(d.raws)
	if err := scanJSONObject(trimmed, func(name []byte, raw json.RawMessage) {
		if at, ok := d.byName[string(name)]; ok {
			// NB: a repeated field's last value wins, as in encoding/json.
			d.raws[at] = raw
		}
	}); err != nil {
		return nil, err
	}
	out := make(types.Row, len(indexes))
	for i, at := range indexes {
		v, err := d.jsonColumn(at, d.raws[at], d.raws[at] != nil)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// jsonRowReference is jsonRow by encoding/json: the object unmarshalled
// into a map of its fields.
func (d *decoder) jsonRowReference(b []byte, indexes []int) (types.Row, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, fmt.Errorf("invalid JSON object: %v", err)
	}
	if fields == nil {
		return nil, fmt.Errorf("the value is JSON null, not an object")
	}
	out := make(types.Row, len(indexes))
	for i, at := range indexes {
		raw, ok := fields[d.columns[at].Name]
		v, err := d.jsonColumn(at, raw, ok)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// jsonColumn is the value of column at from its field (present false: the
// object has no such field).
func (d *decoder) jsonColumn(at int, raw json.RawMessage, present bool) (types.Datum, error) {
	col := d.columns[at]
	if !present {
		if col.NotNull {
			return nil, fmt.Errorf("key column \"%s\" is missing", col.Name)
		}
		return nil, nil
	}
	v, err := jsonValue(col, raw)
	if err != nil {
		return nil, err
	}
	if v == nil && col.NotNull {
		return nil, fmt.Errorf("key column \"%s\" is null", col.Name)
	}
	return v, nil
}

// scanJSONObject calls field with each top-level field of b, a valid JSON
// object (json.Valid), in order: its name (unescaped) and its raw value.
func scanJSONObject(b []byte, field func(name []byte, raw json.RawMessage)) error {
	i := skipJSONSpace(b, 1)
	if b[i] == '}' {
		return nil
	}
	for {
		end := skipJSONString(b, i)
		name := b[i+1 : end-1]
		if bytes.IndexByte(name, '\\') >= 0 || !utf8.Valid(name) {
			// NB: encoding/json unescapes and replaces invalid bytes.
			var s string
			if err := json.Unmarshal(b[i:end], &s); err != nil {
				return fmt.Errorf("invalid JSON object: %v", err)
			}
			name = []byte(s)
		}
		i = skipJSONSpace(b, end)
		// INVARIANT: b is valid JSON, so a name is followed by ':'.
		i = skipJSONSpace(b, i+1)
		end = skipJSONValue(b, i)
		field(name, b[i:end])
		i = skipJSONSpace(b, end)
		if b[i] == '}' {
			return nil
		}
		i = skipJSONSpace(b, i+1) // ','
	}
}

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipJSONString is the index after the string starting at b[i] ('"').
func skipJSONString(b []byte, i int) int {
	for i++; ; i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
}

// skipJSONValue is the index after the value starting at b[i].
func skipJSONValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipJSONString(b, i)
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch b[i] {
			case '"':
				i = skipJSONString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}

// jsonValue converts one JSON field to its column's type: a string is the
// value's text form, other scalars their JSON text (as json_populate_record
// reads them); objects and arrays only fill json, jsonb and text columns.
func jsonValue(col catalog.Column, raw json.RawMessage) (types.Datum, error) {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return nil, nil
	}
	switch col.Type.Kind {
	case types.KindJSON, types.KindJSONB:
		return parse(col, string(raw))
	}
	switch raw[0] {
	case '"':
		if inner := raw[1 : len(raw)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
			// NB: without escapes a valid UTF-8 string is its own
			// content (encoding/json would only replace invalid bytes).
			return textValue(col, string(inner))
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("column \"%s\": %v", col.Name, err)
		}
		return textValue(col, s)
	case '{', '[':
		if col.Type.Kind != types.KindText {
			return nil, fmt.Errorf("column \"%s\": a JSON %s does not convert to %s", col.Name, map[byte]string{'{': "object", '[': "array"}[raw[0]], col.Type.SQLName())
		}
	case 't', 'f':
		if col.Type.Kind != types.KindBool && col.Type.Kind != types.KindText {
			return nil, fmt.Errorf("column \"%s\": a JSON boolean does not convert to %s", col.Name, col.Type.SQLName())
		}
	}
	return parse(col, string(raw))
}

// textValue reads a value's text form, refusing what PostgreSQL's text
// cannot hold.
func textValue(col catalog.Column, s string) (types.Datum, error) {
	if !utf8.ValidString(s) {
		return nil, fmt.Errorf("column \"%s\": invalid byte sequence for encoding \"UTF8\"", col.Name)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return nil, fmt.Errorf("column \"%s\": invalid byte sequence for encoding \"UTF8\": 0x00", col.Name)
	}
	return parse(col, s)
}

func parse(col catalog.Column, s string) (types.Datum, error) {
	v, err := types.Parse(col.Type, s, nil)
	if err != nil {
		return nil, fmt.Errorf("column \"%s\": %v", col.Name, err)
	}
	return v, nil
}

// csvRow reads one CSV line with one field per column at indexes. As in
// COPY ... CSV, an unquoted empty field is NULL and a quoted one is the
// empty string.
func (d *decoder) csvRow(b []byte, indexes []int) (types.Row, error) {
	fields, quoted, err := splitCSV(b)
	if err != nil {
		return nil, err
	}
	if len(fields) != len(indexes) {
		return nil, fmt.Errorf("expected %d CSV fields, got %d", len(indexes), len(fields))
	}
	out := make(types.Row, len(indexes))
	for i, at := range indexes {
		col := d.columns[at]
		if fields[i] == "" && !quoted[i] {
			if col.NotNull {
				return nil, fmt.Errorf("key column \"%s\" is null", col.Name)
			}
			continue
		}
		v, err := textValue(col, fields[i])
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// splitCSV splits one CSV record (a trailing line break is dropped):
// fields separated by commas, a field in double quotes may hold commas,
// line breaks and doubled quotes.
func splitCSV(b []byte) (fields []string, quoted []bool, err error) {
	s := string(b)
	s = strings.TrimSuffix(strings.TrimSuffix(s, "\n"), "\r")
	var cur strings.Builder
	isQuoted := false
	for i := 0; ; {
		if i < len(s) && s[i] == '"' && cur.Len() == 0 && !isQuoted {
			isQuoted = true
			i++
			for {
				if i >= len(s) {
					return nil, nil, fmt.Errorf("unterminated CSV quoted field")
				}
				if s[i] == '"' {
					if i+1 < len(s) && s[i+1] == '"' {
						cur.WriteByte('"')
						i += 2
						continue
					}
					i++
					break
				}
				cur.WriteByte(s[i])
				i++
			}
			if i < len(s) && s[i] != ',' {
				return nil, nil, fmt.Errorf("extra data after CSV quoted field")
			}
		}
		if i >= len(s) || s[i] == ',' {
			fields = append(fields, cur.String())
			quoted = append(quoted, isQuoted)
			cur.Reset()
			isQuoted = false
			if i >= len(s) {
				return fields, quoted, nil
			}
			i++
			continue
		}
		if s[i] == '\n' || s[i] == '\r' {
			return nil, nil, fmt.Errorf("a CSV value holds one line (an unquoted line break)")
		}
		cur.WriteByte(s[i])
		i++
	}
}

// textRow is the text form of the single column at indexes.
func (d *decoder) textRow(b []byte, indexes []int) (types.Row, error) {
	v, err := textValue(d.columns[indexes[0]], string(b))
	if err != nil {
		return nil, err
	}
	return types.Row{v}, nil
}
