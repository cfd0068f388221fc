package op

import (
	"fmt"

	"github.com/rockstream/rockstream/ivm/types"
)

// BIT_AND, BIT_OR and BIT_XOR over int2/int4/int8 (PostgreSQL's result is
// the argument's type; NULL without a non-NULL input).
//
// BIT_AND and BIT_OR are not invertible as written, but counting, per bit,
// the live non-NULL rows that have it set is: bit_or is the bits counted at
// all, bit_and the bits counted in every row. A group's state is
// [nonNull, count of bit 0, …, count of bit width−1]. BIT_XOR is a group
// law already (each value is its own inverse): a row of weight w flips the
// accumulator by its value when w is odd, so the state is [nonNull, xor].
//
//	time | input (value, weight) | bit_or | bit_and | bit_xor
//	  0  | (5, +1) (3, +1)       |   7    |    1    |    6
//	  1  | (3, −1)               |   5    |    5    |    5

// isBitAgg reports BIT_AND, BIT_OR and BIT_XOR.
func isBitAgg(f AggFunc) bool { return f == AggBitAnd || f == AggBitOr || f == AggBitXor }

// bitWidth is the number of bits of an integer argument type.
func bitWidth(t types.Type) (int, error) {
	switch t.Kind {
	case types.KindInt2:
		return 16, nil
	case types.KindInt4:
		return 32, nil
	case types.KindInt8:
		return 64, nil
	}
	return 0, fmt.Errorf("bitwise aggregates of %s are not supported", t.SQLName())
}

// bitSlots is the state slots of a bit aggregate over t.
func bitSlots(f AggFunc, t types.Type) int {
	if f == AggBitXor {
		return 2
	}
	w, _ := bitWidth(t)
	return 1 + w
}

// emptyBitState appends a bit aggregate's empty state.
func emptyBitState(st types.Row, f AggFunc, t types.Type) types.Row {
	for range bitSlots(f, t) {
		st = append(st, int64(0))
	}
	return st
}

// bitAdd adds value v with weight w to the state at st.
func bitAdd(st types.Row, f AggFunc, t types.Type, v int64, w int64) {
	st[0] = st[0].(int64) + w
	if f == AggBitXor {
		if w%2 != 0 {
			st[1] = st[1].(int64) ^ v
		}
		return
	}
	width, _ := bitWidth(t)
	for b := range width {
		if v>>b&1 != 0 {
			st[1+b] = st[1+b].(int64) + w
		}
	}
}

// finalizeBits is the result of a bit aggregate from its state.
func finalizeBits(st types.Row, f AggFunc, t types.Type) types.Datum {
	nonNull := st[0].(int64)
	if nonNull == 0 {
		return nil
	}
	var v int64
	if f == AggBitXor {
		v = st[1].(int64)
	} else {
		width, _ := bitWidth(t)
		for b := range width {
			n := st[1+b].(int64)
			if (f == AggBitOr && n > 0) || (f == AggBitAnd && n == nonNull) {
				v |= 1 << b
			}
		}
	}
	// NB: the bits are the type's two's complement; sign-extend them.
	switch t.Kind {
	case types.KindInt2:
		v = int64(int16(v))
	case types.KindInt4:
		v = int64(int32(v))
	}
	return v
}

// streamBits is a bit aggregate over whole values and weights (the
// non-incremental form; DISTINCT passes each live value once).
func streamBits(f AggFunc, t types.Type, values []types.Datum, weights []int64) types.Datum {
	st := emptyBitState(nil, f, t)
	for i, v := range values {
		bitAdd(st, f, t, v.(int64), weights[i])
	}
	return finalizeBits(st, f, t)
}
