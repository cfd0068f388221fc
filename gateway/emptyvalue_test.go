package gateway

import (
	"fmt"
	"testing"
)

// TestEmptyTextIsNotNull: a row whose values all encode to zero bytes
// (empty text) was sent as NULLs (the empty slice of a nil scratch buffer is
// nil, and DataRow sends nil as NULL); found by the differential test
// (seed 5864947644256968059).
func TestEmptyTextIsNotNull(t *testing.T) {
	c := connectGateway(t, "")
	rows, _ := execOne(t, c, "SELECT ''::text, NULL::text, ''::text")
	if got := fmt.Sprint(rows); got != "[[ <null> ]]" {
		t.Fatalf("SELECT '', NULL, '': got %q, want [[ <null> ]]", got)
	}
}
