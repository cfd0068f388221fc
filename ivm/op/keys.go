package op

import (
	"github.com/rockstream/rockstream/ivm/keyenc"
	"github.com/rockstream/rockstream/ivm/types"
)

// Equality keys (group keys, join keys, distinct rows, partitions) use
// ivm/keyenc's memcomparable encoding: equal SQL values get equal bytes
// (1.0 = 1.00, 'a ' = 'a' for char(n), -0 = 0), and keys sort in SQL order.
// keyType widens types whose values share a Go representation so that,
// e.g., an int4 key equals an int8 key of the same value.
func keyType(t types.Type) types.Type {
	switch t.Kind {
	case types.KindInt2, types.KindInt4, types.KindInt8:
		return types.TInt8
	case types.KindFloat4, types.KindFloat8:
		return types.TFloat8
	case types.KindVarchar, types.KindName, types.KindUnknown:
		return types.TText
	}
	t.Typmod = -1
	return t
}

// keyTypes returns the key types of columns cols of schema.
func keyTypes(schema types.Schema, cols []int) []types.Type {
	out := make([]types.Type, len(cols))
	for i, c := range cols {
		out[i] = keyType(schema[c].Type)
	}
	return out
}

// allColumns returns 0..n-1.
func allColumns(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// appendKey appends the ascending key of row's columns cols.
func appendKey(dst []byte, ts []types.Type, row types.Row, cols []int) []byte {
	for i, c := range cols {
		dst = keyenc.EncodeColumn(dst, ts[i], row[c], keyenc.Asc)
	}
	return dst
}
