package types

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/cockroachdb/apd/v3"
)

// Hash is a deterministic 64-bit hash of a datum, consistent with Equal:
// equal values hash equal (-0.0 and 0.0, all NaNs, 1.0 and 1.00, '1 mon' and
// '30 days', char(n) values differing only in trailing spaces). NULL hashes
// to a fixed value. The hash is stable across runs and platforms, so it may
// decide data placement (shards, partitions).
func Hash(t Type, d Datum) uint64 { return HashInto(hashSeed, t, d) }

// HashRow hashes a row column by column.
func HashRow(ts []Type, row Row) uint64 {
	h := hashSeed
	for i, t := range ts {
		h = HashInto(h, t, row[i])
	}
	return h
}

const (
	hashSeed  uint64 = 0x9e3779b97f4a7c15
	hashMul   uint64 = 0xbf58476d1ce4e5b9
	hashMul2  uint64 = 0x94d049bb133111eb
	nullHash  uint64 = 0x6a09e667f3bcc909
	nanHash   uint64 = 0x3c6ef372fe94f82b
	posInfKey uint64 = 0xa54ff53a5f1d36f1
	negInfKey uint64 = 0x510e527fade682d1
)

// mix folds v into h (a splitmix64-style finaliser over h^v).
func mix(h, v uint64) uint64 {
	x := h ^ v
	x ^= x >> 30
	x *= hashMul
	x ^= x >> 27
	x *= hashMul2
	x ^= x >> 31
	return x + hashSeed
}

// mixBytes folds a byte string (with its length) into h.
func mixBytes(h uint64, b []byte) uint64 {
	h = mix(h, uint64(len(b)))
	for len(b) >= 8 {
		h = mix(h, binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	if len(b) > 0 {
		var tail [8]byte
		copy(tail[:], b)
		h = mix(h, binary.LittleEndian.Uint64(tail[:]))
	}
	return h
}

func mixString(h uint64, s string) uint64 {
	h = mix(h, uint64(len(s)))
	for len(s) >= 8 {
		h = mix(h, uint64(s[0])|uint64(s[1])<<8|uint64(s[2])<<16|uint64(s[3])<<24|
			uint64(s[4])<<32|uint64(s[5])<<40|uint64(s[6])<<48|uint64(s[7])<<56)
		s = s[8:]
	}
	if len(s) > 0 {
		var v uint64
		for i := 0; i < len(s); i++ {
			v |= uint64(s[i]) << (8 * i)
		}
		h = mix(h, v)
	}
	return h
}

// HashInto folds the hash of one datum into h.
func HashInto(h uint64, t Type, d Datum) uint64 {
	if d == nil {
		return mix(h, nullHash)
	}
	switch t.Kind {
	case KindBool:
		if d.(bool) {
			return mix(h, 1)
		}
		return mix(h, 0)
	case KindInt2, KindInt4, KindInt8, KindOID, KindRegClass, KindRegType, KindRegProc, KindRegNamespace:
		return mix(h, uint64(d.(int64)))
	case KindFloat4, KindFloat8:
		return mix(h, hashFloat(d.(float64)))
	case KindNumeric:
		return hashNumeric(h, d.(*apd.Decimal))
	case KindText, KindVarchar, KindName, KindUnknown, KindJSON:
		return mixString(h, d.(string))
	case KindJSONB:
		return mixString(h, JSONBHashText(d.(string)))
	case KindChar:
		return mixString(h, TrimBpchar(d.(string)))
	case KindBytea:
		return mixBytes(h, d.([]byte))
	case KindDate:
		return mix(h, uint64(d.(Date)))
	case KindTime:
		return mix(h, uint64(d.(TimeOfDay)))
	case KindTimestamp:
		return mix(h, uint64(d.(Timestamp)))
	case KindTimestampTZ:
		return mix(h, uint64(d.(TimestampTZ)))
	case KindInterval:
		s := d.(Interval).Span()
		return mix(mix(h, uint64(s.Days)), uint64(s.Micros))
	case KindUUID:
		u := d.(UUID)
		return mix(mix(h, binary.LittleEndian.Uint64(u[:8])), binary.LittleEndian.Uint64(u[8:]))
	case KindArray:
		a := d.(Array)
		elem := a.Elem
		if t.Elem != nil {
			elem = *t.Elem
		}
		h = mix(h, uint64(len(a.Values)))
		for _, v := range a.Values {
			h = HashInto(h, elem, v)
		}
		return h
	}
	panic(fmt.Sprintf("types.Hash: unsupported type %s", t))
}

func hashFloat(f float64) uint64 {
	if math.IsNaN(f) {
		return nanHash
	}
	if f == 0 {
		return 0 // -0 == 0
	}
	return math.Float64bits(f)
}

func hashNumeric(h uint64, d *apd.Decimal) uint64 {
	switch d.Form {
	case apd.Infinite:
		if d.Negative {
			return mix(h, negInfKey)
		}
		return mix(h, posInfKey)
	case apd.NaN, apd.NaNSignaling:
		return mix(h, nanHash)
	}
	if d.IsZero() {
		return mix(h, 0)
	}
	// Strip trailing zeros so 1.0 and 1.00 hash alike. The common case (a
	// coefficient that fits in 64 bits) avoids allocating.
	exp := int64(d.Exponent)
	// INVARIANT: a reduced coefficient of at most 18 digits is mixed as an
	// integer, a longer one as its digit string, whichever path finds it.
	if d.Coeff.IsInt64() {
		c := d.Coeff.Int64()
		if c < 0 {
			c = -c
		}
		for c%10 == 0 {
			c /= 10
			exp++
		}
		if c < 1e18 {
			if d.Negative {
				c = -c
			}
			return mix(mix(h, uint64(c)), uint64(exp))
		}
	}
	// NB: trailing zeros are stripped on the decimal string rather than
	// with apd's Reduce, which divides by ten once per zero (quadratic on
	// values like 1e100000).
	exp = int64(d.Exponent)
	digits := d.Coeff.String()
	neg := d.Negative
	if digits[0] == '-' {
		digits = digits[1:]
		neg = true
	}
	n := len(digits)
	for n > 1 && digits[n-1] == '0' {
		n--
		exp++
	}
	digits = digits[:n]
	if len(digits) <= 18 {
		var c int64
		for i := 0; i < len(digits); i++ {
			c = c*10 + int64(digits[i]-'0')
		}
		if neg {
			c = -c
		}
		return mix(mix(h, uint64(c)), uint64(exp))
	}
	h = mix(h, uint64(exp)+0x51)
	if neg {
		h = mix(h, 1)
	}
	return mixString(h, digits)
}
