// Package errcode is the single registry of user-visible RockStream errors
// (spec §14.14, ARCHITECTURE.md §8).
//
// Every error a user can see carries a stable RS-xxxx code inside its owner's
// reserved range, a PostgreSQL SQLSTATE, a message and non-empty next steps.
// Over pgwire an *Error becomes an ErrorResponse: SQLSTATE in `code`, the RS
// code and slug in `detail`, next steps in `hint`.
//
// Codes are declared with Register in a file per owner area
// (codes_<area>.go); TestRegistry checks uniqueness, ranges and next steps.
package errcode

import (
	"errors"
	"fmt"
	"sort"
	"sync"
)

// Code is one registered error kind.
type Code struct {
	// ID is "RS-2001".
	ID string
	// Slug is "view.unsupported_sql_construct".
	Slug string
	// SQLState is the PostgreSQL SQLSTATE sent to clients, e.g. "0A000".
	SQLState string
	// NextSteps tells the user what to do about it. Never empty.
	NextSteps string
}

var (
	registryMu sync.Mutex
	registry   = map[string]*Code{}
)

// Register declares a code. It panics on a duplicate id (a programmer error
// caught by any test that imports the package).
func Register(id, slug, sqlState, nextSteps string) *Code {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[id]; dup {
		panic("errcode: duplicate code " + id)
	}
	c := &Code{ID: id, Slug: slug, SQLState: sqlState, NextSteps: nextSteps}
	registry[id] = c
	return c
}

// Lookup returns the registered code with id (e.g. "RS-2001"), so an error
// that crossed a process boundary as its id finds its code again.
func Lookup(id string) (*Code, bool) {
	registryMu.Lock()
	defer registryMu.Unlock()
	c, ok := registry[id]
	return c, ok
}

// All returns every registered code sorted by id.
func All() []*Code {
	registryMu.Lock()
	defer registryMu.Unlock()
	out := make([]*Code, 0, len(registry))
	for _, c := range registry { //lint:maprange sorted below
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Error is a user-visible error.
type Error struct {
	Code *Code
	// SQLState overrides Code.SQLState when set (e.g. one RS code for several
	// PostgreSQL error classes such as 22003/22012 evaluation errors).
	SQLState string
	// Message is the primary, human message (PostgreSQL style: lower case, no
	// trailing period).
	Message string
	// Detail is optional extra detail; the RS code and slug are prepended
	// when the error is sent to a client.
	Detail string
	// Hint overrides Code.NextSteps when set.
	Hint string
	// Position is the 1-based character position in the query text, 0 if
	// unknown (PostgreSQL's `P` field).
	Position int
	// Cause is the wrapped lower-level error, if any.
	Cause error
}

// New makes an error with a formatted message.
func New(code *Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap makes an error that wraps cause.
func Wrap(code *Code, cause error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Cause: cause}
}

// WithSQLState returns e with a SQLSTATE override.
func (e *Error) WithSQLState(state string) *Error { e.SQLState = state; return e }

// WithPosition returns e with a query position.
func (e *Error) WithPosition(pos int) *Error { e.Position = pos; return e }

// WithDetail returns e with a detail line.
func (e *Error) WithDetail(format string, args ...any) *Error {
	e.Detail = fmt.Sprintf(format, args...)
	return e
}

func (e *Error) Error() string {
	s := e.Code.ID + ": " + e.Message
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Cause }

// State is the SQLSTATE to report.
func (e *Error) State() string {
	if e.SQLState != "" {
		return e.SQLState
	}
	return e.Code.SQLState
}

// NextSteps is the hint to report.
func (e *Error) NextSteps() string {
	if e.Hint != "" {
		return e.Hint
	}
	return e.Code.NextSteps
}

// As extracts an *Error from err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Internal wraps an error that has no code of its own into RS-9000, so that a
// user never sees an error without a code. Use sparingly: an internal error
// reaching a user is itself a bug.
func Internal(err error) *Error {
	if e, ok := As(err); ok {
		return e
	}
	return Wrap(InternalError, err, "internal error")
}

// Has reports whether any error in err's chain carries code (As finds only
// the outermost coded error; a wrapped cause may carry a more specific one).
func Has(err error, code *Code) bool {
	for err != nil {
		if e, ok := err.(*Error); ok && e.Code == code {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, inner := range u.Unwrap() {
				if Has(inner, code) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}
