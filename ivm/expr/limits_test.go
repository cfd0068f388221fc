package expr

import (
	"testing"

	"github.com/rockstream/rockstream/errcode"
)

// TestValueLimits pins the limit checks at PostgreSQL's boundaries: a
// string buffer may hold at most MaxAllocSize - 1 bytes (enlargeStringInfo),
// an array MaxArraySize elements, and lpad/rpad/repeat check their
// requested size with the 4-byte header.
func TestValueLimits(t *testing.T) {
	refused := func(err error) bool {
		e, ok := errcode.As(err)
		return ok && e.State() == "54000" && e.Code == errcode.ValueTooLarge
	}
	if err := CheckTextGrowth(ValueBytesMax-10, 9); err != nil {
		t.Errorf("growth to the limit refused: %v", err)
	}
	if err := CheckTextGrowth(ValueBytesMax-10, 10); !refused(err) {
		t.Errorf("growth past the limit: %v", err)
	}
	if err := CheckArrayElements(ArrayElementsMax); err != nil {
		t.Errorf("an array at the limit refused: %v", err)
	}
	if err := CheckArrayElements(ArrayElementsMax + 1); !refused(err) {
		t.Errorf("an array past the limit: %v", err)
	}
	if lengthTooLarge(ValueBytesMax-4) || !lengthTooLarge(ValueBytesMax-3) || !lengthTooLarge(-1) {
		t.Error("lengthTooLarge boundaries")
	}
	if _, err := pad("x", 2147483647, "ab", true); !refused(err) {
		t.Errorf("lpad('x', 2147483647, 'ab'): %v", err)
	}
	if s, err := pad("x", 2147483647, "", true); err != nil || s != "x" {
		t.Errorf("lpad with an empty fill: %q, %v", s, err)
	}
}
