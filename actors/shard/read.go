package shard

import (
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/internal/assert"
	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/runtime"
)

// read returns consistent snapshots after maintenance caught up to MinEpoch
// (read-your-writes, spec §12.8.1: the shard runs the pending step itself
// rather than making the reader wait for a timer).
func (a *Actor) read(ctx runtime.Context, m Read) (runtime.Message, error) {
	if m.At != 0 {
		return a.readAt(m)
	}
	if m.AtEpoch {
		return a.readAtEpoch(m)
	}
	// Tables hold every committed epoch; views reflect the frontier. A
	// read of both catches up completely so they describe one epoch
	// (found by sim/system with concurrent sessions, seed 1).
	// After a restart, the frontier a reader may have seen (readFloor).
	target := max(m.MinEpoch, a.readFloor)
	if a.mixesTablesAndViews(m.Relations) {
		target = a.lastEpoch
	}
	for a.frontier < target && a.frontier < a.stepTarget() {
		if err := a.step(ctx); err != nil {
			return nil, err
		}
	}
	if err := a.makeFrontierShowable(); err != nil {
		return nil, err
	}
	// Paired with the epochs read back at open (readFloor, or the table
	// shard's durable epoch a view shard learns then): the epochs a reader
	// is shown are durable, here or on the table shard, so a restart
	// replays up to them.
	assert.That((a.frontier <= a.durableEpoch || !a.isTableShard()) && a.frontier >= a.readFloor, "showing frontier %d, epochs durable up to %d, read floor %d", a.frontier, a.durableEpoch, a.readFloor)
	res := ReadResult{Frontier: a.frontier, FrontierTime: a.frontierTime}
	for i, id := range m.Relations {
		b, err := a.snapshotIn(a.store, id, m.rangesOf(i))
		if err != nil {
			return nil, err
		}
		res.Batches = append(res.Batches, b)
	}
	return res, nil
}

// rangesOf is the key ranges Relations[i] is read in (nil: all of it).
func (m Read) rangesOf(i int) []KeyRange {
	if i < len(m.Ranges) {
		return m.Ranges[i]
	}
	return nil
}

// mixesTablesAndViews reports whether ids name both stored rows (tables,
// sources) and materialized views.
func (a *Actor) mixesTablesAndViews(ids []catalog.ID) bool {
	var tables, views bool
	if a.snap == nil {
		return false
	}
	for _, id := range ids {
		if rel, ok := a.snap.RelationByID(id); ok {
			tables = tables || rel.Kind != catalog.KindMaterializedView
			views = views || rel.Kind == catalog.KindMaterializedView
		}
	}
	return tables && views
}

func (a *Actor) lookup(m Lookup) (runtime.Message, error) {
	rel, ok := a.snap.RelationByID(m.Table)
	if !ok {
		return nil, errcode.New(errcode.UndefinedObject, "table %s does not exist", m.Table)
	}
	codec, err := a.codecOf(rel)
	if err != nil {
		return nil, err
	}
	ts := codec.ts
	r, err := a.readerAt(m.At)
	if err != nil {
		return nil, err
	}
	out := LookupResult{Rows: make([]types.Row, len(m.Keys))}
	if m.At == 0 {
		out.Seen = a.lookupSeen()
	}
	if m.At == 0 && len(m.Keys) > 1 {
		// A table being loaded for the first time (a COPY's chunks, each
		// a lookup of thousands of new keys) holds none of them, which
		// one seek tells before any key is encoded.
		if empty, err := holdsNone(r, tablePrefix(rel.ID)); err != nil || empty {
			return out, err
		}
	}
	// The keys in one buffer, read in one ordered pass (getMany): a COPY
	// chunk's thousands of keys each cost a search from the top of the
	// memtable otherwise.
	keys := make([][]byte, len(m.Keys))
	// NB: a key stays in the array it was appended to when a later append
	// moves buf; nothing writes those bytes again.
	buf := make([]byte, 0, len(m.Keys)*(tableKeyHeadBytes+9*len(rel.PrimaryKey)))
	for i, k := range m.Keys {
		from := len(buf)
		buf = appendKey(buf, rel, ts, k)
		keys[i] = buf[from:len(buf):len(buf)]
	}
	var prefix []byte
	if m.At != 0 {
		prefix = tablePrefix(rel.ID) // (else checked above)
	}
	err = getMany(r, prefix, keys, func(i int, v []byte, ok bool) error {
		if !ok {
			return nil
		}
		var err error
		out.Rows[i], err = codec.decode(v)
		return err
	})
	if err != nil {
		return nil, err
	}
	undo, err := a.undoOf(m.At, m.Table)
	if err != nil || len(undo.Rows) == 0 {
		return out, err
	}
	// A partitioned layout's snapshot: the rows as they were before the
	// changes after its epoch (openSnapshotAt).
	byKey := map[string][]int{}
	pk := make(types.Row, len(rel.PrimaryKey))
	var key []byte
	for j, row := range undo.Rows {
		for c, col := range rel.PrimaryKey {
			pk[c] = row[col]
		}
		key = appendKey(key[:0], rel, ts, pk)
		byKey[string(key)] = append(byKey[string(key)], j)
	}
	for i := range m.Keys {
		changes := byKey[string(keys[i])]
		if len(changes) == 0 {
			continue
		}
		var b zset.Batch
		if out.Rows[i] != nil {
			b.Add(out.Rows[i], 1)
		}
		for _, j := range changes {
			b.Add(undo.Rows[j], -undo.Weights[j])
		}
		out.Rows[i] = nil
		b = zset.Consolidate(b)
		for j, row := range b.Rows {
			if b.Weights[j] > 0 {
				out.Rows[i] = row
			}
		}
	}
	return out, nil
}

// status is the shard's Status; noRowCounts leaves the views' Rows 0
// (GetStatus).
func (a *Actor) status(ctx runtime.Context, noRowCounts bool) Status {
	st := a.stats
	// A status shows no less than a read did before a restart (readFloor).
	for a.frontier < a.readFloor && a.frontier < a.stepTarget() {
		if err := a.step(ctx); err != nil {
			st.LastError = err.Error()
			break
		}
	}
	if a.frontier > a.durableEpoch && a.isTableShard() {
		// The epochs a status shows are durable; the steps over them need
		// not be (makeFrontierShowable).
		if err := a.makeFrontierDurable(); err != nil {
			st.LastError = err.Error()
		}
	}
	st.Ready = a.ready
	st.LastEpoch = a.lastEpoch
	st.Frontier = a.frontier
	st.Shard = uint32(a.cfg.ID)
	st.DurableEpoch = a.durableEpoch
	st.Watermarks = a.watermarkStatuses()
	for _, o := range a.exchange.out {
		x := ExchangeStatus{Peer: uint32(o.peer), Acked: o.acked, Sent: o.sent, PeerFrontier: o.frontier, InFlight: len(o.inFlight), Credit: exchangeFramesInFlight - len(o.inFlight)}
		for _, f := range o.inFlight {
			x.InFlightBytes += int64(f.bytes)
		}
		st.Exchange = append(st.Exchange, x)
	}
	for _, e := range a.exchange.taken { //lint:maprange a sum
		st.ExchangeTakenBytes += int64(len(e))
	}
	for _, es := range a.exchange.takenFrom { //lint:maprange a sum
		for _, e := range es {
			st.ExchangeTakenBytes += int64(len(e))
		}
	}
	if a.snap != nil {
		st.CatalogVer = a.snap.Version
	}
	for _, v := range a.views {
		if v.rel.StageOf != nil {
			// A lower stage of a staged view (stages.go): a part of the
			// view's maintenance, not a view (its failures are listed).
			continue
		}
		vs := ViewStatus{View: v.rel.ID, Name: v.rel.Name, Nodes: v.circuit.Stats()}
		for _, n := range vs.Nodes {
			vs.StateRows += n.StateRows
			vs.StateBytes += n.StateBytes
		}
		if noRowCounts {
			if err := circuit.ViewHealthy(a.store, ViewID(v.rel.ID)); err != nil {
				vs.Error = err.Error()
			}
		} else if n, err := circuit.ViewRowCount(a.store, ViewID(v.rel.ID)); err != nil {
			vs.Error = err.Error()
		} else {
			vs.Rows = n
		}
		st.Views = append(st.Views, vs)
	}
	st.Views = append(st.Views, a.failedStatuses()...)
	st.Views = append(st.Views, a.backfillStatuses()...)
	sortViewStatuses(st.Views)
	return st
}
