package shard

import (
	"encoding/binary"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/runtime"
)

// A view's backfill is bounded in attempts, across restarts: before a
// backfill starts, the shard durably counts the attempt (with the view's
// plan number and a reason that says the process stopped), and the
// backfill's own batch deletes the record. A backfill that keeps failing
// — with an error, or by taking the process down (killed for memory, say)
// so the record stays — is FAILED once it was started
// backfillAttemptsMax times: the shard no longer tries it, reads of the
// view answer RS-1514 with the last reason, and the server starts and
// serves, so the view can be dropped. A backfill refused for memory
// (RS-5502) fails at once: the same data would be refused again.
// RECOMPILE gives the view a new plan number and so a fresh count; DROP
// deletes the record (dropBackfillRecords).
//
//	      attempt counted (durable)        backfill batch applied
//	absent ─────────────────────────► trying ─────────────────────► backfilled
//	                                  │    ▲ error or crash, count < max
//	                                  │    └───────────── (next sync/start)
//	                                  │ count = max, or out of memory
//	                                  ▼
//	                                failed ── DROP ──► absent

// backfillAttemptsMax is how many times a view's backfill is started
// before the view is failed: one at CREATE and a retry at each of the next
// starts, so transient storage failures and restarts that happen to land
// during a long backfill (a deploy, a kill) are retried, but a backfill
// that crashes the process cannot crash-loop the server for long. NB: a
// backfill runs in chunks while the server serves, so a long one meets
// ordinary restarts; with 3 the simulator's crash nemesis failed views
// that were only unlucky (seeds 9400385273785153311, 16651489192130964817).
const backfillAttemptsMax = 10

// metaBackfill keys a view's backfill-attempt record:
//
//	0x06 'B' view(16) → uvarint attempts, uvarint plan,
//	                    uvarint len(code), code, reason
const metaBackfill byte = 'B'

func backfillKey(view catalog.ID) []byte {
	return append([]byte{kv.PrefixShardMeta, metaBackfill}, view.Object[:]...)
}

// backfillRecord is a view's stored attempt count.
type backfillRecord struct {
	attempts uint64
	// plan is the view's catalog plan number the attempts were made with.
	plan uint64
	// code and reason are the last attempt's RS code and error.
	code, reason string
}

func (r backfillRecord) encode() []byte {
	b := binary.AppendUvarint(nil, r.attempts)
	b = binary.AppendUvarint(b, r.plan)
	b = binary.AppendUvarint(b, uint64(len(r.code)))
	b = append(b, r.code...)
	return append(b, r.reason...)
}

func decodeBackfillRecord(v []byte) (backfillRecord, error) {
	var fields [3]uint64
	rest := v
	for i := range fields {
		x, n := binary.Uvarint(rest)
		if n <= 0 {
			return backfillRecord{}, corrupt("backfill record %x", v)
		}
		fields[i], rest = x, rest[n:]
	}
	if fields[2] > uint64(len(rest)) {
		return backfillRecord{}, corrupt("backfill record %x", v)
	}
	return backfillRecord{attempts: fields[0], plan: fields[1], code: string(rest[:fields[2]]), reason: string(rest[fields[2]:])}, nil
}

// backfillRecordOf reads rel's attempt record (zero when it has none, or
// when the attempts were made with another plan).
func (a *Actor) backfillRecordOf(rel *catalog.Relation) (backfillRecord, error) {
	v, ok, err := a.store.Get(backfillKey(rel.ID))
	if err != nil || !ok {
		return backfillRecord{plan: rel.Plan}, err
	}
	r, err := decodeBackfillRecord(v)
	if err != nil {
		return backfillRecord{}, err
	}
	if r.plan != rel.Plan {
		return backfillRecord{plan: rel.Plan}, nil
	}
	return r, nil
}

func (a *Actor) putBackfillRecord(rel *catalog.Relation, r backfillRecord) error {
	return a.store.Apply(&kv.WriteBatch{Ops: []kv.Op{{Key: backfillKey(rel.ID), Value: r.encode()}}})
}

// countBackfillAttempt counts an attempt at rel's backfill, durably,
// before it starts (before its first chunk writes state: backfill.go). It
// returns false (and fails the view) when the view used up its attempts.
func (a *Actor) countBackfillAttempt(ctx runtime.Context, rel *catalog.Relation) (bool, error) {
	r, err := a.backfillRecordOf(rel)
	if err != nil {
		return false, err
	}
	if r.attempts >= backfillAttemptsMax {
		a.fail(ctx, rel, backfillFailure(r))
		return false, nil
	}
	r.attempts++
	r.code, r.reason = errcode.ShardUnavailable.ID, "the process stopped during the backfill"
	return true, a.putBackfillRecord(rel, r)
}

// backfillFailed records why rel's backfill failed. A backfill refused for
// memory fails the view at once (it returns nil: the sync goes on without
// the view); any other error is returned, to be retried by the next sync
// or start while attempts remain.
func (a *Actor) backfillFailed(ctx runtime.Context, rel *catalog.Relation, cause error) error {
	r, err := a.backfillRecordOf(rel)
	if err != nil {
		return err
	}
	r.code, r.reason = errcode.InternalError.ID, cause.Error()
	if e, ok := errcode.As(cause); ok {
		// NB: the coded error's own message, without the layers that
		// wrapped it (circuit, node), which say nothing to a user.
		r.code, r.reason = e.Code.ID, e.Message
	}
	if viewFault(cause) {
		r.attempts = backfillAttemptsMax
	}
	if err := a.putBackfillRecord(rel, r); err != nil {
		return err
	}
	if r.attempts < backfillAttemptsMax {
		return cause
	}
	a.fail(ctx, rel, backfillFailure(r))
	return nil
}

// backfillFailure is the error a view failed by its backfill is in: the
// last attempt's error code, with the attempts in the message.
func backfillFailure(r backfillRecord) error {
	code, ok := errcode.Lookup(r.code)
	if !ok {
		code = errcode.InternalError
	}
	if code == errcode.StepMemoryExceeded {
		return errcode.New(code, "its backfill was refused: %s", r.reason)
	}
	return errcode.New(code, "its backfill failed %d times; the last attempt: %s", r.attempts, r.reason)
}

// dropBackfillRecords deletes the attempt records of views that are no
// longer materialized views of the catalog (dropped), so a view created
// again later starts with a fresh count.
func (a *Actor) dropBackfillRecords(snap *control.Snapshot) error {
	prefix := []byte{kv.PrefixShardMeta, metaBackfill}
	var b kv.WriteBatch
	err := kv.ScanPrefix(a.store, prefix, func(k, _ []byte) error {
		id := catalog.ID{Namespace: snap.Namespace()}
		if len(k) != len(prefix)+len(id.Object) {
			return corrupt("backfill record key %x", k)
		}
		copy(id.Object[:], k[len(prefix):])
		if rel, ok := snap.RelationByID(id); !ok || rel.Kind != catalog.KindMaterializedView {
			b.Ops = append(b.Ops, kv.Op{Key: append([]byte(nil), k...), Delete: true})
		}
		return nil
	})
	if err != nil || len(b.Ops) == 0 {
		return err
	}
	return a.store.Apply(&b)
}
