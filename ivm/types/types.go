// Package types is RockStream's SQL type system: PostgreSQL's types, their
// OIDs, and the Go representation of a value of each (a Datum).
//
// This file is the shared contract between the engine (ivm/), the compiler
// and the gateway; change it deliberately. The representations:
//
//	Kind          Go value of a non-NULL Datum
//	----          ----------------------------
//	Bool          bool
//	Int2/4/8      int64 (range enforced by the type: int2 holds -32768..32767)
//	Float4/8      float64 (float4 values are rounded to float32 precision)
//	Numeric       *apd.Decimal (never mutated after construction; NaN allowed)
//	Text/Varchar/Char/Name   string
//	Bytea         []byte (never mutated after construction)
//	Date          Date (days since 2000-01-01, PostgreSQL's epoch)
//	Time          TimeOfDay (microseconds since midnight)
//	Timestamp     Timestamp (microseconds since 2000-01-01 00:00:00, no zone)
//	TimestampTZ   TimestampTZ (microseconds since 2000-01-01 00:00:00 UTC)
//	Interval      Interval{Months, Days, Micros}
//	UUID          UUID ([16]byte)
//	JSONB/JSON    string (canonical text)
//	OID/RegClass/RegType/RegProc/RegNamespace   int64
//	Array         Array{Elem: element Type, Values: []Datum (NULL = nil), Lower: 1}
//	Unknown       string (an untyped literal awaiting resolution)
//
// SQL NULL is the Go nil for every type.
package types

import (
	"fmt"
)

// Kind is a type family.
type Kind uint8

// Kinds. The zero value is KindInvalid.
const (
	KindInvalid Kind = iota
	KindUnknown
	KindBool
	KindInt2
	KindInt4
	KindInt8
	KindFloat4
	KindFloat8
	KindNumeric
	KindText
	KindVarchar
	KindChar
	KindName
	KindBytea
	KindDate
	KindTime
	KindTimestamp
	KindTimestampTZ
	KindInterval
	KindUUID
	KindJSON
	KindJSONB
	KindOID
	KindRegClass
	KindRegType
	KindRegProc
	KindRegNamespace
	KindArray
	// KindRecord is an anonymous row type (ROW(...) values); used only inside
	// expressions.
	KindRecord
	// KindVoid is the result type of functions that return nothing.
	KindVoid
)

// Type is a SQL type: a kind, an optional type modifier and, for arrays, the
// element type.
type Type struct {
	Kind Kind
	// Typmod is PostgreSQL's atttypmod: -1 for none; varchar(n)/char(n): n+4;
	// numeric(p,s): ((p<<16)|s)+4; timestamp(p): p.
	Typmod int32
	// Elem is the element type of an Array; nil otherwise.
	Elem *Type
}

// Commonly used types with no modifier.
//
//lint:immutable values of a constant table; never assigned after init.
var (
	TUnknown     = Type{Kind: KindUnknown, Typmod: -1}
	TBool        = Type{Kind: KindBool, Typmod: -1}
	TInt2        = Type{Kind: KindInt2, Typmod: -1}
	TInt4        = Type{Kind: KindInt4, Typmod: -1}
	TInt8        = Type{Kind: KindInt8, Typmod: -1}
	TFloat4      = Type{Kind: KindFloat4, Typmod: -1}
	TFloat8      = Type{Kind: KindFloat8, Typmod: -1}
	TNumeric     = Type{Kind: KindNumeric, Typmod: -1}
	TText        = Type{Kind: KindText, Typmod: -1}
	TVarchar     = Type{Kind: KindVarchar, Typmod: -1}
	TName        = Type{Kind: KindName, Typmod: -1}
	TBytea       = Type{Kind: KindBytea, Typmod: -1}
	TDate        = Type{Kind: KindDate, Typmod: -1}
	TTime        = Type{Kind: KindTime, Typmod: -1}
	TTimestamp   = Type{Kind: KindTimestamp, Typmod: -1}
	TTimestampTZ = Type{Kind: KindTimestampTZ, Typmod: -1}
	TInterval    = Type{Kind: KindInterval, Typmod: -1}
	TUUID        = Type{Kind: KindUUID, Typmod: -1}
	TJSONB       = Type{Kind: KindJSONB, Typmod: -1}
	TOID         = Type{Kind: KindOID, Typmod: -1}
)

// ArrayOf returns the array type with element elem.
func ArrayOf(elem Type) Type {
	e := elem
	return Type{Kind: KindArray, Typmod: -1, Elem: &e}
}

// Datum is one SQL value; nil is NULL. See the package comment for the Go
// type of each Kind.
type Datum = any

// Row is a tuple of datums, positionally matching a Schema.
type Row []Datum

// Column is a named, typed column.
type Column struct {
	Name     string
	Type     Type
	Nullable bool
}

// Schema is an ordered list of columns.
type Schema []Column

// Date is days since 2000-01-01.
type Date int32

// TimeOfDay is microseconds since midnight.
type TimeOfDay int64

// Timestamp is microseconds since 2000-01-01 00:00:00 (no time zone).
type Timestamp int64

// TimestampTZ is microseconds since 2000-01-01 00:00:00 UTC.
type TimestampTZ int64

// Interval is PostgreSQL's interval: months, days and microseconds kept apart
// because their lengths vary.
type Interval struct {
	Months int32
	Days   int32
	Micros int64
}

// UUID is a 16-byte UUID.
type UUID [16]byte

// Array is a one-dimensional SQL array.
type Array struct {
	Elem   Type
	Values []Datum
}

// Equal reports whether two types are the same type (modifiers included).
func (t Type) Equal(u Type) bool {
	if t.Kind != u.Kind || t.Typmod != u.Typmod {
		return false
	}
	if t.Elem == nil || u.Elem == nil {
		return t.Elem == nil && u.Elem == nil
	}
	return t.Elem.Equal(*u.Elem)
}

func (t Type) String() string { return t.SQLName() }

// kindInfo is the static description of a kind.
type kindInfo struct {
	name     string // PostgreSQL's format_type name
	oid      uint32
	arrayOID uint32
	typLen   int16 // pg_type.typlen: -1 varlena, -2 cstring
}

//lint:immutable a constant table; never assigned after init.
var kinds = [...]kindInfo{
	KindInvalid:      {"invalid", 0, 0, 0},
	KindUnknown:      {"unknown", 705, 0, -2},
	KindBool:         {"boolean", 16, 1000, 1},
	KindInt2:         {"smallint", 21, 1005, 2},
	KindInt4:         {"integer", 23, 1007, 4},
	KindInt8:         {"bigint", 20, 1016, 8},
	KindFloat4:       {"real", 700, 1021, 4},
	KindFloat8:       {"double precision", 701, 1022, 8},
	KindNumeric:      {"numeric", 1700, 1231, -1},
	KindText:         {"text", 25, 1009, -1},
	KindVarchar:      {"character varying", 1043, 1015, -1},
	KindChar:         {"character", 1042, 1014, -1},
	KindName:         {"name", 19, 1003, 64},
	KindBytea:        {"bytea", 17, 1001, -1},
	KindDate:         {"date", 1082, 1182, 4},
	KindTime:         {"time without time zone", 1083, 1183, 8},
	KindTimestamp:    {"timestamp without time zone", 1114, 1115, 8},
	KindTimestampTZ:  {"timestamp with time zone", 1184, 1185, 8},
	KindInterval:     {"interval", 1186, 1187, 16},
	KindUUID:         {"uuid", 2950, 2951, 16},
	KindJSON:         {"json", 114, 199, -1},
	KindJSONB:        {"jsonb", 3802, 3807, -1},
	KindOID:          {"oid", 26, 1028, 4},
	KindRegClass:     {"regclass", 2205, 2210, 4},
	KindRegType:      {"regtype", 2206, 2211, 4},
	KindRegProc:      {"regproc", 24, 1008, 4},
	KindRegNamespace: {"regnamespace", 4089, 4090, 4},
	KindArray:        {"array", 0, 0, -1},
	KindRecord:       {"record", 2249, 2287, -1},
	KindVoid:         {"void", 2278, 0, 4},
}

// OID is the PostgreSQL type OID clients see (pg_type.oid).
func (t Type) OID() uint32 {
	if t.Kind == KindArray {
		if t.Elem == nil {
			return 0
		}
		return kinds[t.Elem.Kind].arrayOID
	}
	return kinds[t.Kind].oid
}

// TypLen is pg_type.typlen (RowDescription's type size).
func (t Type) TypLen() int16 { return kinds[t.Kind].typLen }

// SQLName is the type as PostgreSQL's format_type prints it, modifiers
// included (e.g. "character varying(10)", "numeric(10,2)", "integer[]").
func (t Type) SQLName() string {
	if t.Kind == KindArray {
		if t.Elem == nil {
			return "anyarray"
		}
		return t.Elem.SQLName() + "[]"
	}
	name := kinds[t.Kind].name
	if t.Typmod < 0 {
		return name
	}
	switch t.Kind {
	case KindVarchar, KindChar:
		return fmt.Sprintf("%s(%d)", name, t.Typmod-4)
	case KindNumeric:
		tm := t.Typmod - 4
		return fmt.Sprintf("numeric(%d,%d)", (tm>>16)&0xffff, tm&0xffff)
	case KindTimestamp:
		return fmt.Sprintf("timestamp(%d) without time zone", t.Typmod)
	case KindTimestampTZ:
		return fmt.Sprintf("timestamp(%d) with time zone", t.Typmod)
	case KindTime:
		return fmt.Sprintf("time(%d) without time zone", t.Typmod)
	case KindInterval:
		return name + intervalTypmodSuffix(t.Typmod)
	}
	return name
}

// FromOID maps a PostgreSQL type OID to a Type; ok is false for OIDs
// RockStream does not support.
func FromOID(oid uint32) (Type, bool) {
	for k := range kinds {
		info := kinds[k]
		if info.oid == oid && oid != 0 {
			return Type{Kind: Kind(k), Typmod: -1}, true
		}
		if info.arrayOID == oid && oid != 0 {
			return ArrayOf(Type{Kind: Kind(k), Typmod: -1}), true
		}
	}
	return Type{}, false
}

// IsNumeric reports integer, float and numeric kinds.
func (k Kind) IsNumeric() bool {
	switch k {
	case KindInt2, KindInt4, KindInt8, KindFloat4, KindFloat8, KindNumeric:
		return true
	}
	return false
}

// IsInteger reports int2/int4/int8.
func (k Kind) IsInteger() bool { return k == KindInt2 || k == KindInt4 || k == KindInt8 }

// IsString reports the character-string kinds.
func (k Kind) IsString() bool {
	return k == KindText || k == KindVarchar || k == KindChar || k == KindName
}
