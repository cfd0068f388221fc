package op

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"sort"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// SessionSpec assigns rows to session windows: per key (the Keys columns;
// none: one key), the rows ordered by their Time column form sessions in
// which each row is less than Gap after the previous one. A session's
// window is [first time, last time + Gap), so a row Gap or more after the
// last one starts a new session, and two sessions merge when a row lands
// less than Gap from both. The output row is the input row followed by
// window_start and window_end, of the time column's type.
//
// Time is a timestamp, timestamptz or bigint column; Gap is in
// microseconds for the timestamps and in units for bigint. A row whose
// time is NULL or infinite, or whose time plus Gap is out of the type's
// range, belongs to no session (no output row).
type SessionSpec struct {
	Time int
	Keys []int
	Gap  int64
}

// Session maintains session windows incrementally. For every key a delta
// touches it reads the key's rows in time order and computes the sessions
// before and after the delta:
//
//	Session(Δ)_k = sessions(P_k + Δ_k) − sessions(P_k)
//
// but emits only what changed: a session whose bounds are unchanged emits
// only the delta's rows inside it; a session that merged, split, grew or
// shrank retracts its rows with the old bounds and inserts them with the
// new ones. A step reads the touched key's entries (one group, usually
// cached) and works on the old sessions around the delta's times only
// (affectedRange), decoding the rows of the changed sessions.
//
//	time | input (key, t), gap 10        | output (key, t, start, end)
//	  1  | +(a, 0) +(a, 20)              | +(a,0,0,10) +(a,20,20,30)
//	  2  | +(a, 8)                       | −(a,0,0,10) +(a,0,0,18) +(a,8,0,18)
//	  3  | +(a, 15)  (bridges 8 and 20)  | −(a,0,0,18) −(a,8,0,18) −(a,20,20,30)
//	     |                               | +(a,0,0,30) +(a,8,0,30) +(a,15,0,30) +(a,20,0,30)
//	  4  | −(a, 15)  (splits again)      | the reverse of 3
//
// State:
//
//	0x01 KindSession op_id key time(8) row → weight
//
// time(8) is the time's int64 with its sign bit flipped, big-endian, so a
// key's entries are in time order.
type Session struct {
	spec     SessionSpec
	in       types.Schema
	schema   types.Schema
	keyTypes []types.Type
	state    *arrange.Arrangement
}

// NewSession returns an incremental Session over rows of schema in.
func NewSession(state State, in types.Schema, spec SessionSpec) (*Session, error) {
	schema, err := sessionSchema(in, spec)
	if err != nil {
		return nil, err
	}
	return &Session{spec: spec, in: in, schema: schema, keyTypes: keyTypes(in, spec.Keys), state: state.groupedArrangement(arrange.KindSession)}, nil
}

// SessionColumns are the names of the two columns Session appends.
//
//lint:immutable a constant pair of names.
var SessionColumns = [2]string{"window_start", "window_end"}

func sessionSchema(in types.Schema, spec SessionSpec) (types.Schema, error) {
	if spec.Time < 0 || spec.Time >= len(in) {
		return nil, fmt.Errorf("session time column %d out of range", spec.Time)
	}
	for _, c := range spec.Keys {
		if c < 0 || c >= len(in) {
			return nil, fmt.Errorf("session key column %d out of range", c)
		}
	}
	if spec.Gap <= 0 {
		return nil, fmt.Errorf("session gap %d must be positive", spec.Gap)
	}
	t := in[spec.Time].Type
	switch t.Kind {
	case types.KindTimestamp, types.KindTimestampTZ, types.KindInt8:
	default:
		return nil, fmt.Errorf("session time column has type %s", t)
	}
	// NB: the bounds have no typmod, as PostgreSQL's min(ts) and ts +
	// interval: last + gap may carry more precision than timestamp(p).
	t.Typmod = -1
	schema := append(types.Schema(nil), in...)
	for _, name := range SessionColumns {
		schema = append(schema, types.Column{Name: name, Type: t})
	}
	return schema, nil
}

// Schema implements Operator.
func (o *Session) Schema() types.Schema { return o.schema }

// Arrangements implements Stateful.
func (o *Session) Arrangements() []*arrange.Arrangement { return []*arrange.Arrangement{o.state} }

// sessionEntry is one stored or changed (time, row) of a key.
type sessionEntry struct {
	time   int64
	suffix []byte // time(8) ++ row encoding
	// before and after are the entry's weights before and after the step.
	before, after int64
}

// sessionSpan is one session: entries [lo, hi) of a key's entry list,
// from time start to time last.
type sessionSpan struct {
	start, last int64
	lo, hi      int
}

// Step implements Operator.
func (o *Session) Step(ctx *Context, inputs []zset.Batch) (zset.Batch, error) {
	prefixes, deltas := byPartition(inputs[0], o.keyTypes, o.spec.Keys)
	var out zset.Batch
	for j, delta := range deltas {
		changes := o.changes(zset.Consolidate(delta))
		if len(changes) == 0 {
			continue
		}
		prefix := []byte(prefixes[j])
		g, err := o.state.Group(ctx.Txn, prefix)
		if err != nil {
			return zset.Batch{}, err
		}
		stored := g.Entries()
		lo, hi, err := affectedRange(stored, changes, o.spec.Gap)
		if err != nil {
			return zset.Batch{}, err
		}
		entries, err := mergeSessionEntries(stored[lo:hi], changes)
		if err != nil {
			return zset.Batch{}, err
		}
		if err := o.emit(entries, o.spec.Gap, &out); err != nil {
			return zset.Batch{}, err
		}
		// NB: the group's entries are only read above; writing may move
		// them, so the state is written after the output is built.
		for _, c := range changes {
			if err := addEntryWeight(ctx.Txn, o.state, prefix, c.suffix, c.after-c.before); err != nil {
				return zset.Batch{}, err
			}
		}
	}
	return out, nil
}

// changes turns one key's consolidated delta into entries sorted by
// suffix (after − before is the delta weight), dropping rows that belong
// to no session.
func (o *Session) changes(delta zset.Batch) []sessionEntry {
	var out []sessionEntry
	for i, row := range delta.Rows {
		t, ok := sessionTime(row[o.spec.Time], o.spec.Gap)
		if !ok {
			continue
		}
		suffix := zset.EncodeRow(appendSessionTime(nil, t), row)
		out = append(out, sessionEntry{time: t, suffix: suffix, after: delta.Weights[i]})
	}
	sort.Slice(out, func(a, b int) bool { return bytes.Compare(out[a].suffix, out[b].suffix) < 0 })
	return out
}

// affectedRange returns the part [lo, hi) of a key's stored entries (in
// time order) whose sessions a step's changes (sorted by time) may alter:
// from the start of the old session of the last entry at or before the
// first change to the end of the old session of the first entry at or
// after the last change. Sessions outside it keep their rows and bounds:
// a gap of at least gap separates them from it, and no change lies in
// that gap, so nothing can bridge it; removing rows only widens gaps.
// A step thus costs the sessions around its changes, not the whole key.
func affectedRange(stored []arrange.GroupEntry, changes []sessionEntry, gap int64) (lo, hi int, err error) {
	present := func(i int) (bool, error) {
		if len(stored[i].Suffix) < 8 {
			return false, errcode.New(errcode.ArrangementCorrupt, "corrupt session entry: %d-byte key", len(stored[i].Suffix))
		}
		w, err := arrange.DecodeWeight(stored[i].Value)
		if err != nil {
			return false, errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt session weight")
		}
		return w > 0, nil
	}
	timeAt := func(i int) int64 { return decodeSessionTime(stored[i].Suffix) }
	// nearest returns the present entry nearest to from in direction
	// step (±1), or -1.
	nearest := func(from, step int) (int, error) {
		for i := from; i >= 0 && i < len(stored); i += step {
			ok, err := present(i)
			if err != nil || ok {
				return i, err
			}
		}
		return -1, nil
	}
	first, last := changes[0].time, changes[len(changes)-1].time
	before := sort.Search(len(stored), func(i int) bool { return len(stored[i].Suffix) < 8 || timeAt(i) > first })
	j, err := nearest(before-1, -1)
	if err != nil {
		return 0, 0, err
	}
	for j >= 0 {
		lo = j
		p, err := nearest(j-1, -1)
		if err != nil {
			return 0, 0, err
		}
		if p < 0 || timeAt(j)-timeAt(p) >= gap {
			break
		}
		j = p
	}
	after := sort.Search(len(stored), func(i int) bool { return len(stored[i].Suffix) < 8 || timeAt(i) >= last })
	hi = len(stored)
	m, err := nearest(after, +1)
	if err != nil {
		return 0, 0, err
	}
	for m >= 0 {
		hi = m + 1
		n, err := nearest(m+1, +1)
		if err != nil {
			return 0, 0, err
		}
		if n < 0 || timeAt(n)-timeAt(m) >= gap {
			hi = m + 1
			break
		}
		m = n
	}
	// Every stored entry a change names is inside: entries at the first
	// or last change's time that are not present (weight ≤ 0) are not
	// reached by the walks above.
	lo = min(lo, sort.Search(len(stored), func(i int) bool { return len(stored[i].Suffix) < 8 || timeAt(i) >= first }))
	hi = max(hi, sort.Search(len(stored), func(i int) bool { return len(stored[i].Suffix) < 8 || timeAt(i) > last }))
	return lo, hi, nil
}

// mergeSessionEntries merges a key's stored entries with its changes
// (sorted by suffix, each suffix once) into one list in suffix order with
// each entry's weights before and after the step.
func mergeSessionEntries(stored []arrange.GroupEntry, changes []sessionEntry) ([]sessionEntry, error) {
	out := make([]sessionEntry, 0, len(stored)+len(changes))
	i, j := 0, 0
	for i < len(stored) || j < len(changes) {
		var c int
		switch {
		case i == len(stored):
			c = 1
		case j == len(changes):
			c = -1
		default:
			c = bytes.Compare(stored[i].Suffix, changes[j].suffix)
		}
		if c > 0 {
			out = append(out, changes[j])
			j++
			continue
		}
		e := stored[i]
		i++
		if len(e.Suffix) < 8 {
			return nil, errcode.New(errcode.ArrangementCorrupt, "corrupt session entry: %d-byte key", len(e.Suffix))
		}
		w, err := arrange.DecodeWeight(e.Value)
		if err != nil {
			return nil, errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt session weight")
		}
		entry := sessionEntry{time: decodeSessionTime(e.Suffix), suffix: e.Suffix, before: w, after: w}
		if c == 0 {
			entry.after += changes[j].after
			j++
		}
		out = append(out, entry)
	}
	return out, nil
}

// emit appends the difference between the sessions of entries before and
// after the step.
func (o *Session) emit(entries []sessionEntry, gap int64, out *zset.Batch) error {
	before := sessionSpans(entries, gap, func(e *sessionEntry) int64 { return e.before })
	after := sessionSpans(entries, gap, func(e *sessionEntry) int64 { return e.after })
	// Sessions of one list never overlap, so both lists are in start
	// order and a session unchanged by the step has the same start and
	// last time in both.
	unchanged := make([]bool, len(after))
	k := 0
	for _, b := range before {
		for k < len(after) && after[k].start < b.start {
			k++
		}
		if k < len(after) && after[k].start == b.start && after[k].last == b.last {
			unchanged[k] = true
			// Same bounds: only the rows whose weight changed.
			for i := min(b.lo, after[k].lo); i < max(b.hi, after[k].hi); i++ {
				e := &entries[i]
				if d := max(e.after, 0) - max(e.before, 0); d != 0 {
					if err := o.add(out, e, b, d); err != nil {
						return err
					}
				}
			}
			continue
		}
		for i := b.lo; i < b.hi; i++ {
			if e := &entries[i]; e.before > 0 {
				if err := o.add(out, e, b, -e.before); err != nil {
					return err
				}
			}
		}
	}
	for k, a := range after {
		if unchanged[k] {
			continue
		}
		for i := a.lo; i < a.hi; i++ {
			if e := &entries[i]; e.after > 0 {
				if err := o.add(out, e, a, e.after); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// add appends entry's row with the session's bounds and weight w.
func (o *Session) add(out *zset.Batch, e *sessionEntry, s sessionSpan, w int64) error {
	row, rest, err := zset.DecodeRow(e.suffix[8:])
	if err != nil || len(rest) != 0 {
		return errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt session row")
	}
	t := o.in[o.spec.Time].Type
	out.Add(append(row, sessionDatum(t, s.start), sessionDatum(t, s.last+o.spec.Gap)), w)
	return nil
}

// sessionSpans splits the entries present under weight (weight > 0) into
// sessions; entries lists them in time order.
func sessionSpans(entries []sessionEntry, gap int64, weight func(*sessionEntry) int64) []sessionSpan {
	var out []sessionSpan
	for i := range entries {
		e := &entries[i]
		if weight(e) <= 0 {
			continue
		}
		if n := len(out); n > 0 && e.time-out[n-1].last < gap {
			out[n-1].last = e.time
			out[n-1].hi = i + 1
			continue
		}
		out = append(out, sessionSpan{start: e.time, last: e.time, lo: i, hi: i + 1})
	}
	return out
}

// sessionTime returns a row's time as an int64 and whether the row
// belongs to a session (finite time, time + gap in range).
func sessionTime(v types.Datum, gap int64) (int64, bool) {
	var us int64
	switch x := v.(type) {
	case types.Timestamp:
		if !x.IsFinite() || !types.TimestampInRange(int64(x)+gap) {
			return 0, false
		}
		us = int64(x)
	case types.TimestampTZ:
		if !types.Timestamp(x).IsFinite() || !types.TimestampInRange(int64(x)+gap) {
			return 0, false
		}
		us = int64(x)
	case int64:
		if x > math.MaxInt64-gap {
			return 0, false
		}
		us = x
	default:
		return 0, false
	}
	return us, true
}

// sessionDatum is the value of time t in the time column's type.
func sessionDatum(t types.Type, v int64) types.Datum {
	switch t.Kind {
	case types.KindTimestamp:
		return types.Timestamp(v)
	case types.KindTimestampTZ:
		return types.TimestampTZ(v)
	}
	return v
}

func appendSessionTime(dst []byte, t int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(t)^(1<<63))
}

func decodeSessionTime(b []byte) int64 {
	return int64(binary.BigEndian.Uint64(b) ^ (1 << 63))
}

// StreamSession is the non-incremental Session over a whole Z-set: rows
// with non-positive weight are absent.
func StreamSession(in types.Schema, spec SessionSpec, batch zset.Batch) (zset.Batch, error) {
	if _, err := sessionSchema(in, spec); err != nil {
		return zset.Batch{}, err
	}
	t := in[spec.Time].Type
	_, parts := byPartition(zset.Consolidate(batch), keyTypes(in, spec.Keys), spec.Keys)
	var out zset.Batch
	for _, p := range parts {
		type timed struct {
			time int64
			row  types.Row
			w    int64
		}
		var rows []timed
		for i, r := range p.Rows {
			if tm, ok := sessionTime(r[spec.Time], spec.Gap); ok && p.Weights[i] > 0 {
				rows = append(rows, timed{tm, r, p.Weights[i]})
			}
		}
		sort.SliceStable(rows, func(a, b int) bool { return rows[a].time < rows[b].time })
		for lo := 0; lo < len(rows); {
			hi := lo + 1
			for hi < len(rows) && rows[hi].time-rows[hi-1].time < spec.Gap {
				hi++
			}
			start, end := sessionDatum(t, rows[lo].time), sessionDatum(t, rows[hi-1].time+spec.Gap)
			for _, r := range rows[lo:hi] {
				out.Add(append(append(types.Row(nil), r.row...), start, end), r.w)
			}
			lo = hi
		}
	}
	return out, nil
}
