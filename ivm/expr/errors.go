package expr

import (
	"github.com/rockstream/rockstream/errcode"
)

// PostgreSQL SQLSTATEs raised during evaluation.
const (
	StateDivisionByZero           = "22012"
	StateNumericValueOutOfRange   = "22003"
	StateInvalidTextRepr          = "22P02"
	StateInvalidParameterValue    = "22023"
	StateNullValueNotAllowed      = "22004"
	StateInvalidEscapeSequence    = "22025"
	StateInvalidRegex             = "2201B"
	StateDatetimeFieldOverflow    = "22008"
	StateFeatureNotSupported      = "0A000"
	StateInvalidArgForLog         = "2201E"
	StateInvalidArgForPower       = "2201F"
	StateStringRightTruncation    = "22001"
	StateIntervalFieldOverflow    = "22015"
	StateUndefinedFunction        = "42883"
	StateCannotCoerce             = "42846"
	StateDatatypeMismatch         = "42804"
	StateInvalidDatetimeFormat    = "22007"
	StateCharacterNotInRepertoire = "22021"
	StateProgramLimitExceeded     = "54000"
)

// EvalError makes an evaluation error with PostgreSQL's SQLSTATE.
func EvalError(state, format string, args ...any) *errcode.Error {
	return errcode.New(errcode.EvaluationError, format, args...).WithSQLState(state)
}

func errDivisionByZero() error { return EvalError(StateDivisionByZero, "division by zero") }

func errIntOutOfRange(bits int) error {
	switch bits {
	case 16:
		return EvalError(StateNumericValueOutOfRange, "smallint out of range")
	case 32:
		return EvalError(StateNumericValueOutOfRange, "integer out of range")
	}
	return EvalError(StateNumericValueOutOfRange, "bigint out of range")
}

func errFloatOverflow() error {
	return EvalError(StateNumericValueOutOfRange, "value out of range: overflow")
}

func errFloatUnderflow() error {
	return EvalError(StateNumericValueOutOfRange, "value out of range: underflow")
}

func errUndefinedOperator(op string, types ...string) error {
	switch len(types) {
	case 1:
		return errcode.New(errcode.UndefinedFunction, "operator does not exist: %s %s", op, types[0]).WithSQLState(StateUndefinedFunction)
	default:
		return errcode.New(errcode.UndefinedFunction, "operator does not exist: %s %s %s", types[0], op, types[1]).WithSQLState(StateUndefinedFunction)
	}
}
