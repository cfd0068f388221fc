// Package assert states preconditions, postconditions and invariants
// (STYLE.md 9). A failed assertion is a programmer error or corrupt state:
// it panics with a *Failure, which crashes the process in production and
// fails the seed in simulation. Operating errors (a missing object, a full
// mailbox, bad SQL) are returned as errors, never asserted.
//
// Pair assertions across every durable or network boundary: assert before
// writing and again after reading.
//
// Walkthrough:
//
//	assert.That(batch.seq > db.lastSeq, "batch seq %d not above %d", batch.seq, db.lastSeq) // precondition
//	assert.Equal(len(keys), len(values), "keys vs values")
//	assert.NoError(err, "encoding a manifest we built")             // cannot fail unless we are broken
//	assert.Unreachable("illegal transition %s -> %s", from, to)     // state machines
package assert

import "fmt"

// Failure is the panic value of a failed assertion.
type Failure struct {
	Message string
}

func (f *Failure) Error() string { return "assertion failed: " + f.Message }

func fail(format string, args ...any) {
	panic(&Failure{Message: fmt.Sprintf(format, args...)})
}

// That panics unless cond holds.
func That(cond bool, format string, args ...any) {
	if !cond {
		fail(format, args...)
	}
}

// Equal panics unless got == want; what names the quantity.
func Equal[T comparable](got, want T, what string) {
	if got != want {
		fail("%s: got %v, want %v", what, got, want)
	}
}

// NoError panics if err is not nil: for errors that only a bug can cause.
func NoError(err error, what string) {
	if err != nil {
		fail("%s: %v", what, err)
	}
}

// Unreachable always panics: for impossible states and illegal transitions.
func Unreachable(format string, args ...any) {
	fail(format, args...)
}
