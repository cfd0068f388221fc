package shard

import (
	"encoding/binary"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/keyenc"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
)

// Transactions on several table shards of a partitioned layout (seal.go).
// The session coordinates; the lowest participant is the home, which
// records the decision:
//
//	session         participants (ascending)         home
//	Prepare{txn, writes} ──► check the writes, make the intent durable,
//	                         hold other commits and the seal
//	  ◄── Prepared
//	AllocEpoch ──► control plane: E
//	Decide{txn, E} ──────────────────────────────────► decision, durable
//	  ◄──────────────────────────────────────────────── Decided{E}
//	COMMIT answered
//	Resolve{txn, E} ──► apply the intent as its entry at E (and delete it),
//	                    release what it held
//
// While in doubt a participant seals nothing past what it knew when it
// prepared (E comes later, so above it): no view steps an epoch one
// participant shows and another has not resolved yet. It holds its other
// commits, lookups and prepares, so the writes it checked at prepare are
// still valid at resolve. One intent at a time, and the session prepares
// every part at once, so two transactions could wait on each other: a
// prepare of a transaction older than the one in doubt (a lower id) waits,
// a younger one is refused (PrepareRefused: wait-die), and its session
// drops its parts and tries again with a new id. Waits only ever go from
// an older transaction to a younger, so they never form a cycle.
//
// An intent in doubt for intentQueryEvery (or found at open) asks the home
// (DecisionQuery); a home without a decision records an abort first
// (presumed abort), so a Decide arriving later is refused.
type (
	// Prepare (session → participant) makes Writes, the participant's
	// part of transaction Txn, a durable intent. → Prepared.
	Prepare struct {
		CatalogVersion uint64
		Txn            uint64
		Home           partition.ShardID
		Writes         []RowWrite
	}
	// Prepared answers Prepare.
	Prepared struct{ Txn uint64 }
	// PrepareRefused answers a Prepare of a transaction younger than the
	// one in doubt on the participant (Waiting): the session resolves its
	// parts as aborted and tries again.
	PrepareRefused struct{ Txn, Waiting uint64 }
	// Decide (session → home): every participant prepared; commit at
	// Epoch, which the session had the control plane hand out after the
	// last prepare (so above every participant's seal). → Decided.
	Decide struct {
		Txn   uint64
		Epoch uint64
	}
	// Decided is a durable decision: commit at Epoch, or Aborted.
	Decided struct {
		Txn     uint64
		Epoch   uint64
		Aborted bool
	}
	// Resolve (session → participant) applies (at Epoch) or drops
	// (Abort) the intent of Txn. → Resolved.
	Resolve struct {
		Txn   uint64
		Epoch uint64
		Abort bool
	}
	// Resolved answers Resolve.
	Resolved struct{ Txn uint64 }
	// DecisionQuery (participant in doubt → home): the decision of Txn,
	// recording an abort when there is none. → Decided.
	DecisionQuery struct{ Txn uint64 }
)

// intentQuery asks the home when an intent stays in doubt.
type intentQuery struct{ Txn uint64 }

// intentQueryEvery is how long an intent waits for its Resolve before it
// asks the home. Simulation range: fixed.
const intentQueryEvery = time.Second

const (
	metaIntent   byte = 'P'
	metaDecision byte = 'D'
)

func intentKey(txn uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{kv.PrefixShardMeta, metaIntent}, txn)
}

func decisionKey(txn uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{kv.PrefixShardMeta, metaDecision}, txn)
}

// twoPhase is a shard's part in transactions on several shards.
type twoPhase struct {
	// intent is the transaction in doubt here (nil: none); cap the seal
	// it holds.
	intent *intentState
	cap    uint64
	// held are the messages waiting for the intent's resolution, and
	// preparing the prepares waiting for the allocation in flight.
	held, preparing []parkedMessage
}

type intentState struct {
	txn  uint64
	home partition.ShardID
	msg  Commit
	// raw is the durable record read back at open, decoded once the
	// shard has its catalog.
	raw []byte
}

// inDoubt reports whether a transaction's intent is in doubt here.
func (a *Actor) inDoubt() bool { return a.twopc.intent != nil }

// holdForIntent holds msg while an intent is in doubt; it reports whether
// it did.
func (a *Actor) holdForIntent(ctx runtime.Context, msg runtime.Message) bool {
	if !a.inDoubt() {
		return false
	}
	a.twopc.held = append(a.twopc.held, parkedMessage{msg: msg, from: ctx.From(), reply: ctx.Defer()})
	return true
}

// releaseHeld replays the messages held for a resolved intent.
func (a *Actor) releaseHeld(ctx runtime.Context) {
	held := a.twopc.held
	a.twopc.held = nil
	a.replay(ctx, held)
}

// replay receives parked messages again, each from its sender.
func (a *Actor) replay(ctx runtime.Context, parked []parkedMessage) {
	for _, p := range parked {
		a.Receive(replayContext{Context: ctx, from: p.from, reply: p.reply}, p.msg)
	}
}

// receivePrepare checks a transaction's writes here and makes them a
// durable intent.
func (a *Actor) receivePrepare(ctx runtime.Context, m Prepare) {
	if in := a.twopc.intent; in != nil && m.Txn > in.txn {
		ctx.Reply(PrepareRefused{Txn: m.Txn, Waiting: in.txn})
		return
	}
	if a.holdForIntent(ctx, m) {
		return
	}
	if a.seal.asking {
		// Its commits get epochs below the decision's only if they get
		// them before the prepare: wait for them (no new ask meanwhile).
		a.twopc.preparing = append(a.twopc.preparing, parkedMessage{msg: m, from: ctx.From(), reply: ctx.Defer()})
		return
	}
	c := Commit{CatalogVersion: m.CatalogVersion, Writes: m.Writes}
	// The same checks a commit makes (uniqueness, the rows read); the
	// batch itself is built again at the decision's epoch.
	b, err := a.commitBatchOf(c, a.lastEpoch+1, a.lastEpochTime, a.writesUnique(c))
	if err == nil && b == nil {
		_, err = a.commitBatchOf(c, a.lastEpoch+1, a.lastEpochTime, true)
	}
	a.pendingMarks = watermarkBatch{}
	if err != nil {
		ctx.Reply(err)
		return
	}
	enc, err := a.encodeIntent(m.Home, m.Writes)
	if err != nil {
		ctx.Reply(err)
		return
	}
	if err := a.store.Apply(&kv.WriteBatch{Ops: []kv.Op{{Key: intentKey(m.Txn), Value: enc}}}); err != nil {
		a.poison(err)
		ctx.Reply(errcode.Wrap(errcode.ShardUnavailable, err, "the transaction's part was not made durable"))
		return
	}
	a.durableEpoch, a.durableFrontier = a.lastEpoch, a.frontier
	a.twopc.cap = a.sealed()
	a.twopc.intent = &intentState{txn: m.Txn, home: m.Home, msg: c}
	ctx.After(intentQueryEvery, intentQuery{Txn: m.Txn})
	ctx.Reply(Prepared{Txn: m.Txn})
}

// dropPrepares answers the prepares of txn still waiting here as refused
// (its session aborted it).
func (a *Actor) dropPrepares(txn uint64) {
	drop := func(parked []parkedMessage) []parkedMessage {
		keep := parked[:0]
		for _, p := range parked {
			if m, ok := p.msg.(Prepare); ok && m.Txn == txn {
				p.reply.Reply(PrepareRefused{Txn: txn})
				continue
			}
			keep = append(keep, p)
		}
		return keep
	}
	a.twopc.held = drop(a.twopc.held)
	a.twopc.preparing = drop(a.twopc.preparing)
}

// receiveResolve applies or drops the intent in doubt.
func (a *Actor) receiveResolve(ctx runtime.Context, m Resolve) {
	if a.paused() && !m.Abort {
		// NB: an export pinned while paused must not see it (exportparts.go).
		a.twopc.held = append(a.twopc.held, parkedMessage{msg: m, from: ctx.From(), reply: ctx.Defer()})
		return
	}
	a.resolve(ctx, m, ctx.Defer())
}

// resolve ends intent m.Txn; reply (nil: none) gets Resolved once it is
// durable.
func (a *Actor) resolve(ctx runtime.Context, m Resolve, reply runtime.Deferred) {
	in := a.twopc.intent
	if in == nil || in.txn != m.Txn {
		// Resolved before (a repeat), or never prepared here: its
		// prepare, sent before, may still wait here (held behind an
		// intent, or for an allocation); an abort drops it.
		if m.Abort {
			a.dropPrepares(m.Txn)
		}
		if reply != nil {
			reply.Reply(Resolved{Txn: m.Txn})
		}
		return
	}
	if m.Abort {
		if err := a.store.Apply(&kv.WriteBatch{Ops: []kv.Op{{Key: intentKey(m.Txn), Delete: true}}}); err != nil {
			a.poison(err)
			if reply != nil {
				reply.Reply(errcode.Wrap(errcode.ShardUnavailable, err, "the transaction's part was not dropped"))
			}
			return
		}
		a.endIntent(ctx)
		if reply != nil {
			reply.Reply(Resolved{Txn: m.Txn})
		}
		return
	}
	// INVARIANT: the decision's epoch came after the prepare.
	if m.Epoch <= a.lastEpoch {
		err := errcode.New(errcode.InternalError, "transaction %d decided at epoch %d, not after this shard's last epoch %d", m.Txn, m.Epoch, a.lastEpoch)
		ctx.Logger().Error("a transaction in doubt cannot be resolved", "err", err)
		if reply != nil {
			reply.Reply(err)
		}
		return
	}
	if in.raw != nil {
		if a.snap == nil {
			return // no catalog yet: asked again (intentQuery)
		}
		_, writes, err := a.decodeIntent(in.raw)
		if err != nil {
			if reply != nil {
				reply.Reply(err)
			}
			return
		}
		in.msg, in.raw = Commit{CatalogVersion: a.snap.Version, Writes: writes}, nil
	}
	c := in.msg
	c.Resolves = m.Txn
	if _, err := a.commitAt(ctx, c, m.Epoch); err != nil {
		ctx.Logger().Error("applying a transaction's part failed", "txn", m.Txn, "epoch", m.Epoch, "err", err)
		// NB: the checks passed at prepare and nothing ran since: a
		// failure here is the store's (the shard is poisoned, and the
		// intent is resolved again from its durable record).
		if reply != nil {
			reply.Reply(err)
		}
		return
	}
	a.hear(m.Epoch)
	a.endIntent(ctx)
	if reply == nil {
		reply = noReply{}
	}
	a.answerCommit(ctx, Commit{}, Resolved{Txn: m.Txn}, nil, reply)
}

// noReply is a Deferred that answers nobody (a resolution the shard
// found out by itself).
type noReply struct{}

func (noReply) Reply(runtime.Message) {}

// endIntent leaves doubt and replays what waited.
func (a *Actor) endIntent(ctx runtime.Context) {
	a.twopc.intent = nil
	a.releaseHeld(ctx)
	a.askEpochs(ctx)
	// NB: an abort writes nothing, so no sync replays the reads and
	// snapshots that waited for the seal the intent held.
	a.replaySealWaits(ctx)
	a.pushFrames(ctx)
}

// receiveIntentQuery asks the home for the decision of an intent still in
// doubt, again later.
func (a *Actor) receiveIntentQuery(ctx runtime.Context, m intentQuery) {
	in := a.twopc.intent
	if in == nil && len(a.twopc.held) > 0 {
		a.releaseHeld(ctx)
		return
	}
	if in == nil || in.txn != m.Txn {
		return
	}
	ctx.Send(ActorOf(in.home), DecisionQuery{Txn: m.Txn})
	ctx.After(intentQueryEvery, m)
}

// receiveDecided resolves the intent in doubt by the home's answer to its
// DecisionQuery.
func (a *Actor) receiveDecided(ctx runtime.Context, m Decided) {
	if in := a.twopc.intent; in == nil || in.txn != m.Txn {
		return
	}
	r := Resolve{Txn: m.Txn, Epoch: m.Epoch, Abort: m.Aborted}
	if a.paused() && !r.Abort {
		a.twopc.held = append(a.twopc.held, parkedMessage{msg: r, reply: noReply{}})
		return
	}
	a.resolve(ctx, r, nil)
}

// receiveDecide records the home's decision, unless an abort was
// recorded first.
func (a *Actor) receiveDecide(ctx runtime.Context, m Decide) {
	if d, ok, err := a.decision(m.Txn); err != nil {
		ctx.Reply(err)
		return
	} else if ok {
		ctx.Reply(d)
		return
	}
	if m.Epoch == 0 {
		ctx.Reply(errcode.New(errcode.InternalError, "transaction %d decided without an epoch", m.Txn))
		return
	}
	apply := a.store.Apply
	if plantDecisionNotDurable {
		apply = a.applyNoWait
	}
	if err := apply(&kv.WriteBatch{Ops: []kv.Op{{Key: decisionKey(m.Txn), Value: binary.BigEndian.AppendUint64(nil, m.Epoch)}}}); err != nil {
		a.poison(err)
		ctx.Reply(errcode.Wrap(errcode.ShardUnavailable, err, "the transaction's decision was not made durable; its outcome is unknown"))
		return
	}
	a.durableEpoch, a.durableFrontier = a.lastEpoch, a.frontier
	ctx.Reply(Decided{Txn: m.Txn, Epoch: m.Epoch})
}

// receiveDecisionQuery answers a participant in doubt: the decision, or an
// abort recorded now (presumed abort).
func (a *Actor) receiveDecisionQuery(ctx runtime.Context, m DecisionQuery) {
	if d, ok, err := a.decision(m.Txn); err != nil {
		return
	} else if ok {
		ctx.Reply(d)
		return
	}
	if err := a.store.Apply(&kv.WriteBatch{Ops: []kv.Op{{Key: decisionKey(m.Txn), Value: binary.BigEndian.AppendUint64(nil, 0)}}}); err != nil {
		a.poison(err)
		return
	}
	a.durableEpoch, a.durableFrontier = a.lastEpoch, a.frontier
	ctx.Reply(Decided{Txn: m.Txn, Aborted: true})
}

// decision reads transaction txn's recorded decision.
func (a *Actor) decision(txn uint64) (Decided, bool, error) {
	v, ok, err := a.store.Get(decisionKey(txn))
	if err != nil || !ok {
		return Decided{}, false, err
	}
	if len(v) != 8 {
		return Decided{}, false, corrupt("the decision of transaction %d has %d bytes", txn, len(v))
	}
	e := binary.BigEndian.Uint64(v)
	return Decided{Txn: txn, Epoch: e, Aborted: e == 0}, true, nil
}

// loadIntent finds the intent in doubt at open (at most one).
func (a *Actor) loadIntent(ctx runtime.Context) error {
	a.twopc.intent = nil
	prefix := []byte{kv.PrefixShardMeta, metaIntent}
	err := kv.ScanPrefix(a.store, prefix, func(k, v []byte) error {
		if len(k) != len(prefix)+8 {
			return corrupt("intent key of %d bytes", len(k))
		}
		txn := binary.BigEndian.Uint64(k[len(prefix):])
		home := partition.ShardID(0)
		if h, n := binary.Uvarint(v); n > 0 {
			home = partition.ShardID(h)
		}
		a.twopc.intent = &intentState{txn: txn, home: home, raw: append([]byte(nil), v...)}
		ctx.Logger().Info("a transaction's part in doubt read back; asking its home shard", "txn", txn, "home", home, "last_epoch", a.lastEpoch)
		a.twopc.cap = a.lastEpoch
		ctx.After(0, intentQuery{Txn: txn})
		return kv.ErrStop
	})
	if err == nil && a.twopc.intent == nil && len(a.twopc.held) > 0 {
		// The intent they waited for was lost with the store: let them go.
		ctx.After(0, intentQuery{})
	}
	return err
}

// Intent record: uvarint home, uvarint write count; per write the table's
// object id (16 bytes), a flags byte (row, key, must-not-exist,
// check-base, base) and the rows, each a uvarint length and its
// encodeStoredRow bytes (the key: keyenc.EncodeRow of the key's types).
const (
	intentRow byte = 1 << iota
	intentKeyed
	intentMustNotExist
	intentCheckBase
	intentBase
)

func (a *Actor) encodeIntent(home partition.ShardID, writes []RowWrite) ([]byte, error) {
	out := binary.AppendUvarint(nil, uint64(home))
	out = binary.AppendUvarint(out, uint64(len(writes)))
	for _, w := range writes {
		rel, ok := a.snap.RelationByID(w.Table)
		if !ok {
			return nil, errcode.New(errcode.UndefinedObject, "table %s does not exist (dropped while the transaction ran)", w.Table)
		}
		ts := columnTypes(rel)
		out = append(out, w.Table.Object[:]...)
		var flags byte
		if w.Row != nil {
			flags |= intentRow
		}
		if w.Key != nil {
			flags |= intentKeyed
		}
		if w.MustNotExist {
			flags |= intentMustNotExist
		}
		if w.CheckBase {
			flags |= intentCheckBase
		}
		if w.Base != nil {
			flags |= intentBase
		}
		out = append(out, flags)
		put := func(enc []byte) {
			out = binary.AppendUvarint(out, uint64(len(enc)))
			out = append(out, enc...)
		}
		if w.Row != nil {
			put(encodeStoredRow(nil, ts, w.Row))
		}
		if w.Key != nil {
			put(keyenc.EncodeRow(nil, keyTypes(rel, ts), w.Key))
		}
		if w.Base != nil {
			put(encodeStoredRow(nil, ts, w.Base))
		}
	}
	return out, nil
}

func (a *Actor) decodeIntent(src []byte) (partition.ShardID, []RowWrite, error) {
	r := byteReader{src: src}
	home := partition.ShardID(r.uvarint())
	n := r.uvarint()
	var writes []RowWrite
	for i := uint64(0); i < n && r.err == nil; i++ {
		var w RowWrite
		w.Table.Namespace = a.snap.Namespace()
		copy(w.Table.Object[:], r.bytes(16))
		flags := r.bytes(1)
		if r.err != nil {
			break
		}
		rel, ok := a.snap.RelationByID(w.Table)
		if !ok {
			return 0, nil, errcode.New(errcode.UndefinedObject, "table %s of a transaction in doubt does not exist", w.Table)
		}
		codec, err := a.codecOf(rel)
		if err != nil {
			return 0, nil, err
		}
		get := func() []byte { return r.bytes(int(r.uvarint())) }
		if flags[0]&intentRow != 0 {
			if w.Row, err = codec.decode(get()); err != nil {
				return 0, nil, err
			}
		}
		if flags[0]&intentKeyed != 0 {
			if w.Key, err = keyenc.DecodeRow(get(), keyTypes(rel, codec.ts), nil); err != nil {
				return 0, nil, err
			}
		}
		w.MustNotExist = flags[0]&intentMustNotExist != 0
		w.CheckBase = flags[0]&intentCheckBase != 0
		if flags[0]&intentBase != 0 {
			if w.Base, err = codec.decode(get()); err != nil {
				return 0, nil, err
			}
		}
		writes = append(writes, w)
	}
	if r.err != nil {
		return 0, nil, corrupt("intent record: %v", r.err)
	}
	return home, writes, nil
}

// keyTypes are the types of rel's primary-key columns.
func keyTypes(rel *catalog.Relation, ts []types.Type) []types.Type {
	out := make([]types.Type, len(rel.PrimaryKey))
	for i, c := range rel.PrimaryKey {
		out[i] = ts[c]
	}
	return out
}

// replayPrepares runs the prepares that waited for an allocation.
func (a *Actor) replayPrepares(ctx runtime.Context) {
	waiting := a.twopc.preparing
	a.twopc.preparing = nil
	a.replay(ctx, waiting)
}
