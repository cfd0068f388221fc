package wire

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/runtime"
)

// fill sets v to a random value of its type from tiny domains (so nil
// versus empty, NULLs, zero and duplicates are common).
func fill(rnd *rand.Rand, v reflect.Value, depth int) {
	t := v.Type()
	if t == rowType {
		if rnd.IntN(5) > 0 {
			v.Set(reflect.ValueOf(randomRow(rnd)))
		}
		return
	}
	switch t.Kind() {
	case reflect.Bool:
		v.SetBool(rnd.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		choices := []int64{0, 1, -1, 7, math.MaxInt8, math.MinInt8}
		v.SetInt(choices[rnd.IntN(len(choices))])
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(rnd.IntN(3)) * 100)
	case reflect.Float32, reflect.Float64:
		v.SetFloat([]float64{0, 1.5, -2.25}[rnd.IntN(3)])
	case reflect.String:
		v.SetString([]string{"", "a", "héllo"}[rnd.IntN(3)])
	case reflect.Slice:
		switch n := rnd.IntN(4); {
		case n == 0 || depth > 6:
			return // nil
		default:
			s := reflect.MakeSlice(t, n-1, n-1)
			for i := 0; i < s.Len(); i++ {
				fill(rnd, s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			fill(rnd, v.Index(i), depth+1)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fill(rnd, v.Field(i), depth+1)
		}
	case reflect.Pointer:
		if rnd.IntN(2) == 0 && depth < 6 {
			p := reflect.New(t.Elem())
			fill(rnd, p.Elem(), depth+1)
			v.Set(p)
		}
	case reflect.Map:
		if rnd.IntN(4) == 0 {
			return
		}
		m := reflect.MakeMap(t)
		for range rnd.IntN(4) {
			k := reflect.New(t.Key()).Elem()
			fill(rnd, k, depth+1)
			e := reflect.New(t.Elem()).Elem()
			fill(rnd, e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Interface:
		// The messages have no interface fields but their rows' datums;
		// an error is the interface that appears (replies).
		if t == reflect.TypeOf((*error)(nil)).Elem() && rnd.IntN(2) == 0 {
			v.Set(reflect.ValueOf(randomError(rnd, 0)))
		}
	}
}

func randomDatum(rnd *rand.Rand) types.Datum {
	switch rnd.IntN(15) {
	case 0:
		return nil
	case 1:
		return rnd.IntN(2) == 0
	case 2:
		return int64(rnd.IntN(5) - 2)
	case 3:
		return []float64{0, -1.5, math.Inf(1), 1e300}[rnd.IntN(4)]
	case 4:
		d, _, _ := apd.NewFromString([]string{"0", "-1.50", "12345678901234567890123456789.5", "NaN", "1E+10"}[rnd.IntN(5)])
		return d
	case 5:
		return []string{"", "x", "ünï"}[rnd.IntN(3)]
	case 6:
		return []byte{byte(rnd.IntN(3)), 0}
	case 7:
		return types.Date(rnd.IntN(5) - 2)
	case 8:
		return types.TimeOfDay(rnd.IntN(5))
	case 9:
		return types.Timestamp(-rnd.Int64N(1 << 40))
	case 10:
		return types.TimestampTZ(rnd.Int64N(1 << 40))
	case 11:
		return types.Interval{Months: int32(rnd.IntN(3)), Days: -1, Micros: 5}
	case 12:
		return types.UUID{byte(rnd.IntN(3)), 9}
	case 13:
		arr := types.Array{Elem: types.TInt4}
		if rnd.IntN(3) == 0 {
			arr.Elem = types.Type{} // as ivm/zset decodes arrays
		}
		for range rnd.IntN(3) {
			if rnd.IntN(3) == 0 {
				arr.Values = append(arr.Values, nil)
			} else {
				arr.Values = append(arr.Values, int64(rnd.IntN(9)))
			}
		}
		return arr
	}
	return types.Array{Elem: types.Type{Kind: types.KindNumeric, Typmod: 8}, Values: []types.Datum{nil}}
}

func randomRow(rnd *rand.Rand) types.Row {
	row := make(types.Row, rnd.IntN(4))
	for i := range row {
		row[i] = randomDatum(rnd)
	}
	return row
}

func randomError(rnd *rand.Rand, depth int) error {
	e := errcode.New(errcode.ShardUnavailable, "shard %d down", rnd.IntN(3))
	if rnd.IntN(2) == 0 {
		e.WithSQLState("40001").WithDetail("d").WithPosition(3)
	}
	if depth < 3 && rnd.IntN(2) == 0 {
		e.Cause = randomError(rnd, depth+1)
	}
	return e
}

// TestRoundTripEveryMessage: for every registered message type, random
// values survive Encode/Decode deep-equal, and encoding is deterministic
// (the decoded value encodes to the same bytes, maps included).
func TestRoundTripEveryMessage(t *testing.T) {
	c := Standard()
	eachRandomMessage(t, c, 16, 300, func(_ *rand.Rand, name string, msg runtime.Message, b []byte) {
		got, err := c.Decode(b)
		if err != nil {
			t.Fatalf("%s: decode: %v", name, err)
		}
		if !reflect.DeepEqual(got, msg) {
			t.Fatalf("%s: round trip changed the message:\n got %#v\nwant %#v", name, got, msg)
		}
		again, err := c.Encode(got)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("%s: encoding is not deterministic (err %v)", name, err)
		}
	})
}

// eachRandomMessage calls fn with perType random values of every
// registered type and their encodings.
func eachRandomMessage(t *testing.T, c *Codec, seed uint64, perType int, fn func(rnd *rand.Rand, name string, msg runtime.Message, b []byte)) {
	t.Helper()
	rnd := rand.New(rand.NewPCG(seed, 3))
	for _, name := range c.Names() {
		typ, _ := c.Type(name)
		for i := 0; i < perType; i++ {
			v := reflect.New(typ).Elem()
			fill(rnd, v, 0)
			msg := v.Interface()
			b, err := c.Encode(msg)
			if err != nil {
				t.Fatalf("%s: encode %#v: %v", name, msg, err)
			}
			fn(rnd, name, msg, b)
		}
	}
}

// TestRoundTripShapes pins the cases random values may miss.
func TestRoundTripShapes(t *testing.T) {
	c := Standard()
	big, _, _ := apd.NewFromString("-123456789012345678901234567890.000100")
	cases := []runtime.Message{
		shard.Commit{CatalogVersion: 3, Writes: []shard.RowWrite{
			{Table: catalog.ID{Object: catalog.ObjectID{15: 1}}, Row: types.Row{int64(1), nil, "x", big}, Key: types.Row{int64(1)}, MustNotExist: true},
			{Table: catalog.ID{Object: catalog.ObjectID{15: 1}}, Key: types.Row{int64(2)}}, // a delete: nil Row
		}, Offset: &shard.SourceOffset{Offset: 9}},
		shard.ReadResult{Frontier: 4, Batches: []zset.Batch{{Rows: []types.Row{{}, {nil}}, Weights: []int64{1, -2}}, {}}},
		shard.LookupResult{Rows: []types.Row{nil, {types.Array{Elem: types.TText, Values: []types.Datum{"a", nil}}}}},
		struct{}{},
		runtime.Started{},
		errcode.Wrap(errcode.ShardUnavailable, errcode.New(errcode.InternalError, "inner"), "outer").WithSQLState("40P01"),
	}
	for _, m := range cases {
		b, err := c.Encode(m)
		if err != nil {
			t.Fatalf("encode %#v: %v", m, err)
		}
		got, err := c.Decode(b)
		if err != nil {
			t.Fatalf("decode %T: %v", m, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("round trip:\n got %#v\nwant %#v", got, m)
		}
	}
	// An error without a registered form keeps its text.
	got, err := c.Decode(mustEncode(t, c, errors.New("disk on fire")))
	if err != nil || got.(error).Error() != "disk on fire" {
		t.Fatalf("plain error: %v, %v", got, err)
	}
}

func mustEncode(t *testing.T, c *Codec, m runtime.Message) []byte {
	t.Helper()
	b, err := c.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEncodeRefusesUnregistered: a type not in Messages cannot cross (the
// simulator fails the run), and corrupt bytes fail to decode, never panic.
func TestEncodeRefusesUnregistered(t *testing.T) {
	c := Standard()
	type notListed struct{ N int }
	if _, err := c.Encode(notListed{1}); err == nil {
		t.Fatal("an unregistered type was encoded")
	}
	if _, err := c.Encode(shard.Commit{Writes: []shard.RowWrite{{Row: types.Row{int32(1)}}}}); err == nil {
		t.Fatal("a row holding an int32 (not a datum) was encoded")
	}
	b := mustEncode(t, c, shard.Commit{CatalogVersion: 1, Writes: []shard.RowWrite{{Row: types.Row{"abc", int64(5)}}}})
	for i := range b {
		for _, cut := range [][]byte{b[:i], append(append([]byte(nil), b[:i]...), 0xff)} {
			if _, err := c.Decode(cut); err == nil && i < len(b) && !bytes.Equal(cut, b) {
				// A shorter prefix can only decode if it is a whole message.
				t.Fatalf("decoded a corrupt message %x", cut)
			}
		}
	}
}

// TestDecodeNeverPanics: corrupted encodings (bytes flipped, cut, random)
// decode to an error or some message, never a panic, and never allocate
// from a corrupt count (bounded by the bytes left).
func TestDecodeNeverPanics(t *testing.T) {
	c := Standard()
	eachRandomMessage(t, c, 7, 50, func(rnd *rand.Rand, _ string, _ runtime.Message, b []byte) {
		for j := 0; j < 20; j++ {
			bad := append([]byte(nil), b...)
			switch rnd.IntN(3) {
			case 0:
				if len(bad) > 0 {
					bad[rnd.IntN(len(bad))] = byte(rnd.IntN(256))
				}
			case 1:
				bad = bad[:rnd.IntN(len(bad)+1)]
			default:
				bad = append(bad[:rnd.IntN(len(bad)+1)], 0xff, 0xff, 0xff, 0xff, 0x0f)
			}
			_, _ = c.Decode(bad) // must return
		}
	})
}
