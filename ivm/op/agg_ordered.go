package op

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/keyenc"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Ordered aggregates: string_agg and array_agg. Like MIN and MAX they keep
// a per-group ordered multiset, so a retraction removes exactly one
// occurrence; finalizing a touched group scans its multiset in order and
// concatenates (O(group size) per touched group and step, the price of an
// exact answer under retractions).
//
// An element is the row's (value, delimiter) with its ORDER BY values:
//
//	0x01 KindMultiset op_id group_key call order_key value_key element → varint weight ++ element
//
// order_key is the keyenc key of the ORDER BY values (with their
// directions) and value_key the value's ascending key, so entries come out
// of a prefix scan in ORDER BY order with ties broken by value; element (the
// lossless encoding of value and delimiter) keeps SQL-equal but different
// values (1.0, 1.00) and different delimiters apart. PostgreSQL skips NULL
// values in string_agg (a NULL delimiter counts as empty) and keeps them in
// array_agg; both return NULL when no row is aggregated.

// isOrderedAgg reports the aggregates kept as a per-group ordered
// multiset of elements: string_agg, array_agg and the ordered-set
// aggregates (agg_ordered_set.go).
func isOrderedAgg(f AggFunc) bool {
	return f == AggStringAgg || f == AggArrayAgg || isOrderedSetAgg(f) || isJSONAgg(f)
}

// orderedAggResultType is text for string_agg and the argument's array
// type for array_agg.
func orderedAggResultType(call AggregateCall) (types.Type, error) {
	t := call.Arg.Type()
	switch call.Func {
	case AggStringAgg:
		if call.Delimiter == nil {
			return types.Type{}, fmt.Errorf("string_agg needs a delimiter")
		}
		if !t.Kind.IsString() || !call.Delimiter.Type().Kind.IsString() {
			return types.Type{}, fmt.Errorf("string_agg(%s, %s) is not supported", t.SQLName(), call.Delimiter.Type().SQLName())
		}
		return types.TText, nil
	case AggArrayAgg:
		if t.Kind == types.KindArray {
			return types.Type{}, fmt.Errorf("array_agg of an array (%s) is not supported", t.SQLName())
		}
		return types.ArrayOf(t), nil
	case AggPercentileCont, AggPercentileDisc, AggMode:
		return orderedSetResultType(call)
	case AggJSONAgg, AggJSONBAgg, AggJSONObjectAgg, AggJSONBObjectAgg:
		return jsonAggResultType(call)
	}
	return types.Type{}, fmt.Errorf("%s is not an ordered aggregate", call.Func)
}

// evalOrderedInput evaluates an ordered aggregate's element for row: the
// Row{value, delimiter, order values...}; seen is false when the row does
// not contribute (a NULL string_agg value; ordered-set aggregates ignore
// NULLs too).
func evalOrderedInput(ctx *Context, call AggregateCall, row types.Row) (types.Row, bool, error) {
	v, err := call.Arg.Eval(ctx.Env, row)
	if err != nil {
		return nil, false, err
	}
	if v == nil && (call.Func == AggStringAgg || isOrderedSetAgg(call.Func)) {
		return nil, false, nil
	}
	element := make(types.Row, 2, 2+len(call.OrderBy))
	element[0] = v
	if isJSONAgg(call.Func) {
		// element[1] is the value's JSON text (or the object field).
		if element[1], err = jsonAggFragment(ctx.Env, call, row, v); err != nil {
			return nil, false, err
		}
	} else if call.Delimiter != nil {
		if element[1], err = call.Delimiter.Eval(ctx.Env, row); err != nil {
			return nil, false, err
		}
	}
	for _, k := range call.OrderBy {
		o, err := k.Expr.Eval(ctx.Env, row)
		if err != nil {
			return nil, false, err
		}
		element = append(element, o)
	}
	return element, true, nil
}

// orderedElementKey appends an element's multiset key (after the group key
// and call byte) to dst.
func orderedElementKey(dst []byte, call AggregateCall, element types.Row) []byte {
	for i, k := range call.OrderBy {
		dst = keyenc.EncodeColumn(dst, k.Expr.Type(), element[2+i], keyenc.Direction{Descending: k.Descending, NullsFirst: k.NullsFirst})
	}
	dst = keyenc.EncodeColumn(dst, call.Arg.Type(), element[0], keyenc.Asc)
	return zset.EncodeRow(dst, element[:2])
}

// addOrdered adds weight occurrences of element to a group's multiset.
func (a *Aggregate) addOrdered(ctx *Context, groupKey []byte, callIndex int, element types.Row, weight int64, buf *[]byte) error {
	call := a.spec.Calls[callIndex]
	suffix := orderedElementKey(append((*buf)[:0], byte(callIndex)), call, element)
	*buf = suffix
	old, ok, err := a.multiset.GetEntry(ctx.Txn, groupKey, suffix)
	if err != nil {
		return err
	}
	oldLen := -1
	var w int64
	if ok {
		oldLen = len(old)
		var n int
		if w, n = binary.Varint(old); n <= 0 {
			return errcode.New(errcode.ArrangementCorrupt, "corrupt multiset weight")
		}
	}
	w += weight
	if w == 0 {
		return a.multiset.DeleteEntry(ctx.Txn, groupKey, suffix, oldLen)
	}
	return a.multiset.SetEntry(ctx.Txn, groupKey, suffix, zset.EncodeRow(binary.AppendVarint(nil, w), element[:2]), oldLen)
}

// finalizeOrdered scans a group's multiset for call and builds the result.
func (a *Aggregate) finalizeOrdered(ctx *Context, groupKey []byte, callIndex int) (types.Datum, error) {
	call := a.spec.Calls[callIndex]
	var elements []types.Row
	var weights []int64
	size := orderedSize{call: call}
	err := a.scanMultiset(ctx, groupKey, callIndex, func(element types.Row, w int64) error {
		if err := size.add(element, w); err != nil {
			return err
		}
		elements = append(elements, element)
		weights = append(weights, w)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return buildOrdered(call, elements, weights)
}

// scanMultiset visits the elements of call callIndex's multiset in group
// groupKey in order, with their multiplicity (> 0; retracted elements
// are skipped).
func (a *Aggregate) scanMultiset(ctx *Context, groupKey []byte, callIndex int, fn func(element types.Row, w int64) error) error {
	return a.multiset.ScanGroup(ctx.Txn, groupKey, []byte{byte(callIndex)}, func(_, v []byte) error {
		w, n := binary.Varint(v)
		if n <= 0 {
			return errcode.New(errcode.ArrangementCorrupt, "corrupt multiset weight")
		}
		if w <= 0 {
			return nil
		}
		element, _, err := zset.DecodeRow(v[n:])
		if err != nil {
			return errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt multiset element")
		}
		return fn(element, w)
	})
}

// buildOrdered concatenates elements (in order) repeated by their
// positive weights (once each for DISTINCT); NULL when there are none. A
// result over PostgreSQL's limits (expr.ValueBytesMax,
// expr.ArrayElementsMax) is refused before it is built: a weight can ask
// for any number of copies.
func buildOrdered(call AggregateCall, elements []types.Row, weights []int64) (types.Datum, error) {
	if err := checkOrderedSize(call, elements, weights); err != nil {
		return nil, err
	}
	if isJSONAgg(call.Func) {
		return buildJSONAgg(call, elements, weights)
	}
	var sb strings.Builder
	var values []types.Datum
	count := eachCopy(call, elements, weights, func(e types.Row, count int) {
		if call.Func == AggArrayAgg {
			values = append(values, e[0])
			return
		}
		if count > 0 {
			if d, ok := e[1].(string); ok {
				sb.WriteString(d)
			}
		}
		sb.WriteString(e[0].(string))
	})
	if count == 0 {
		return nil, nil
	}
	if call.Func == AggArrayAgg {
		return types.Array{Elem: call.Arg.Type(), Values: values}, nil
	}
	return sb.String(), nil
}

// eachCopy calls f with each element of a multiset as many times as its
// weight (once under DISTINCT), in order, and the number of calls before
// it; it returns the number of calls.
func eachCopy(call AggregateCall, elements []types.Row, weights []int64, f func(e types.Row, count int)) int {
	count := 0
	for i, e := range elements {
		n := weights[i]
		if n <= 0 {
			continue
		}
		if call.Distinct {
			n = 1
		}
		for range n {
			f(e, count)
			count++
		}
	}
	return count
}

// orderedSize accumulates the size of an ordered aggregate's result as
// its elements arrive and refuses one over PostgreSQL's limits: more than
// expr.ArrayElementsMax elements for array_agg, more than
// expr.ValueBytesMax bytes for string_agg. It runs before anything is
// built, and while a group's elements are scanned, so neither the result
// nor the scanned elements outgrow the limit.
type orderedSize struct {
	call AggregateCall
	// total saturates above bound, so it cannot overflow.
	total int64
}

// add counts element repeated weight times.
func (o *orderedSize) add(element types.Row, weight int64) error {
	if weight <= 0 {
		return nil
	}
	if o.call.Distinct {
		weight = 1
	}
	bound := int64(expr.ValueBytesMax)
	size := int64(1)
	if o.call.Func == AggArrayAgg {
		bound = expr.ArrayElementsMax
	} else if isJSONAgg(o.call.Func) {
		size = int64(len(element[1].(string)) + 3)
	} else {
		d, _ := element[1].(string)
		size = int64(len(d) + len(element[0].(string)))
	}
	if size > 0 && weight > (bound-o.total)/size {
		o.total = bound + 1
	} else {
		o.total += weight * size
	}
	if o.total <= bound {
		return nil
	}
	if o.call.Func == AggArrayAgg {
		return expr.CheckArrayElements(expr.ArrayElementsMax + 1)
	}
	return errcode.New(errcode.ValueTooLarge, "out of memory").
		WithDetail("The %s result would be larger than %d bytes.", o.call.Func, expr.ValueBytesMax)
}

// checkOrderedSize is orderedSize over a whole group.
func checkOrderedSize(call AggregateCall, elements []types.Row, weights []int64) error {
	size := orderedSize{call: call}
	for i, e := range elements {
		if err := size.add(e, weights[i]); err != nil {
			return err
		}
	}
	return nil
}

// streamOrdered is the reference: the elements with their summed weights
// (lossless identity), sorted by ORDER BY values then value with
// types.Compare, independent of key encodings.
func streamOrdered(call AggregateCall, elements []types.Datum, weights []int64) (types.Datum, error) {
	sorted, sortedWeights := sortOrdered(call, elements, weights)
	return buildOrdered(call, sorted, sortedWeights)
}

// sortOrdered consolidates elements by their lossless identity and sorts
// them as streamOrdered describes.
func sortOrdered(call AggregateCall, elements []types.Datum, weights []int64) ([]types.Row, []int64) {
	var rows []types.Row
	var ws []int64
	var buf []byte
	index := map[string]int{}
	for i, d := range elements {
		e := d.(types.Row)
		buf = zset.EncodeRow(buf[:0], e)
		j, ok := index[string(buf)]
		if !ok {
			j = len(rows)
			index[string(buf)] = j
			rows = append(rows, e)
			ws = append(ws, 0)
		}
		ws[j] += weights[i]
	}
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	compare := func(x, y types.Row) int {
		for i, k := range call.OrderBy {
			if c := compareNullable(k.Expr.Type(), x[2+i], y[2+i], k.Descending, k.NullsFirst); c != 0 {
				return c
			}
		}
		if c := compareNullable(call.Arg.Type(), x[0], y[0], false, false); c != 0 {
			return c
		}
		return strings.Compare(string(zset.EncodeRow(nil, x[:2])), string(zset.EncodeRow(nil, y[:2])))
	}
	sort.SliceStable(order, func(i, j int) bool { return compare(rows[order[i]], rows[order[j]]) < 0 })
	sorted := make([]types.Row, len(rows))
	sortedWeights := make([]int64, len(rows))
	for i, o := range order {
		sorted[i], sortedWeights[i] = rows[o], ws[o]
	}
	return sorted, sortedWeights
}

// compareNullable orders a and b as ORDER BY would.
func compareNullable(t types.Type, a, b types.Datum, descending, nullsFirst bool) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		if nullsFirst {
			return -1
		}
		return 1
	case b == nil:
		if nullsFirst {
			return 1
		}
		return -1
	}
	c := types.Compare(t, a, b)
	if descending {
		return -c
	}
	return c
}
