package shard

import (
	"bytes"
	"encoding/binary"
	"slices"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/internal/assert"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
)

// commit applies a transaction under the next source epoch: table rows and
// the delta log entry in ONE durable batch, then schedules maintenance.
func (a *Actor) commit(ctx runtime.Context, m Commit) (runtime.Message, error) {
	if !a.isTableShard() {
		// INVARIANT: sessions route commits to the table shard
		// (placement.go); a view shard's epochs are the table shard's.
		return nil, errcode.New(errcode.InternalError, "shard %d stores no tables: a commit was routed to a view shard", a.cfg.ID)
	}
	if len(m.Writes) == 0 && m.Offset == nil && len(m.Offsets) == 0 {
		return Committed{Epoch: a.lastEpoch}, nil
	}
	return a.commitAt(ctx, m, a.lastEpoch+1)
}

// commitAt is commit under epoch: the next one of a shard numbering its
// own, or one the control plane handed out (seal.go).
func (a *Actor) commitAt(ctx runtime.Context, m Commit, epoch uint64) (runtime.Message, error) {
	// Write side of the commit pairing: epochs are dense, and nothing past
	// the last epoch is durable yet.
	assert.That(a.durableEpoch <= a.lastEpoch, "durable epoch %d past the last epoch %d", a.durableEpoch, a.lastEpoch)
	at := a.nextEpochTime(ctx)
	batch, err := a.commitBatchOf(m, epoch, at, a.writesUnique(m))
	if err == nil && batch == nil {
		// A key written twice: rebuild with the writes seeing each other.
		batch, err = a.commitBatchOf(m, epoch, at, true)
	}
	if err != nil {
		return nil, err
	}
	group := a.groupCommits()
	apply := a.store.Apply
	if group {
		// Group commit (groupcommit.go): durable with the next shared sync,
		// which the reply waits for.
		apply = a.store.(groupSyncer).ApplyNoWait
	}
	if err := apply(batch); err != nil {
		// NB: the store may hold the batch in memory without it being
		// durable; continuing would let a later commit reuse this epoch.
		// Stop serving until the shard is reopened from durable state.
		a.poison(err)
		return nil, errcode.Wrap(errcode.ShardUnavailable, err, "commit was not made durable")
	}
	a.lastEpoch, a.lastEpochTime = epoch, at
	a.absent.committed(epoch)
	a.adoptWatermarks(&a.pendingMarks)
	if group {
		a.commitUnsynced = true
	} else {
		// A durable write makes every earlier non-waiting write durable
		// too (slate writes its WAL in order).
		a.durableFrontier = a.frontier
		a.durableEpoch = epoch
		a.stats.CommitSyncs++
	}
	a.stats.Commits++
	runtime.Report(ctx, runtime.WorkCommitRow, len(m.Writes))
	a.scheduleStep(ctx)
	return Committed{Epoch: epoch}, nil
}

// commitBatchOf builds a commit's write batch (commitbatch.go): table rows,
// the delta-log entry under epoch (with its time at, epochtime.go), the
// source offset and the last epoch. In
// direct mode (exact false) it returns a nil batch if a key is written
// twice; the caller then rebuilds it in exact mode.
func (a *Actor) commitBatchOf(m Commit, epoch uint64, at types.TimestampTZ, exact bool) (*kv.WriteBatch, error) {
	cb := newCommitBatch(a.store, len(m.Writes), exact)
	a.pendingMarks = watermarkBatch{}
	var byValue []valueDeletes
	var uniquePuts []indexPut
	var pre *commitReads
	if !exact {
		var err error
		if pre, err = a.readCommitKeys(cb, m); err != nil {
			return nil, err
		}
	}
	// of is what the loop looks up per table, kept for the writes of the
	// same table that follow (a COPY's are all one table's): a lookup of
	// each per write was 7% of a bulk commit's CPU.
	var of struct {
		table catalog.ID
		set   bool
		rel   *catalog.Relation
		codec tableCodec
		td    *tableLog
		// owned: every bucket of the table is this shard's (a table
		// that is not partitioned, on its table shard).
		owned bool
		idxs  []tableIndex
	}
	for i, w := range m.Writes {
		if !of.set || w.Table != of.table {
			rel, ok := a.snap.RelationByID(w.Table)
			if !ok || (rel.Kind != catalog.KindTable && rel.Kind != catalog.KindSource) {
				return nil, errcode.New(errcode.UndefinedObject, "table %s does not exist (dropped while the transaction ran)", w.Table)
			}
			codec, err := a.codecOf(rel)
			if err != nil {
				return nil, err
			}
			of.table, of.set, of.rel, of.codec, of.td = w.Table, true, rel, codec, cb.table(w.Table)
			of.owned = !rel.Partitioned() && a.checkOwned(rel, 0) == nil
			of.idxs = a.indexesOf(rel)
		}
		rel, codec, td := of.rel, of.codec, of.td
		ts := codec.ts
		var err error
		if len(rel.PrimaryKey) == 0 {
			// No primary key (INSERT_ONLY or declared without one): a
			// unique synthetic key (epoch, position). No row can exist
			// under it: the epoch is new, and rows of an epoch that never
			// became durable were lost with it (the last epoch is in the
			// same atomic batch), so there is nothing to read first.
			if w.Row == nil {
				if rel.InsertOnly || w.Base == nil || len(w.Base) != len(ts) {
					return nil, errcode.New(errcode.InternalError, "delete from insert-only table %s", rel.Name)
				}
				// A delete by value (rekey.go), applied after the loop.
				byValue = appendDeleteByValue(byValue, w.Table, encodeStoredRow(nil, ts, w.Base))
				continue
			}
			if len(w.Row) != len(ts) {
				return nil, errcode.New(errcode.InternalError, "row of width %d for table %s of %d columns", len(w.Row), rel.Name, len(ts))
			}
			table := w.Table
			if rel.Watermark != nil && !a.admit(&a.pendingMarks, rel, w.Row) {
				// Behind the watermark: counted, and dropped or inserted
				// into the dead-letter table (watermark.go).
				dl, err := a.lateRowsTable(rel)
				if err != nil {
					return nil, err
				}
				if dl == nil {
					continue
				}
				if dlCodec, err := a.codecOf(dl); err != nil {
					return nil, err
				} else if ts = dlCodec.ts; len(ts) != len(w.Row) {
					return nil, errcode.New(errcode.InternalError, "row of width %d for dead-letter table %s of %d columns", len(w.Row), dl.Name, len(ts))
				}
				table, td = dl.ID, cb.table(dl.ID)
			}
			// The bucket is of the stored encoding (BucketOfRow).
			enc := cb.encodeRow(ts, w.Row)
			bucket := partition.BucketOf(enc)
			if !of.owned {
				if err := a.checkOwned(rel, bucket); err != nil {
					return nil, err
				}
			}
			// NB: a late row goes into its dead-letter table under the
			// same (epoch, position) its table would have used: the
			// position is unique in the commit, so no key repeats.
			from := cb.arena.alloc(tableKeyHeadBytes + 8 + 4)
			key := append(from, kv.PrefixOpState, kindTableRows)
			key = append(key, table.Object[:]...)
			key = partition.AppendBucket(key, bucket)
			key = binary.BigEndian.AppendUint64(key, epoch)
			key = binary.BigEndian.AppendUint32(key, uint32(i))
			cb.arena.used(from, key)
			if err := cb.Put(key, enc); err != nil {
				return nil, err
			}
			td.add(enc, 1)
			continue
		}
		keyRow := w.Key
		if keyRow == nil {
			// NB: a keyed table's writes always carry their key, except
			// writes made while it had none (ALTER TABLE ADD PRIMARY KEY
			// committed in between): an insert must then be new, and a
			// delete by value must find its row unchanged.
			src := w.Row
			if src == nil {
				src = w.Base
				w.CheckBase = true
			} else {
				w.MustNotExist = true
			}
			keyRow = make(types.Row, len(rel.PrimaryKey))
			for j, c := range rel.PrimaryKey {
				if src[c] == nil {
					return nil, errcode.New(errcode.NotNullViolation, "null value in column %q of relation %q violates not-null constraint", rel.Columns[c].Name, rel.Name)
				}
				keyRow[j] = src[c]
			}
		}
		key, old, exists, known := pre.read(i, w)
		if key == nil {
			from := cb.arena.alloc(tableKeyHeadBytes + 9*len(rel.PrimaryKey))
			key = appendKey(from, rel, ts, keyRow)
			cb.arena.used(from, key)
		}
		if !of.owned {
			if err := a.checkOwned(rel, keyBucket(key)); err != nil {
				return nil, err
			}
		}
		if !known {
			if old, exists, err = cb.get(key); err != nil {
				return nil, err
			}
		}
		if w.CheckBase {
			if exists != (w.Base != nil) || (exists && !a.sameStoredRow(codec, old, w.Base)) {
				return nil, errcode.New(errcode.OptimisticConflict, "could not serialize access due to concurrent update of %q", rel.Name).
					WithDetail("Key %s was changed by another transaction after this one read it.", describeKey(rel, keyOfWrite(rel, w)))
			}
		}
		var oldEnc []byte
		if idxs := of.idxs; len(idxs) > 0 && (exists || w.Row != nil) {
			var oldRow types.Row
			if exists {
				if oldRow, err = codec.decode(old); err != nil {
					return nil, err
				}
			}
			if w.Row != nil && len(w.Row) != len(ts) {
				return nil, errcode.New(errcode.InternalError, "row of width %d for table %s of %d columns", len(w.Row), rel.Name, len(ts))
			}
			if !(exists && w.MustNotExist) {
				if uniquePuts, err = writeIndexEntries(cb, rel, idxs, ts, key, oldRow, w.Row, uniquePuts); err != nil {
					return nil, err
				}
			}
		}
		if exists {
			if w.MustNotExist {
				return nil, errcode.New(errcode.UniqueViolation, "duplicate key value violates unique constraint %q", rel.PrimaryKeyConstraint()).
					WithDetail("Key %s already exists.", describeKey(rel, w.Row))
			}
			if oldEnc, err = cb.canonical(codec, old); err != nil {
				return nil, err
			}
		}
		if w.Row == nil {
			if exists {
				td.add(oldEnc, -1)
			}
			// NB: also a delete of an absent key writes its op: in direct
			// mode that is how batch() sees an earlier write of the key in
			// this commit (an insert then a delete, as a Kafka upsert
			// followed by its tombstone) and rebuilds in exact mode.
			if exists || cb.exact == nil {
				if err := cb.Delete(key); err != nil {
					return nil, err
				}
			}
			continue
		}
		// INVARIANT: the session validated widths against the same catalog.
		if len(w.Row) != len(ts) {
			return nil, errcode.New(errcode.InternalError, "row of width %d for table %s of %d columns", len(w.Row), rel.Name, len(ts))
		}
		enc := cb.encodeRow(ts, w.Row)
		if err := cb.Put(key, enc); err != nil {
			return nil, err
		}
		if exists && bytes.Equal(oldEnc, enc) {
			continue // unchanged: retraction and insertion cancel
		}
		if exists {
			td.add(oldEnc, -1)
		}
		td.add(enc, 1)
	}
	if err := checkUnique(cb, uniquePuts); err != nil {
		return nil, err
	}
	for _, d := range byValue {
		if err := a.deleteByValue(cb, d.table, d.values); err != nil {
			return nil, err
		}
	}
	marks, err := a.finishWatermarks(&a.pendingMarks, cb)
	if err != nil {
		return nil, err
	}
	if err := cb.Put(logKey(epoch), appendLogWatermarks(cb.encodeLog(at), marks)); err != nil {
		return nil, err
	}
	txn := cb
	offsets := m.Offsets
	if m.Offset != nil {
		offsets = append([]SourceOffset{*m.Offset}, offsets...)
	}
	for _, o := range offsets {
		// INVARIANT: a connector's offset only moves forward.
		prev, err := getUint64(cb.reader(), offsetKey(o.Source, o.Partition))
		if err != nil {
			return nil, err
		}
		if o.FromSet && o.From != prev {
			return nil, errcode.New(errcode.SourceOffsetMoved, "source %s continues from offset %d, but its stored offset is %d", o.Source, o.From, prev)
		}
		if o.Offset < prev {
			return nil, errcode.New(errcode.InternalError, "source %s offset (partition %d) went back from %d to %d", o.Source, o.Partition, prev, o.Offset)
		}
		if err := putUint64(txn, offsetKey(o.Source, o.Partition), o.Offset); err != nil {
			return nil, err
		}
	}
	if err := putUint64(txn, lastEpochKey(), epoch); err != nil {
		return nil, err
	}
	if m.Resolves != 0 {
		if err := txn.Delete(intentKey(m.Resolves)); err != nil {
			return nil, err
		}
	}
	b, ok := cb.batch()
	if !ok {
		return nil, nil
	}
	a.absent.tables = a.absent.tables[:0]
	for _, t := range cb.tables {
		a.absent.tables = append(a.absent.tables, t.table)
	}
	return b, nil
}

func (a *Actor) typesOf(id catalog.ID) []types.Type {
	rel, _ := a.snap.RelationByID(id)
	return columnTypes(rel)
}

// codecOfID is codecOf by id; ok is false for a relation that no longer
// exists (its logged rows no longer matter) or whose defaults fail.
func (a *Actor) codecOfID(id catalog.ID) (tableCodec, bool) {
	rel, ok := a.snap.RelationByID(id)
	if !ok {
		return tableCodec{}, false
	}
	c, err := a.codecOf(rel)
	return c, err == nil
}

// scheduleStep queues an epoch step behind the messages in the mailbox.
// NB: a send to itself, which a mailbox past its bound drops (runtime/real's
// hard bound, the simulator's MailboxMessagesMax); with stepScheduled set
// no step would be queued again, so the storage tick queues one anew
// while epochs wait (rearmStep). A timer instead (After(0)) fires on its
// own goroutine in runtime/real, after messages sent later, and views
// read after a restart came out behind their tables
// (TestCorruptionNeverChangesViews, TestViewStateFormatAcrossRestarts).
func (a *Actor) scheduleStep(ctx runtime.Context) {
	if !a.stepScheduled {
		a.stepScheduled, a.stepScheduledAt = true, ctx.Now()
		ctx.Send(ctx.Self(), epochTick{})
	}
}

// stepRearmAfter is how long a queued epoch step may stay unrun, with
// epochs waiting for it, before the storage tick queues another
// (rearmStep): far longer than a mailbox takes to drain, so a step that
// is only queued is never queued twice. Simulation range: fixed.
const stepRearmAfter = time.Second

// rearmStep queues an epoch step on the storage tick when the one queued
// has not run for stepRearmAfter while epochs wait (scheduleStep: a
// dropped send to itself left none queued).
func (a *Actor) rearmStep(ctx runtime.Context) {
	if a.stepScheduled && ctx.Now().Sub(a.stepScheduledAt) >= stepRearmAfter && a.snap != nil && a.frontier < a.stepTarget() {
		a.stepScheduled = false
		a.scheduleStep(ctx)
	}
}

func describeKey(rel *catalog.Relation, row types.Row) string {
	var names, vals bytes.Buffer
	for i, c := range rel.PrimaryKey {
		if i > 0 {
			names.WriteString(", ")
			vals.WriteString(", ")
		}
		names.WriteString(rel.Columns[c].Name)
		if row != nil {
			vals.WriteString(types.Format(rel.Columns[c].Type, row[c]))
		}
	}
	return "(" + names.String() + ")=(" + vals.String() + ")"
}

// keyOfWrite returns the primary key values of a write.
func keyOfWrite(rel *catalog.Relation, w RowWrite) types.Row {
	if w.Key != nil || w.Row == nil {
		return w.Key
	}
	k := make(types.Row, len(rel.PrimaryKey))
	for j, c := range rel.PrimaryKey {
		k[j] = w.Row[c]
	}
	return k
}

// sameStoredRow reports whether stored (bytes written under an older or
// the current version of the table) holds row. Both sides are re-encoded
// with the current codec, whose encoding is canonical, so rows written
// before an ADD COLUMN compare equal to their current-width reading.
func (a *Actor) sameStoredRow(codec tableCodec, stored []byte, row types.Row) bool {
	cur, err := codec.decode(stored)
	if err != nil || len(row) != len(codec.ts) {
		return false
	}
	return bytes.Equal(encodeStoredRow(nil, codec.ts, cur), encodeStoredRow(nil, codec.ts, row))
}

// commitReads are a direct-mode commit's reads of its keyed writes' rows,
// made before the commit's loop in one ordered pass (getMany) instead of a
// search of the store per write.
type commitReads struct {
	// empty, when set, is the one table m writes, and it holds no stored
	// row: nothing needed reading (keys is nil).
	empty *catalog.ID
	// keys[i] is write i's storage key (in the commit's arena), nil for a
	// write the loop keys and reads itself.
	keys [][]byte
	// found are the writes whose key holds a stored row, by write index
	// (the row copied into the arena); next is the loop's place in them.
	found []foundRow
	next  int
}

type foundRow struct {
	write int
	row   []byte
}

// read returns write i's storage key (nil: the loop computes it) and, when
// known, its stored row; the loop asks in write order.
func (p *commitReads) read(i int, w RowWrite) (key, row []byte, exists, known bool) {
	if p == nil {
		return nil, nil, false, false
	}
	if p.empty != nil && w.Table == *p.empty {
		return nil, nil, false, true
	}
	if p.keys == nil || p.keys[i] == nil {
		return nil, nil, false, false
	}
	for p.next < len(p.found) && p.found[p.next].write < i {
		p.next++
	}
	if p.next < len(p.found) && p.found[p.next].write == i {
		return p.keys[i], p.found[p.next].row, true, true
	}
	return p.keys[i], nil, false, true
}

// readCommitKeys reads the stored rows under the keys of m's keyed writes
// (those carrying their key; the loop handles the rest, and every error).
// Direct mode only: the reads see the store, not the commit's own writes.
func (a *Actor) readCommitKeys(cb *commitBatch, m Commit) (*commitReads, error) {
	// A commit writing one table that holds no rows (a first load) reads
	// nothing: one seek tells.
	if len(m.Writes) > 1 {
		one := m.Writes[0].Table
		for _, w := range m.Writes {
			if w.Table != one {
				return a.readCommitKeysOf(cb, m)
			}
		}
		empty, err := holdsNone(cb.store, tablePrefix(one))
		if err != nil {
			return nil, err
		}
		if empty {
			return &commitReads{empty: &one}, nil
		}
	}
	return a.readCommitKeysOf(cb, m)
}

// readCommitKeysOf is readCommitKeys by keys.
func (a *Actor) readCommitKeysOf(cb *commitBatch, m Commit) (*commitReads, error) {
	p := &commitReads{keys: make([][]byte, len(m.Writes))}
	var keys [][]byte
	var writes []int32
	// proven: the table of the last write seen, and whether its keys
	// found absent need no read (absent.go).
	var provenOf catalog.ID
	proven, provenSet := false, false
	for i, w := range m.Writes {
		if w.Key == nil {
			continue
		}
		if !provenSet || w.Table != provenOf {
			provenOf, proven, provenSet = w.Table, a.provenAbsent(m, w.Table), true
		}
		rel, ok := a.snap.RelationByID(w.Table)
		if !ok || (rel.Kind != catalog.KindTable && rel.Kind != catalog.KindSource) || len(rel.PrimaryKey) == 0 || len(w.Key) != len(rel.PrimaryKey) {
			continue
		}
		codec, err := a.codecOf(rel)
		if err != nil {
			continue
		}
		from := cb.arena.alloc(tableKeyHeadBytes + 9*len(rel.PrimaryKey))
		key := appendKey(from, rel, codec.ts, w.Key)
		cb.arena.used(from, key)
		p.keys[i] = key
		if proven && w.MustNotExist && !w.CheckBase {
			continue // known absent: read returns it as not found
		}
		if keys == nil {
			keys, writes = make([][]byte, 0, len(m.Writes)), make([]int32, 0, len(m.Writes))
		}
		keys, writes = append(keys, key), append(writes, int32(i))
	}
	err := getMany(cb.store, nil, keys, func(j int, v []byte, ok bool) error {
		if ok {
			dst := cb.arena.alloc(len(v))
			row := append(dst, v...)
			cb.arena.used(dst, row)
			p.found = append(p.found, foundRow{write: int(writes[j]), row: row})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(p.found, func(x, y foundRow) int { return x.write - y.write })
	return p, nil
}
