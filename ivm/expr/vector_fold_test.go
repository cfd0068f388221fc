package expr

import (
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/ivm/types"
)

// TestFoldedComparesMatchEval: lower(x)/upper(x) compared with text
// constants (=, <>, IN, NOT IN, either side, inside CASE and boolean
// operators) give in a fallback kernel, where they are compared without
// building lower(x), exactly what Eval gives, NULLs and non-ASCII text
// included.
func TestFoldedComparesMatchEval(t *testing.T) {
	col := &ColumnRef{Index: 0, Typ: types.TText}
	must := func(e Expr, err error) Expr {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	lower := must(NewCall("lower", col))
	upper := must(NewCall("upper", col))
	text := func(s string) Expr { return NewConst(types.TText, s) }
	exprs := []Expr{
		must(NewBinary("=", lower, text("apple"))),
		must(NewBinary("=", text("apple"), lower)),
		must(NewBinary("<>", lower, text("apple"))),
		must(NewBinary("=", upper, text("APPLE"))),
		must(NewBinary("=", lower, text("Apple"))),
		must(NewBinary("=", lower, text("é"))),
		must(NewBinary("=", lower, text(""))),
		&InList{X: lower, List: []Expr{text("apple"), text("baidu")}, Cmp: types.TText},
		&InList{X: upper, List: []Expr{text("APPLE"), text("BAIDU")}, Cmp: types.TText, Negated: true},
		&InList{X: lower, List: []Expr{text("apple"), Null(types.TText)}, Cmp: types.TText},
		&Case{Whens: []When{
			{Cond: must(NewBinary("=", lower, text("apple"))), Result: text("0")},
			{Cond: must(NewBinary("=", lower, text("baidu"))), Result: text("1")},
		}, Else: col, Typ: types.TText},
		&Or{Args: []Expr{&IsNull{X: col}, &Not{X: must(NewBinary("<>", upper, text("BAIDU")))}}},
	}
	inputs := []types.Datum{"apple", "Apple", "APPLE", "aPPle", "apples", "appl", "baidu", "BaIdU", "É", "é", "", "x", nil, "APPLE\x00", "ápple"}
	rows := make([]types.Row, len(inputs))
	for i, v := range inputs {
		rows[i] = types.Row{v}
	}
	env := &Env{}
	for _, e := range exprs {
		p := CompileVector(e)
		if f, ok := p.root.(*fallbackKernel); ok {
			folded := false
			switch x := f.e.(type) {
			case *foldedCmp:
				folded = true
			case *Case:
				_, folded = x.Whens[0].Cond.(*foldedCmp)
			}
			// NB: a NULL in the IN list keeps the InList (its NULL result).
			if nullList := strings.Contains(e.String(), "NULL"); folded == nullList {
				t.Fatalf("%s: compiled to %s", e, f.e)
			}
		}
		res := p.Eval(env, rows)
		for i, row := range rows {
			want, err := e.Eval(env, row)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Datum(i); got != want {
				t.Errorf("%s on %q: kernel %v, Eval %v", e, inputs[i], got, want)
			}
		}
	}
}

// TestConstReadsMatchEval: a text constant read as a date/time type is
// read once per settings in a kernel, and gives what Eval gives when the
// same Program then runs under another time zone or DateStyle field
// order; a constant that fails to read fails every row as Eval does.
func TestConstReadsMatchEval(t *testing.T) {
	ts := &ColumnRef{Index: 0, Typ: types.TTimestampTZ}
	read := func(s string, to types.Type) Expr { return &Cast{X: NewConst(types.TText, s), Typ: to} }
	must := func(e Expr, err error) Expr {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	exprs := []Expr{
		must(NewBinary("-", ts, read("1970-01-01 00:00:00", types.TTimestampTZ))),
		must(NewBinary("<", ts, read("01/02/2024 10:00", types.TTimestampTZ))),
		&Case{Whens: []When{{Cond: &IsNull{X: ts}, Result: read("01/02/03", types.TDate)}}, Else: read("2024-02-30", types.TDate), Typ: types.TDate},
	}
	rows := []types.Row{{types.TimestampTZ(0)}, {types.TimestampTZ(757_382_400_000_000)}, {nil}}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	envs := []*Env{{}, {TimeZone: ny}, {TimeZone: ny, DateOrder: types.DateOrderDMY}, {}}
	for _, e := range exprs {
		p := CompileVector(e)
		reads := 0
		Walk(p.root.(*fallbackKernel).e, func(x Expr) {
			if _, ok := x.(*constRead); ok {
				reads++
			}
		})
		if _, isCase := e.(*Case); reads == 0 && !isCase {
			t.Fatalf("%s: no constant read in %s", e, p.root.(*fallbackKernel).e)
		}
		for k, env := range envs {
			res := p.Eval(env, rows)
			for i, row := range rows {
				want, wantErr := e.Eval(env, row)
				got, gotErr := res.Datum(i), res.Err(i)
				if (wantErr == nil) != (gotErr == nil) || (wantErr == nil && got != want) {
					t.Errorf("%s env %d row %d: kernel %v (%v), Eval %v (%v)", e, k, i, got, gotErr, want, wantErr)
				}
			}
		}
	}
}
