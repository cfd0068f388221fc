package wire

import (
	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/ivm/keyenc"
	"github.com/rockstream/rockstream/ivm/types"
)

// Rows are encoded with ivm/keyenc's row encoding, which needs each
// column's type; a message's rows carry no schema, so a one-byte header
// per column names the type its Go representation stands for (types.go's
// table: int64 → bigint, string → text, …). An array column adds its
// declared element type (kept exactly) and the element kind its values are
// encoded as: a declared element type may be unset (rows decoded by
// ivm/zset carry none).

// datumKind is the type kind a datum's Go value is encoded as.
func datumKind(d types.Datum) (types.Kind, bool) {
	switch d.(type) {
	case nil:
		return types.KindInvalid, true
	case bool:
		return types.KindBool, true
	case int64:
		return types.KindInt8, true
	case float64:
		return types.KindFloat8, true
	case *apd.Decimal:
		return types.KindNumeric, true
	case string:
		return types.KindText, true
	case []byte:
		return types.KindBytea, true
	case types.Date:
		return types.KindDate, true
	case types.TimeOfDay:
		return types.KindTime, true
	case types.Timestamp:
		return types.KindTimestamp, true
	case types.TimestampTZ:
		return types.KindTimestampTZ, true
	case types.Interval:
		return types.KindInterval, true
	case types.UUID:
		return types.KindUUID, true
	case types.Array:
		return types.KindArray, true
	}
	return 0, false
}

// row encodes a non-nil row: count, type headers, keyenc bytes.
func (e *encoder) row(row types.Row) {
	e.uvarint(uint64(len(row)))
	ts := make([]types.Type, len(row))
	for i, d := range row {
		k, ok := datumKind(d)
		if !ok {
			fail("wire: column %d holds %T, not a datum", i, d)
		}
		e.buf = append(e.buf, byte(k))
		ts[i] = types.Type{Kind: k, Typmod: -1}
		if k != types.KindArray {
			continue
		}
		a := d.(types.Array)
		e.typ(a.Elem, 0)
		elem := types.TText // all NULL: any kind will do
		for _, v := range a.Values {
			if v != nil {
				ek, ok := datumKind(v)
				if !ok || ek == types.KindArray {
					fail("wire: array element %T is not a scalar datum", v)
				}
				elem = types.Type{Kind: ek, Typmod: -1}
				break
			}
		}
		e.buf = append(e.buf, byte(elem.Kind))
		// keyenc decodes an array's values as a non-nil slice.
		if a.Values == nil {
			e.buf = append(e.buf, absent)
		} else {
			e.buf = append(e.buf, present)
		}
		ts[i].Elem = &elem
	}
	payload := keyenc.EncodeRow(nil, ts, row)
	e.uvarint(uint64(len(payload)))
	e.buf = append(e.buf, payload...)
}

// typ encodes a types.Type exactly (kind, typmod, element type).
func (e *encoder) typ(t types.Type, depth int) {
	if depth > depthMax {
		fail("wire: type nested deeper than %d", depthMax)
	}
	e.buf = append(e.buf, byte(t.Kind))
	e.varint(int64(t.Typmod))
	if t.Elem == nil {
		e.buf = append(e.buf, absent)
		return
	}
	e.buf = append(e.buf, present)
	e.typ(*t.Elem, depth+1)
}

func (d *decoder) typ(depth int) types.Type {
	if depth > depthMax {
		corrupt("type nested deeper than %d", depthMax)
	}
	t := types.Type{Kind: types.Kind(d.byte1())}
	typmod := d.varint()
	if typmod < -1<<31 || typmod >= 1<<31 {
		corrupt("typmod %d", typmod)
	}
	t.Typmod = int32(typmod)
	if d.flag() {
		elem := d.typ(depth + 1)
		t.Elem = &elem
	}
	return t
}

func (d *decoder) row() types.Row {
	n := d.length(1)
	ts := make([]types.Type, n)
	// arrays holds each array column's declared element type and whether
	// its values were nil.
	type arrayHeader struct {
		elem      types.Type
		nilValues bool
	}
	var arrays map[int]arrayHeader
	for i := range ts {
		ts[i] = types.Type{Kind: types.Kind(d.byte1()), Typmod: -1}
		if ts[i].Kind != types.KindArray {
			continue
		}
		h := arrayHeader{elem: d.typ(0)}
		elem := types.Type{Kind: types.Kind(d.byte1()), Typmod: -1}
		h.nilValues = !d.flag()
		ts[i].Elem = &elem
		if arrays == nil {
			arrays = map[int]arrayHeader{}
		}
		arrays[i] = h
	}
	payload := d.bytes()
	row, err := keyenc.DecodeRow(payload, ts, make(types.Row, 0, n))
	if err != nil {
		corrupt("row: %v", err)
	}
	if len(row) != n {
		corrupt("row of %d columns, header says %d", len(row), n)
	}
	for i := range row {
		if h, ok := arrays[i]; ok && row[i] != nil {
			a := row[i].(types.Array)
			a.Elem = h.elem
			if h.nilValues {
				if len(a.Values) != 0 {
					corrupt("array column %d has values but was sent without", i)
				}
				a.Values = nil
			}
			row[i] = a
		}
	}
	return row
}
