package shard

import (
	"encoding/binary"
	"sort"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/op"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// Event-time watermarks. A table declared with a watermark
//
//	CREATE TABLE bids (…, ts timestamptz) WITH (watermark = 'ts - interval ''5 seconds''')
//
// has a watermark W = max(ts committed) − lateness, kept by the table
// shard, which takes every commit:
//
//   - A commit judges its inserted rows against W as it was before the
//     commit: a row whose event time is below it is late, and is counted
//     and dropped (not stored, not logged), or, when the table names a
//     dead-letter table (WITH (late_rows = 'bids_late')), inserted into
//     that table instead, in the same batch and log entry as the on-time
//     rows, so views over it follow and a crash keeps both or neither.
//     Rows of one transaction are never late relative to each other; a
//     NULL event time is never late.
//   - W then moves to max(W, max(ts of the commit's rows) − lateness): it
//     never goes back. The new W and the late count are written in the
//     commit's batch ('w' below), and the log entry carries every W the
//     commit moved (the 'W' trailer), so the exchange hands it to the view
//     shards with the rows.
//   - An epoch step takes the largest W of the entries it consumes, hands
//     them to the view circuits (circuit.SetWatermarks: a windowed
//     aggregate forgets the windows W passed, op.AggregateWatermark) and
//     writes them with the frontier ('m' below), so a restart or a step
//     recomputed after a crash closes the same windows.
//
// A table with a watermark is insert-only (no UPDATE or DELETE can reach a
// row behind W), so a row can reach a view only while its window is open.
//
//	0x06 'w' object(16)   → W(8) late(8)   commit side (table shard)
//	0x06 'm' object(16)   → W(8)           as of the frontier (every shard)
//	log entry  … ['T' time(8)] ['W' uvarint n, n × (object(16) W(8))]
const (
	metaCommitWatermark byte = 'w'
	metaStepWatermark   byte = 'm'
	logWatermarkTag     byte = 'W'
)

func commitWatermarkKey(obj catalog.ObjectID) []byte {
	return append([]byte{kv.PrefixShardMeta, metaCommitWatermark}, obj[:]...)
}

func stepWatermarkKey(obj catalog.ObjectID) []byte {
	return append([]byte{kv.PrefixShardMeta, metaStepWatermark}, obj[:]...)
}

// commitWatermark is one table's watermark on the commit side.
type commitWatermark struct {
	at types.TimestampTZ
	// set is false until the table's first row with an event time.
	set bool
	// late counts the rows behind the watermark (dropped or
	// dead-lettered).
	late uint64
}

// logWatermark is one watermark a log entry carries.
type logWatermark struct {
	table catalog.ObjectID
	at    types.TimestampTZ
}

// watermarkBatch is one commit's effect on the watermarks, adopted once
// its batch is applied (commitBatchOf may build a batch twice).
type watermarkBatch struct {
	// maxSeen is the largest event time per table among the commit's rows.
	maxSeen map[catalog.ObjectID]types.TimestampTZ
	// late counts the commit's late rows per table.
	late map[catalog.ObjectID]uint64
	// next are the tables' new commit-side watermarks, by finish.
	next map[catalog.ObjectID]commitWatermark
}

// eventMicros is a row's event time in microseconds; ok is false for NULL.
func eventMicros(d types.Datum) (types.TimestampTZ, bool) {
	switch x := d.(type) {
	case types.TimestampTZ:
		return x, true
	case types.Timestamp:
		return types.TimestampTZ(x), true
	}
	return 0, false
}

// admit reports whether an inserted row of rel (which has a watermark)
// is on time, recording its event time or counting it late.
func (a *Actor) admit(wb *watermarkBatch, rel *catalog.Relation, row types.Row) bool {
	at, ok := eventMicros(row[rel.Watermark.Column])
	if !ok {
		return true
	}
	obj := rel.ID.Object
	if cur := a.commitMarks[obj]; cur.set && at < cur.at {
		if wb.late == nil {
			wb.late = map[catalog.ObjectID]uint64{}
		}
		wb.late[obj]++
		return false
	}
	if wb.maxSeen == nil {
		wb.maxSeen = map[catalog.ObjectID]types.TimestampTZ{}
	}
	if prev, seen := wb.maxSeen[obj]; !seen || at > prev {
		wb.maxSeen[obj] = at
	}
	return true
}

// lateRowsTable is the dead-letter table rel's late rows go into (WITH
// (late_rows = 't')); nil when they are dropped.
func (a *Actor) lateRowsTable(rel *catalog.Relation) (*catalog.Relation, error) {
	if rel.Watermark.LateRows == nil {
		return nil, nil
	}
	dl, ok := a.snap.RelationByID(*rel.Watermark.LateRows)
	// INVARIANT: the control plane refuses to drop a dead-letter table
	// while a table names it, and checks it is a keyless table at CREATE.
	if !ok || dl.Kind != catalog.KindTable || len(dl.PrimaryKey) > 0 {
		return nil, errcode.New(errcode.InternalError, "the dead-letter table %s of table %s is missing or keyed", rel.Watermark.LateRows, rel.Name)
	}
	return dl, nil
}

// finish writes the commit's new watermarks and late counts into its
// batch and returns the log trailer's watermarks (those that moved),
// sorted by table.
func (a *Actor) finishWatermarks(wb *watermarkBatch, w kv.Writer) ([]logWatermark, error) {
	tables := map[catalog.ObjectID]bool{}
	for obj := range wb.maxSeen { //lint:maprange collected into a set, sorted below
		tables[obj] = true
	}
	for obj := range wb.late { //lint:maprange collected into a set, sorted below
		tables[obj] = true
	}
	objs := make([]catalog.ObjectID, 0, len(tables))
	for obj := range tables { //lint:maprange sorted below
		objs = append(objs, obj)
	}
	sort.Slice(objs, func(i, j int) bool { return string(objs[i][:]) < string(objs[j][:]) })
	var moved []logWatermark
	wb.next = map[catalog.ObjectID]commitWatermark{}
	for _, obj := range objs {
		cur := a.commitMarks[obj]
		next := cur
		next.late += wb.late[obj]
		if seen, ok := wb.maxSeen[obj]; ok {
			rel, _ := a.snap.RelationByID(catalog.ID{Namespace: a.snap.Namespace(), Object: obj})
			at := seen - types.TimestampTZ(rel.Watermark.LatenessMicros)
			if !cur.set || at > cur.at {
				next.at, next.set = at, true
				moved = append(moved, logWatermark{table: obj, at: at})
			}
		}
		// INVARIANT: a watermark never goes back.
		if cur.set && next.at < cur.at {
			panic("shard: watermark went backwards")
		}
		v := binary.BigEndian.AppendUint64(nil, uint64(next.at))
		if err := w.Put(commitWatermarkKey(obj), binary.BigEndian.AppendUint64(v, next.late)); err != nil {
			return nil, err
		}
		wb.next[obj] = next
	}
	return moved, nil
}

// adoptWatermarks makes an applied commit's watermarks current.
func (a *Actor) adoptWatermarks(wb *watermarkBatch) {
	for obj, m := range wb.next { //lint:maprange each table's value is set independently
		if a.commitMarks == nil {
			a.commitMarks = map[catalog.ObjectID]commitWatermark{}
		}
		a.commitMarks[obj] = m
	}
}

// appendLogWatermarks appends the watermark trailer of a log entry.
func appendLogWatermarks(b []byte, marks []logWatermark) []byte {
	if len(marks) == 0 {
		return b
	}
	b = binary.AppendUvarint(append(b, logWatermarkTag), uint64(len(marks)))
	for _, m := range marks {
		b = append(b, m.table[:]...)
		b = binary.BigEndian.AppendUint64(b, uint64(m.at))
	}
	return b
}

// readLogWatermarks reads the watermark trailer (none: no bytes); ok is
// false when the bytes are not one.
func readLogWatermarks(src []byte, fn func(logWatermark)) (rest []byte, ok bool) {
	if len(src) == 0 || src[0] != logWatermarkTag {
		return src, true
	}
	n, used := binary.Uvarint(src[1:])
	if used <= 0 || n > uint64(len(src)) {
		return src, false
	}
	src = src[1+used:]
	for i := uint64(0); i < n; i++ {
		if len(src) < 24 {
			return src, false
		}
		var m logWatermark
		copy(m.table[:], src[:16])
		m.at = types.TimestampTZ(binary.BigEndian.Uint64(src[16:24]))
		if fn != nil {
			fn(m)
		}
		src = src[24:]
	}
	return src, true
}

// loadWatermarks reads both sides' watermarks at open.
func (a *Actor) loadWatermarks(r kv.Reader) error {
	a.commitMarks, a.stepMarks = nil, nil
	err := kv.ScanPrefix(r, []byte{kv.PrefixShardMeta, metaCommitWatermark}, func(k, v []byte) error {
		if len(k) != 2+16 || len(v) != 16 {
			return corrupt("watermark key %x holds %d bytes", k, len(v))
		}
		var obj catalog.ObjectID
		copy(obj[:], k[2:])
		if a.commitMarks == nil {
			a.commitMarks = map[catalog.ObjectID]commitWatermark{}
		}
		a.commitMarks[obj] = commitWatermark{at: types.TimestampTZ(binary.BigEndian.Uint64(v)), set: true, late: binary.BigEndian.Uint64(v[8:])}
		return nil
	})
	if err != nil {
		return err
	}
	return kv.ScanPrefix(r, []byte{kv.PrefixShardMeta, metaStepWatermark}, func(k, v []byte) error {
		if len(k) != 2+16 || len(v) != 8 {
			return corrupt("watermark key %x holds %d bytes", k, len(v))
		}
		var obj catalog.ObjectID
		copy(obj[:], k[2:])
		raiseMark(&a.stepMarks, obj, types.TimestampTZ(binary.BigEndian.Uint64(v)))
		return nil
	})
}

// raiseMark raises a table's watermark in marks; it reports whether it
// moved (watermarks never go back).
func raiseMark(marks *map[op.WatermarkSource]types.TimestampTZ, obj catalog.ObjectID, at types.TimestampTZ) bool {
	if *marks == nil {
		*marks = map[op.WatermarkSource]types.TimestampTZ{}
	}
	src := op.WatermarkSource(obj)
	if cur, ok := (*marks)[src]; ok && cur >= at {
		return false
	}
	(*marks)[src] = at
	return true
}

// writeStepMarks writes the watermarks a step moved in its batch.
func writeStepMarks(w kv.Writer, moved []logWatermark) error {
	for _, m := range moved {
		if err := putTime(w, stepWatermarkKey(m.table), m.at); err != nil {
			return err
		}
	}
	return nil
}

// stepWatermarks is a copy of the watermarks as of the frontier, for a
// circuit (circuits keep the map they are given).
func (a *Actor) stepWatermarks() map[op.WatermarkSource]types.TimestampTZ {
	if len(a.stepMarks) == 0 {
		return nil
	}
	out := make(map[op.WatermarkSource]types.TimestampTZ, len(a.stepMarks))
	for k, v := range a.stepMarks { //lint:maprange copied into a map keyed the same way
		out[k] = v
	}
	return out
}

// WatermarkStatus is one table's watermark in the shard's Status.
type WatermarkStatus struct {
	Table catalog.ID
	Name  string
	// Watermark is the table's watermark (Set false: no row yet).
	Watermark types.TimestampTZ
	Set       bool
	// LateRows counts the rows behind it (dropped or dead-lettered).
	LateRows uint64
}

// watermarkStatuses lists the tables with a watermark, by name.
func (a *Actor) watermarkStatuses() []WatermarkStatus {
	if a.snap == nil || !a.isTableShard() {
		return nil
	}
	var out []WatermarkStatus
	for _, rel := range a.snap.Relations() {
		if rel.Watermark == nil {
			continue
		}
		m := a.commitMarks[rel.ID.Object]
		out = append(out, WatermarkStatus{Table: rel.ID, Name: rel.Name, Watermark: m.at, Set: m.set, LateRows: m.late})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
