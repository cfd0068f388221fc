package plan

import (
	"strings"

	"github.com/rockstream/rockstream/ivm/types"
)

// TemporalFilter keeps the rows whose bounds all hold at the current time
// (a materialized view's WHERE ts > now() - interval '1 hour'): rows enter
// and leave as time passes (op.TemporalFilter). Only views have it: the
// compiler turns the accepted conjuncts of a Filter calling now() into one.
type TemporalFilter struct {
	Input  Node
	Bounds []TemporalBound
}

// TemporalBound is one conjunct Expr Op now() + Offset: Expr is a
// timestamptz expression of the row (no now()), Op one of < <= > >=, and
// Offset a constant of microseconds only.
type TemporalBound struct {
	Expr         Scalar
	Op           string
	OffsetMicros int64
}

func (f *TemporalFilter) Schema() []Column { return f.Input.Schema() }
func (f *TemporalFilter) Inputs() []Node   { return []Node{f.Input} }
func (f *TemporalFilter) WithInputs(in []Node) Node {
	return &TemporalFilter{Input: in[0], Bounds: f.Bounds}
}
func (f *TemporalFilter) Describe() string { return "TemporalFilter " + f.String() }

// String renders the bounds as SQL.
func (f *TemporalFilter) String() string {
	parts := make([]string, len(f.Bounds))
	for i, b := range f.Bounds {
		s := b.Expr.String() + " " + b.Op + " now()"
		switch {
		case b.OffsetMicros > 0:
			s += " + '" + types.Format(types.TInterval, types.Interval{Micros: b.OffsetMicros}) + "'"
		case b.OffsetMicros < 0:
			s += " - '" + types.Format(types.TInterval, types.Interval{Micros: -b.OffsetMicros}) + "'"
		}
		parts[i] = s
	}
	return strings.Join(parts, " AND ")
}

// HeldScalars implements ScalarHolder: the bounds' row expressions.
func (f *TemporalFilter) HeldScalars() []Scalar {
	out := make([]Scalar, len(f.Bounds))
	for i, b := range f.Bounds {
		out[i] = b.Expr
	}
	return out
}

// WithScalars implements ScalarHolder.
func (f *TemporalFilter) WithScalars(s []Scalar) Node {
	bounds := append([]TemporalBound(nil), f.Bounds...)
	for i := range bounds {
		bounds[i].Expr = s[i]
	}
	return &TemporalFilter{Input: f.Input, Bounds: bounds}
}

// Now is now() in a materialized view's plan (also mz_now(),
// CURRENT_TIMESTAMP, transaction_timestamp() and statement_timestamp(),
// which are the same instant): volatile, so no rewrite moves or folds it,
// until the compiler turns the conjuncts using it into a TemporalFilter.
func Now() *Func { return &Func{Name: "now", Typ: types.TTimestampTZ, Volatile: true} }

// IsNow reports whether s is Now().
func IsNow(s Scalar) bool {
	f, ok := s.(*Func)
	return ok && f.Name == "now" && f.Volatile && !f.Op && len(f.Args) == 0
}

// NowName reports whether name is a function that is now() in a
// materialized view.
func NowName(name string) bool {
	switch name {
	case "now", "mz_now", "current_timestamp", "transaction_timestamp", "statement_timestamp":
		return true
	}
	return false
}
