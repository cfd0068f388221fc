package shard

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/runtime"
)

// Epochs of a partitioned layout (placement.go partitionedLayout): every
// table shard takes commits, and their epochs come from the control plane
// (control epochs.go), so that epochs are one order over every shard. A
// shard's delta log then holds entries at its own epochs only, and it
// seals: it says through which epoch it will never write another entry,
// so a view shard steps an epoch once every table shard has sealed it.
//
//	commit ─► queued ─AllocEpoch{Min: last+1, Count: queued}─► control
//	                  ◄─EpochAllocated{E, Count, Known}─
//	commits applied at E, E+1, …; durable with their group's sync
//	sealed = known (not moved while an allocation is unanswered), or the
//	         durable epoch while commits await their sync
//
// known is the highest epoch the shard knows was handed out: from its own
// allocations, and from seals it is asked for (SealThrough) or sees, whose
// epochs were all handed out. An allocation still unanswered may bring any
// epoch above what the shard knew when it asked, so the seal waits for it
// there; a commit applied but not durable keeps the seal below it.
//
// After a restart the seal starts again at the last durable epoch: the
// next allocation asks for more than it (Min), and the control plane's
// counter is past every epoch handed out, so no entry is ever written at
// or below an epoch sealed before.
type (
	// SealThrough (view shard → table shard): seal through Epoch, an
	// epoch handed out (another table shard sealed it, or a read waits for
	// it); the table shard sends frames up to its seal.
	SealThrough struct {
		Epoch uint64
	}
)

// sealState is a table shard's allocations and seal in a partitioned
// layout.
type sealState struct {
	// known: the highest epoch known handed out.
	known uint64
	// asking: an AllocEpoch is unanswered; asked is how many queued
	// commits it covers, and heard the highest epoch heard of meanwhile
	// (adopted with the answer: hear).
	asking bool
	asked  int
	heard  uint64
	// askID tells the answer to the unanswered allocation apart (a
	// runtime.Request).
	askID uint64
	// queue are the commits waiting for epochs, in arrival order.
	queue []queuedCommit
	// shown is the highest seal sent in a frame.
	shown uint64
	// lastRequest numbers the shard's runtime.Requests (newRequestID).
	lastRequest uint64
	// waiting are reads of the tables as of an epoch not sealed yet
	// (awaitSeal).
	waiting []parkedMessage
	// pauses are the exports holding the allocations (exportparts.go).
	pauses []exportPause
	// probes wait behind commits of their sender waiting for epochs
	// (shard.go parkProbe).
	probes []parkedMessage
}

// queuedCommit is a commit waiting for its epoch.
type queuedCommit struct {
	msg   Commit
	from  runtime.ActorID
	reply runtime.Deferred
}

// sealed is the epoch through which this table shard will write no
// further log entry: every entry up to it is durable.
func (a *Actor) sealed() uint64 {
	s := &a.seal
	// NB: known does not move while an allocation is unanswered (hear):
	// the answer may be any epoch above what the shard knew when it asked.
	through := max(s.known, a.durableEpoch)
	if a.lastEpoch > a.durableEpoch || len(a.pending) > 0 {
		through = min(through, a.durableEpoch)
	}
	if a.inDoubt() {
		// Its decision's epoch comes later than the prepare (twophase.go).
		through = min(through, a.twopc.cap)
	}
	// NB: never below what a frame showed (in memory; a restart starts
	// over at the durable epoch, which the next allocation passes).
	return max(through, s.shown)
}

// hear adopts an epoch known handed out: now, or with the answer of the
// allocation being asked.
func (a *Actor) hear(e uint64) {
	s := &a.seal
	if s.asking {
		s.heard = max(s.heard, e)
		return
	}
	s.known = max(s.known, e)
}

// newRequestID numbers a runtime.Request of this shard: answers to an
// earlier run's are told apart by starting at the clock.
func (a *Actor) newRequestID(ctx runtime.Context) uint64 {
	if a.seal.lastRequest == 0 {
		a.seal.lastRequest = uint64(ctx.Now().UnixNano())
	}
	a.seal.lastRequest++
	return a.seal.lastRequest
}

// queueCommit holds a commit of a partitioned layout until it has an
// epoch.
func (a *Actor) queueCommit(ctx runtime.Context, m Commit) {
	a.seal.queue = append(a.seal.queue, queuedCommit{msg: m, from: ctx.From(), reply: ctx.Defer()})
	a.askEpochs(ctx)
}

// askEpochs asks the control plane for the queued commits' epochs, unless
// an allocation is already unanswered (its answer asks again).
func (a *Actor) askEpochs(ctx runtime.Context) {
	s := &a.seal
	if s.asking || len(s.queue) == 0 || a.paused() || a.inDoubt() || len(a.twopc.preparing) > 0 {
		// NB: nothing gets an epoch while a transaction on several shards
		// is in doubt here or waits to prepare (twophase.go).
		return
	}
	s.asking, s.asked = true, len(s.queue)
	s.askID = a.newRequestID(ctx)
	ctx.Send(a.cfg.Control, runtime.Request{ID: s.askID, Msg: control.AllocEpoch{Min: max(a.lastEpoch, s.known) + 1, Count: s.asked}})
	ctx.After(allocEpochRetryEvery, allocEpochTick{ID: s.askID})
}

// allocEpochTick asks again when the allocation ID is still unanswered
// (the control plane restarted, or the answer was lost): the epochs of an
// answer that comes later are never used, which only leaves them empty.
type allocEpochTick struct{ ID uint64 }

// allocEpochRetryEvery is how long an allocation waits for its answer
// before it is asked again. Simulation range: fixed.
const allocEpochRetryEvery = time.Second

func (a *Actor) receiveAllocEpochTick(ctx runtime.Context, m allocEpochTick) {
	s := &a.seal
	if !s.asking || s.askID != m.ID {
		return
	}
	s.asking = false
	a.replayPrepares(ctx)
	a.askEpochs(ctx)
}

// receiveEpochResponse takes the control plane's answer to the
// allocation asked (another's is stale, and ignored).
func (a *Actor) receiveEpochResponse(ctx runtime.Context, r runtime.Response) {
	if x := &a.exchange; r.ID == x.hello && x.floorPending && a.partitioned() {
		if m, ok := r.Msg.(control.EpochAllocated); ok {
			// A restarted view shard's floor (sendHello).
			a.readFloor = max(a.readFloor, m.Known)
			x.floorPending = false
			a.askSeals(ctx, a.readFloor)
			a.replayWaitingReads(ctx)
		}
		return
	}
	s := &a.seal
	if !s.asking || r.ID != s.askID {
		return
	}
	switch m := r.Msg.(type) {
	case control.EpochAllocated:
		a.receiveEpochs(ctx, m)
	case error:
		a.failQueuedCommits(ctx, errcode.Wrap(errcode.ShardUnavailable, m, "the control plane handed out no epoch for the commit"))
	}
}

// receiveEpochs applies the queued commits the allocation covered at its
// epochs, in order.
func (a *Actor) receiveEpochs(ctx runtime.Context, m control.EpochAllocated) {
	s := &a.seal
	if !s.asking {
		ctx.Logger().Error("epochs allocated that this shard did not ask for", "epoch", m.Epoch)
		return
	}
	s.asking = false
	s.known = max(s.known, m.Known, m.Epoch+uint64(m.Count)-1, s.heard)
	n := min(s.asked, m.Count, len(s.queue))
	batch := s.queue[:n]
	s.queue = s.queue[n:]
	for i, q := range batch {
		epoch := m.Epoch + uint64(i)
		// INVARIANT: a shard's epochs only grow (Min asked for more than
		// its last).
		if epoch <= a.lastEpoch {
			q.reply.Reply(errcode.New(errcode.InternalError, "epoch %d allocated at or below the shard's last epoch %d", epoch, a.lastEpoch))
			a.locks.release(ctx, q.msg.Txn)
			continue
		}
		a.applyCommit(ctx, q.msg, epoch, q.reply)
	}
	a.replayPrepares(ctx)
	a.askEpochs(ctx)
	a.replaySealWaits(ctx)
	a.answerPauses(ctx)
	probes := a.seal.probes
	a.seal.probes = nil
	a.replay(ctx, probes)
}

// failQueuedCommits answers the commits waiting for epochs with err.
func (a *Actor) failQueuedCommits(ctx runtime.Context, err error) {
	s := &a.seal
	queue := s.queue
	s.queue, s.asking = nil, false
	for _, q := range queue {
		a.locks.release(ctx, q.msg.Txn)
		q.reply.Reply(err)
	}
	probes := s.probes
	s.probes = nil
	a.replay(ctx, probes)
}

// receiveSealThrough adopts an epoch a view shard knows handed out and
// sends the frames it lets through.
func (a *Actor) receiveSealThrough(ctx runtime.Context, m SealThrough) {
	if !a.partitioned() || !a.isTableShard() {
		return
	}
	a.hear(m.Epoch)
	a.pushFrames(ctx)
}

// scanLog calls fn with this shard's log entries in (after, through], in
// epoch order: every epoch's of a shard numbering its own, the epochs it
// was handed of a table shard in a partitioned layout. fn may return
// kv.ErrStop.
func scanLog(r kv.Reader, after, through uint64, fn func(epoch uint64, v []byte) error) error {
	if through <= after {
		return nil
	}
	end := kv.PrefixEnd(logPrefix())
	if through < math.MaxUint64 {
		end = logKey(through + 1)
	}
	return r.Scan(logKey(after+1), end, func(k, v []byte) error {
		if len(k) != len(logPrefix())+8 {
			return corrupt("delta log key of %d bytes", len(k))
		}
		return fn(binary.BigEndian.Uint64(k[len(logPrefix()):]), v)
	})
}

// exchangeIns makes sure a view shard of a partitioned layout tracks
// every table shard, each taken through the last epoch read back at open
// (their frames resend from the acknowledged frontier, at or below it).
func (a *Actor) exchangeIns() []exchangeIn {
	x := &a.exchange
	if x.in == nil {
		for _, s := range TableShardsOf(a.snap.BucketMap()) {
			x.in = append(x.in, exchangeIn{peer: s, through: a.lastEpoch})
		}
	}
	return x.in
}

// inOf is the state of the table shard actor from, or nil.
func (a *Actor) inOf(from runtime.ActorID) *exchangeIn {
	a.exchangeIns()
	for i := range a.exchange.in {
		if ActorOf(a.exchange.in[i].peer) == from {
			return &a.exchange.in[i]
		}
	}
	return nil
}

// receivePartitionedFrame is receiveExchangeFrame on a view shard of a
// partitioned layout: it takes the frame continuing what it took from
// its sender, and steps through the lowest seal of every table shard.
func (a *Actor) receivePartitionedFrame(ctx runtime.Context, m ExchangeFrame) {
	in := a.inOf(ctx.From())
	if in == nil {
		ctx.Logger().Error("an exchange frame from a shard that stores no tables", "from", ctx.From())
		return
	}
	x := &a.exchange
	if m.After == m.Through && m.Hello != 0 {
		return // an answer to a hello (a partitioned layout asks the control plane)
	}
	if m.Through <= in.through {
		// A repeat: make what was taken durable and acknowledge it.
		if err := a.makeTakenDurable(); err != nil {
			ctx.Logger().Error("making exchanged epochs durable", "err", err)
			return
		}
		ctx.Send(ctx.From(), ExchangeAck{Through: a.durableEpoch, Frontier: a.durableFrontier})
		return
	}
	if m.Collected || m.After > in.through || len(m.Epochs) != len(m.Entries) {
		// A gap: a frame was lost; ask for it again. (Collected cannot
		// come: a partitioned layout's view shards are there from the
		// start.)
		ctx.Send(ctx.From(), ExchangeAck{Through: in.through, Frontier: a.durableFrontier, Resend: true})
		return
	}
	if x.takenFrom == nil {
		x.takenFrom = map[uint64][][]byte{}
	}
	for i, v := range m.Entries {
		if e := m.Epochs[i]; e > in.through {
			x.takenFrom[e] = append(x.takenFrom[e], v)
		}
	}
	in.through = m.Through
	before := a.lastEpoch
	a.lastEpoch = a.meetOfIns()
	a.askSeals(ctx, m.Through)
	if a.lastEpoch > before {
		x.unsynced++
		a.scheduleStep(ctx)
		a.resumeRemoteBackfill(ctx)
		a.replayWaitingReads(ctx)
	}
}

// meetOfIns is the lowest seal taken from the table shards: the last
// epoch a view shard of a partitioned layout can step.
func (a *Actor) meetOfIns() uint64 {
	meet := uint64(math.MaxUint64)
	for _, in := range a.exchangeIns() {
		meet = min(meet, in.through)
	}
	return max(meet, a.lastEpoch)
}

// askSeals asks every table shard whose seal is below epoch, an epoch
// handed out, to seal through it (once per epoch): an idle table shard
// sends nothing by itself.
func (a *Actor) askSeals(ctx runtime.Context, epoch uint64) {
	for i := range a.exchangeIns() {
		in := &a.exchange.in[i]
		if in.through < epoch && in.asked < epoch {
			in.asked = epoch
			ctx.Send(ActorOf(in.peer), SealThrough{Epoch: epoch})
		}
	}
	a.armSealTick(ctx)
}

// sealTick asks again for the seals not brought yet (a request or its
// frames may be lost).
type sealTick struct{}

// armSealTick queues a sealTick while a seal asked for has not come.
func (a *Actor) armSealTick(ctx runtime.Context) {
	if a.exchange.sealTicking {
		return
	}
	for _, in := range a.exchange.in {
		if in.through < in.asked {
			a.exchange.sealTicking = true
			ctx.After(exchangeResendEvery, sealTick{})
			return
		}
	}
}

func (a *Actor) receiveSealTick(ctx runtime.Context) {
	a.exchange.sealTicking = false
	for _, in := range a.exchange.in {
		if in.through < in.asked {
			ctx.Send(ActorOf(in.peer), SealThrough{Epoch: in.asked})
		}
	}
	a.armSealTick(ctx)
}

// awaitSeal parks a read of a partitioned layout's tables as of an epoch
// this table shard has not sealed yet (its commits below it await their
// sync or their epochs); it reports whether it did.
func (a *Actor) awaitSeal(ctx runtime.Context, msg runtime.Message, epoch uint64) bool {
	if !a.partitioned() || !a.isTableShard() {
		return false
	}
	a.hear(epoch)
	if epoch <= a.sealed() {
		return false
	}
	if len(a.seal.waiting) >= parkedMessagesMax {
		ctx.Reply(errcode.New(errcode.ShardUnavailable, "the shard waits to seal epoch %d and has %d reads queued", epoch, len(a.seal.waiting)))
		return true
	}
	a.seal.waiting = append(a.seal.waiting, parkedMessage{msg: msg, from: ctx.From(), reply: ctx.Defer()})
	return true
}

// replaySealWaits serves the reads waiting for a seal once it may have
// moved (a sync, an allocation's answer).
func (a *Actor) replaySealWaits(ctx runtime.Context) {
	waiting := a.seal.waiting
	if len(waiting) == 0 {
		return
	}
	a.seal.waiting = nil
	a.replay(ctx, waiting)
}
