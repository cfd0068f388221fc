// Package expr is RockStream's scalar expression engine: typed expression
// trees with PostgreSQL semantics (three-valued logic, overflow and division
// errors, PostgreSQL casts) evaluated over rows.
//
// This file is the contract the operators (ivm/) and the compiler build
// against; node kinds, the function library and casts live beside it.
package expr

import (
	"time"

	"github.com/rockstream/rockstream/ivm/types"
)

// Env is what evaluation may depend on besides the row. Materialized views
// are evaluated with a fixed Env (UTC, no statement time) so that their
// results do not depend on which session created them.
type Env struct {
	// TimeZone is the session time zone used by timestamptz conversions.
	TimeZone *time.Location
	// ExtraFloatDigits is the session's extra_float_digits when
	// ExtraFloatDigitsSet (otherwise PostgreSQL's default, 1): the digits
	// of a float in its text form (casts to text, concat, json). A view
	// is maintained with its creator's (catalog.Relation.ExtraFloatDigits).
	ExtraFloatDigits    int
	ExtraFloatDigitsSet bool
	// DateStyle, DateOrder and IntervalStyle are the session's DateStyle
	// and IntervalStyle (the zero values are PostgreSQL's defaults, ISO,
	// MDY and postgres): the text of dates, timestamps and intervals
	// (casts to text, concat) and how text is read as them. A view is
	// maintained with its creator's (catalog.Relation.DateStyle).
	DateStyle     types.DateStyle
	DateOrder     types.DateOrder
	IntervalStyle types.IntervalStyle
	// SearchPath is the session's search_path as the schemas that exist,
	// in order (current_schema, current_schemas); with HasSearchPath
	// false (views, tests) it is public.
	SearchPath    []string
	HasSearchPath bool
	// StatementTime is now()/current_timestamp for ad-hoc queries; views
	// reject now() at DDL time.
	StatementTime types.TimestampTZ
	// Params are the values of $1..$n (index 0 is $1).
	Params []types.Datum
	// Catalog answers the system-catalog functions (func_catalog.go); nil
	// outside ad-hoc queries.
	Catalog CatalogInfo
	// Random returns random bits for the volatile functions random() and
	// gen_random_uuid(); nil makes them fail (views never call them: they
	// are rejected at DDL time as volatile). The engine supplies it; the
	// simulator passes a seeded stream.
	Random func() uint64
	// Sequences answers nextval/currval/setval/lastval (func_sequence.go);
	// nil makes them fail.
	Sequences Sequences
	// Notify queues a notification for pg_notify(channel, payload)
	// (func_notify.go), delivered when the transaction commits; nil makes
	// pg_notify fail.
	Notify func(channel, payload string) error
	// Interrupt, when set, is polled by long evaluations (between the
	// operators of an ad-hoc circuit run); a non-nil error aborts the run
	// with it (a cancelled statement, a server shutting down).
	Interrupt func() error
	// Backends answers pg_backend_pid, pg_cancel_backend and
	// pg_terminate_backend (func_backend.go); nil: pg_backend_pid is 1
	// and the others fail.
	Backends Backends
	// StepBytesMax bounds the bytes the deltas of one circuit step may
	// hold (op.StepMemory; 0: no bound). The server derives it from
	// --memory-budget, so a join that multiplies its inputs fails the
	// step with 53200 instead of growing until the process is killed.
	StepBytesMax int64
	// SharedMemory, when set, is memory the evaluation shares with others
	// running at the same time (the server's ad-hoc queries): every byte a
	// step charges is also reserved there, so concurrent queries together
	// stay within the budget, not each of them.
	SharedMemory MemoryReserver
}

// MemoryReserver is a memory budget shared by concurrent evaluations.
type MemoryReserver interface {
	// Reserve takes bytes from the budget, or fails (RS-5502) when it has
	// not that many left.
	Reserve(bytes int64) error
	// Release gives reserved bytes back.
	Release(bytes int64)
}

// Expr is a typed scalar expression.
type Expr interface {
	// Type is the result type.
	Type() types.Type
	// Eval computes the value for one input row. A returned error is a
	// user-visible evaluation error (an *errcode.Error with a PostgreSQL
	// SQLSTATE such as 22012 division_by_zero).
	Eval(env *Env, row types.Row) (types.Datum, error)
	// String renders the expression for EXPLAIN, in SQL-like syntax.
	String() string
}
