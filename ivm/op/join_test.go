package op

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/op/testexpr"
	"github.com/rockstream/rockstream/ivm/types"
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
			rapid.Check(t, func(t *rapid.T) { checkIncremental(t, joinCase(spec, true)) })
		})
	}
}

// joinCase is the join spec over two 2-column inputs against StreamJoin;
// positive keeps integrated inputs non-negative.
func joinCase(spec JoinSpec, positive bool) incrementalCase {
	return incrementalCase{
		widths: []int{2, 2}, nulls: true, positive: positive,
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
				c := joinCase(spec, true)
				c.firstStepOnly = []bool{false, true}
				checkIncremental(t, c)
			})
		})
	}
	if _, err := NewJoin(State{}, intSchema(2), intSchema(2), JoinSpec{Kind: JoinLeft, RightConstant: true}); err == nil {
		t.Error("a left join with RightConstant was accepted")
	}
}

// TestJoinSigned: an inner and a left join stay equal to StreamJoin when
// integrated inputs go negative, where a blind positive merge onto a
// negative stored weight leaves a zero-weight entry that probes must skip.
func TestJoinSigned(t *testing.T) {
	for name, spec := range map[string]JoinSpec{
		"inner": {Kind: JoinInner, LeftKeys: []int{0}, RightKeys: []int{0}},
		"left":  {Kind: JoinLeft, LeftKeys: []int{0}, RightKeys: []int{0}},
	} {
		spec := spec
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) { checkIncremental(t, joinCase(spec, false)) })
		})
	}
}

// pointReadCounter counts the point reads (Get) that reach a store.
type pointReadCounter struct {
	kv.Reader
	gets int
}

func (r *pointReadCounter) Get(key []byte) ([]byte, bool, error) {
	r.gets++
	return r.Reader.Get(key)
}

// TestJoinAddsRowsWithoutReading: over state larger than its cache, a
// join adds new rows to its own side with blind merge writes, not one point
// read of the store per row, whether or not that side keeps match counts;
// retractions are read; the state then answers a probe from the other side
// right.
func TestJoinAddsRowsWithoutReading(t *testing.T) {
	for _, kind := range []JoinKind{JoinInner, JoinLeft, JoinSemi, JoinFull} {
		spec := JoinSpec{Kind: kind, LeftKeys: []int{0}, RightKeys: []int{0}}
		store := kv.NewMemory()
		state := State{ID: arrange.MakeID(1, 1), CacheEntriesMax: 4}
		var left, right zset.Batch
		step := func(j *Join, dl, dr zset.Batch) int {
			reader := &pointReadCounter{Reader: store}
			txn := kv.NewTxn(reader)
			if _, err := j.Step(&Context{Txn: txn, Env: &expr.Env{}}, []zset.Batch{dl, dr}); err != nil {
				t.Fatal(err)
			}
			if err := store.Apply(txn.Batch()); err != nil {
				t.Fatal(err)
			}
			left, right = zset.Consolidate(zset.Sum(left, dl)), zset.Consolidate(zset.Sum(right, dr))
			return reader.gets
		}
		rows := func(from, to int64) zset.Batch {
			var b zset.Batch
			for i := from; i < to; i++ {
				b.Add(types.Row{i % 3, i}, 1)
			}
			return b
		}
		newJoin := func() *Join {
			j, err := NewJoin(state, intSchema(2), intSchema(2), spec)
			if err != nil {
				t.Fatal(err)
			}
			return j
		}
		step(newJoin(), rows(0, 20), rows(0, 2))
		// A restarted join's caches know nothing: every new row's entry
		// is outside them.
		j := newJoin()
		if gets := step(j, rows(20, 40), zset.Batch{}); gets != 0 {
			t.Errorf("%v join: %d point reads adding 20 new rows", kind, gets)
		}
		// A retraction of some of them, then a change on the right, must
		// meet exactly the arranged left rows.
		retract := rows(30, 40)
		for i := range retract.Weights {
			retract.Weights[i] = -1
		}
		if gets := step(j, retract, zset.Batch{}); gets == 0 {
			t.Errorf("%v join: no point read retracting 10 rows", kind)
		}
		d := rows(0, 3)
		ctx := &Context{Env: &expr.Env{}}
		before, err := StreamJoin(ctx, spec, intSchema(2), intSchema(2), left, right)
		if err != nil {
			t.Fatal(err)
		}
		after, err := StreamJoin(ctx, spec, intSchema(2), intSchema(2), left, zset.Sum(right, d))
		if err != nil {
			t.Fatal(err)
		}
		out, err := newJoin().Step(&Context{Txn: kv.NewTxn(store), Env: &expr.Env{}}, []zset.Batch{{}, d})
		if err != nil {
			t.Fatal(err)
		}
		all := zset.Consolidate(zset.Sum(out, before, zset.Negate(after)))
		if len(all.Rows) != 0 {
			t.Errorf("%v join: a right change's output differs from the stream join's by %v", kind, all)
		}
	}
}
