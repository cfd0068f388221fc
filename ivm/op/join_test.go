package op

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/op/testexpr"
	"github.com/rockstream/rockstream/ivm/zset"
)

func TestJoinIncremental(t *testing.T) {
	// Residual over left(a,b) ++ right(c,d): 6 / (b - d) > 0 fails when
	// b = d, so residual errors are exercised too.
	residual := testexpr.Binary{Op: ">", L: testexpr.Binary{Op: "/", L: testexpr.Int(6), R: testexpr.Binary{Op: "-", L: testexpr.IntCol(1), R: testexpr.IntCol(3)}}, R: testexpr.Int(0)}
	cases := map[string]JoinSpec{
		"inner":               {Kind: JoinInner, LeftKeys: []int{0}, RightKeys: []int{0}},
		"inner-residual":      {Kind: JoinInner, LeftKeys: []int{0}, RightKeys: []int{0}, Residual: residual},
		"inner-2keys":         {Kind: JoinInner, LeftKeys: []int{0, 1}, RightKeys: []int{0, 1}},
		"cross":               {Kind: JoinInner},
		"theta":               {Kind: JoinLeft, Residual: testexpr.Binary{Op: "<", L: testexpr.IntCol(0), R: testexpr.IntCol(2)}},
		"left":                {Kind: JoinLeft, LeftKeys: []int{0}, RightKeys: []int{0}},
		"left-residual":       {Kind: JoinLeft, LeftKeys: []int{0}, RightKeys: []int{0}, Residual: residual},
		"right":               {Kind: JoinRight, LeftKeys: []int{0}, RightKeys: []int{0}},
		"full":                {Kind: JoinFull, LeftKeys: []int{0}, RightKeys: []int{0}, Residual: residual},
		"full-nullsafe":       {Kind: JoinFull, LeftKeys: []int{0}, RightKeys: []int{0}, NullSafe: true},
		"full-mixed-nullsafe": {Kind: JoinFull, LeftKeys: []int{0, 1}, RightKeys: []int{0, 1}, NullSafeKeys: []bool{false, true}},
		"semi":                {Kind: JoinSemi, LeftKeys: []int{0}, RightKeys: []int{0}},
		"semi-residual":       {Kind: JoinSemi, LeftKeys: []int{0}, RightKeys: []int{0}, Residual: residual},
		"anti":                {Kind: JoinAnti, LeftKeys: []int{0}, RightKeys: []int{0}},
		"anti-residual":       {Kind: JoinAnti, LeftKeys: []int{0}, RightKeys: []int{0}, Residual: residual},
		"not-in":              {Kind: JoinAnti, LeftKeys: []int{0}, RightKeys: []int{0}, NullAware: true},
	}
	for _, name := range []string{"inner", "inner-residual", "inner-2keys", "cross", "theta", "left", "left-residual", "right", "full", "full-nullsafe", "full-mixed-nullsafe", "semi", "semi-residual", "anti", "anti-residual", "not-in"} {
		spec := cases[name]
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				checkIncremental(t, incrementalCase{
					widths: []int{2, 2}, nulls: true, positive: true,
					make: func(s State) Operator {
						o, err := NewJoin(s, intSchema(2), intSchema(2), spec)
						if err != nil {
							panic(err)
						}
						return o
					},
					stream: func(ctx *Context, in []zset.Batch) (zset.Batch, error) {
						return StreamJoin(ctx, spec, intSchema(2), intSchema(2), in[0], in[1])
					},
				})
			})
		})
	}
}

// TestJoinRightConstant: an inner join whose right input changes only in
// the first step arranges no left rows and still equals StreamJoin.
func TestJoinRightConstant(t *testing.T) {
	for name, spec := range map[string]JoinSpec{
		"cross": {Kind: JoinInner, RightConstant: true},
		"keyed": {Kind: JoinInner, LeftKeys: []int{0}, RightKeys: []int{0}, RightConstant: true},
	} {
		spec := spec
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				checkIncremental(t, incrementalCase{
					widths: []int{2, 2}, nulls: true, positive: true, firstStepOnly: []bool{false, true},
					make: func(s State) Operator {
						o, err := NewJoin(s, intSchema(2), intSchema(2), spec)
						if err != nil {
							panic(err)
						}
						return o
					},
					stream: func(ctx *Context, in []zset.Batch) (zset.Batch, error) {
						return StreamJoin(ctx, spec, intSchema(2), intSchema(2), in[0], in[1])
					},
				})
			})
		})
	}
	if _, err := NewJoin(State{}, intSchema(2), intSchema(2), JoinSpec{Kind: JoinLeft, RightConstant: true}); err == nil {
		t.Error("a left join with RightConstant was accepted")
	}
}
