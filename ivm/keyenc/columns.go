package keyenc

import (
	"encoding/binary"
	"math"

	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// DecodeRowColumns decodes a row written by EncodeRow straight into column
// builders, one value per column ts[i] into dst[i], without boxing values
// into Datums: the columnar form of DecodeRow (the same values). Every
// type must be zset.Columnar; on error the builders hold a partial row
// and must be discarded.
func DecodeRowColumns(src []byte, ts []types.Type, dst []*zset.ColumnBuilder) error {
	r := rowReader{buf: src}
	bitmap := r.bytes((len(ts) + 7) / 8)
	if r.err != nil {
		return r.err
	}
	for i, t := range ts {
		b := dst[i]
		if bitmap[i/8]&(1<<(i%8)) != 0 {
			b.AppendNull()
			continue
		}
		switch t.Kind {
		case types.KindBool:
			v := r.bytes(1)
			if v == nil {
				return r.err
			}
			b.AppendBool(v[0] != 0)
		case types.KindInt2, types.KindInt4, types.KindInt8, types.KindDate, types.KindTime, types.KindTimestamp, types.KindTimestampTZ:
			b.AppendInt(r.varint())
		case types.KindFloat8:
			v := r.bytes(8)
			if v == nil {
				return r.err
			}
			b.AppendFloat(math.Float64frombits(binary.LittleEndian.Uint64(v)))
		case types.KindText, types.KindVarchar, types.KindChar, types.KindName, types.KindBytea:
			b.AppendBytes(r.bytes(r.length()))
		case types.KindUUID:
			v := r.bytes(16)
			if v == nil {
				return r.err
			}
			b.AppendBytes(v)
		default:
			r.fail("type %s has no columnar form", t)
		}
		if r.err != nil {
			return r.err
		}
	}
	if len(r.buf) != 0 {
		return corrupt("%d trailing bytes after row", len(r.buf))
	}
	return nil
}
