package expr

import (
	"github.com/rockstream/rockstream/errcode"
)

// Limits on values a user's input controls. A statement may ask for a
// value of any size (lpad('x', 2147483647), a string_agg over a huge
// group); PostgreSQL refuses anything over 1 GB with 54000 instead of
// trying, and so do we: building it first would kill the process with Go's
// unrecoverable "fatal error: out of memory" for every session.
const (
	// ValueBytesMax is the largest value in bytes, PostgreSQL's
	// MaxAllocSize (1 GB - 1); a text value counts its 4-byte header.
	ValueBytesMax = 1<<30 - 1
	// valueHeaderBytes is PostgreSQL's varlena header (VARHDRSZ), part of
	// the size it checks against ValueBytesMax.
	valueHeaderBytes = 4
	// encodingCharBytesMax is the longest UTF-8 character: lpad and rpad
	// check their worst-case output size, as PostgreSQL does.
	encodingCharBytesMax = 4
	// ArrayElementsMax is PostgreSQL's MaxArraySize (MaxAllocSize / 8).
	ArrayElementsMax = ValueBytesMax / 8
)

// errRequestedLengthTooLarge is PostgreSQL's answer when a length argument
// (lpad, rpad, repeat) asks for more than ValueBytesMax.
func errRequestedLengthTooLarge() error {
	return errcode.New(errcode.ValueTooLarge, "requested length too large")
}

// lengthTooLarge reports whether a value of n bytes plus its header
// exceeds ValueBytesMax (n may be the product of two user values, so it is
// checked for overflow by the callers' int64 arithmetic on int32 inputs).
func lengthTooLarge(n int64) bool { return n < 0 || n > ValueBytesMax-valueHeaderBytes }

// CheckTextGrowth refuses to append more bytes to a value of have bytes
// when the result would exceed ValueBytesMax: PostgreSQL's string buffer
// answer (54000 "out of memory"), raised before the allocation.
func CheckTextGrowth(have, more int) error {
	if more >= ValueBytesMax-have {
		return errcode.New(errcode.ValueTooLarge, "out of memory").
			WithDetail("Cannot enlarge string buffer containing %d bytes by %d more bytes.", have, more)
	}
	return nil
}

// CheckArrayElements refuses an array of n elements over ArrayElementsMax
// (PostgreSQL's ArrayGetNItems message).
func CheckArrayElements(n int) error {
	if n > ArrayElementsMax {
		return errcode.New(errcode.ValueTooLarge, "array size exceeds the maximum allowed (%d)", ArrayElementsMax)
	}
	return nil
}
