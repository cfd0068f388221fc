package shard

import (
	"encoding/binary"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/internal/assert"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/runtime"
)

// The exchange moves committed deltas from the table shard to the view
// shards (placement.go). Its outbox is the table shard's delta log itself:
// every commit's entry is written in the commit's own batch, so it is
// durable before anyone sends it, and the log keeps an entry until every
// view shard has acknowledged it.
//
//	table shard                                   view shard k
//	commit e (rows + log entry e, durable)
//	  ──ExchangeFrame{After: s, Through: t, entries (s, t]}──►
//	                                  entries held in memory (taken),
//	                                  last epoch t; epoch steps over
//	                                  them, then ONE sync of the steps
//	  ◄──────────────ExchangeAck{Through: f, Frontier: f}──
//	acked_k = f (its durable frontier); log entries ≤ min(frontier,
//	every f) − margin deleted, with the acks, in one batch (gcExchangedLog)
//
// The view shard never stores the entries: its durable frontier says
// which epochs its state covers, and after a restart the table shard
// sends the rest again. So a committed row is written once, on the table
// shard, and a view shard writes only what its views make of it.
//
// A frame that does not continue the view shard's last epoch (one was
// lost) is answered with ExchangeAck.Resend at once, and the table shard
// sends again from there instead of waiting for its resend tick.
//
// A view shard's log and epochs are the table shard's: its epoch steps
// consume the entries exactly as the table shard's own steps do, so a view
// maintained on a view shard goes through the same states as one on the
// table shard, and the freshness token of a commit (its epoch) means the
// same on every shard.
//
// Loss and restarts: a view shard takes only the frame continuing its last
// epoch (a repeated one is acknowledged again, one with a gap is answered
// with Resend from its last epoch);
// the table shard resends from the last acknowledgement when a resend tick
// finds no progress, and from the durable acknowledgements after a
// restart. Credit: at most exchangeFramesInFlight frames of at most
// exchangeFrameEntriesMax entries are unacknowledged per view shard, so
// the exchange's memory is bounded however far a view shard falls behind;
// the rest waits in the table shard's log, in the store.
type (
	// ExchangeFrame (table shard → view shard) carries the delta-log
	// entries of epochs (After, Through], one per epoch, each durable on
	// the sender.
	//
	// A frame with Collected carries no entries: epochs (After, Through]
	// were collected before the receiver became a view shard (a data
	// directory laid out over several shards by a build that sent only
	// to the first view shard). It has no views older than them.
	//
	// Hello answers an ExchangeAck with the same Hello: Durable is the
	// table shard's durable epoch when it answered, at least every epoch a
	// view shard restarted since the question may have shown (readFloor).
	//
	// Epochs, when set, are the epochs of Entries, one each, ascending:
	// a table shard of a partitioned layout holds entries at the epochs it
	// was handed only (seal.go), and Through is its seal. Without it the
	// entries are of every epoch (After, Through].
	ExchangeFrame struct {
		After     uint64
		Through   uint64
		Entries   [][]byte
		Epochs    []uint64
		Collected bool
		Durable   uint64
		Hello     uint64
	}
	// ExchangeAck (view shard → table shard): every epoch up to Through
	// is durable on the view shard (its steps over it, or an entry an
	// earlier build stored), and its durable frontier is Frontier: the
	// table shard keeps the log entries after it, to send them again and
	// to read its tables as they were at any epoch a view shows
	// (readAtEpoch).
	//
	// Resend (view shard → table shard): a frame did not continue the
	// view shard's last epoch Through (a frame was lost): the table shard
	// sends again from Through.
	//
	// Hello (non-zero, with Resend): a view shard that restarted asks for
	// the table shard's durable epoch (ExchangeFrame.Hello).
	ExchangeAck struct {
		Through, Frontier uint64
		Resend            bool
		Hello             uint64
	}
)

// exchangeIn is a view shard's state of one table shard of a partitioned
// layout.
type exchangeIn struct {
	peer partition.ShardID
	// through: its entries up to it are taken (its seal); asked: the
	// highest SealThrough sent to it.
	through, asked uint64
}

// exchangeTick resends frames whose acknowledgement did not come.
type exchangeTick struct{}

// Exchange limits. Simulation range: fixed.
const (
	exchangeFramesInFlight  = 4
	exchangeFrameEntriesMax = 256
	exchangeFrameBytesMax   = 1 << 20
	exchangeResendEvery     = time.Second
	// exchangeLogReadMargin is how many epochs behind the lowest view
	// frontier the table shard keeps its log by default
	// (Config.ExchangeLogMargin).
	exchangeLogReadMargin = 1024
)

const (
	metaExchangeAck      byte = 'X'
	metaExchangeFrontier byte = 'x'
	metaLogFloor         byte = 'l'
)

func exchangeAckKey(peer partition.ShardID) []byte {
	return binary.BigEndian.AppendUint32([]byte{kv.PrefixShardMeta, metaExchangeAck}, uint32(peer))
}

func exchangeFrontierKey(peer partition.ShardID) []byte {
	return binary.BigEndian.AppendUint32([]byte{kv.PrefixShardMeta, metaExchangeFrontier}, uint32(peer))
}

func logFloorKey() []byte { return []byte{kv.PrefixShardMeta, metaLogFloor} }

// exchangeOut is the table shard's state of one view shard.
type exchangeOut struct {
	peer partition.ShardID
	// acked: every epoch up to it is durable on the peer; sent: frames up to it
	// are on their way; frontier: the peer's (reported) durable frontier.
	// INVARIANT: frontier <= acked <= sent <= durableEpoch.
	acked, sent, frontier uint64
	// inFlight are the frames sent and not yet acknowledged, oldest
	// first: an acknowledgement may cover several (the view shard
	// acknowledges what each sync made durable).
	inFlight []inFlightFrame
	// ackedAtTick is acked at the last resend tick: no progress since
	// means a frame or its acknowledgement was lost.
	ackedAtTick uint64
}

// inFlightFrame is a frame sent to a view shard and not acknowledged: its
// last epoch and the bytes of its entries (the exchange's queue, shown
// on /metrics).
type inFlightFrame struct {
	through uint64
	bytes   int
}

// exchangeState is the shard's part of the exchange.
type exchangeState struct {
	// out are the view shards, by id (table shard only).
	out []exchangeOut
	// logFloor: the log entries up to it are deleted (table shard with
	// view shards only).
	logFloor uint64
	// ticking: the resend tick is queued.
	ticking bool
	// waitingReads wait on a view shard for the epochs they name.
	waitingReads []parkedMessage
	// reported and reportedEpoch are the frontier and the epoch a view
	// shard last reported (acknowledged) as durable.
	reported, reportedEpoch uint64
	// unsynced counts the frames a view shard took since its last sync.
	unsynced int
	// taken are the log entries a view shard took from frames and has
	// not stepped over yet, by epoch: held in memory only. Its steps are
	// made durable, not the entries: after a restart the table shard sends
	// them again from the view shard's durable frontier, which is what it
	// acknowledges (the table shard keeps its log until then).
	taken map[uint64][]byte
	// in are the table shards of a partitioned layout a view shard takes
	// frames from (nil otherwise: the table shard alone), and takenFrom
	// their entries by epoch (several table shards may hold entries of
	// one epoch).
	in        []exchangeIn
	takenFrom map[uint64][][]byte
	// sealTicking: a sealTick is queued (seal.go).
	sealTicking bool
	// floorPending: a view shard opened since it last learned the table
	// shard's durable epoch, its readFloor (hello is the question's
	// number, helloAt when it was asked): reads wait for it.
	floorPending, helloTicking bool
	hello                      uint64
	// storedLast is the last epoch read back at open: the entries up to
	// it past the frontier are in the store (a table shard's own, or a
	// view shard's taken by an earlier build, which stored them).
	storedLast uint64
	// waitingSince is when each waiting read arrived; waitTicking: the
	// awaitEpochTick is queued.
	waitingSince []time.Time
	// replaySince is the first arrival of the request being replayed.
	replaySince time.Time
	waitTicking bool
}

// isTableShard reports whether the shard stores the tables (true before
// the shard knows its catalog: a fresh shard's messages wait for one).
func (a *Actor) isTableShard() bool {
	if a.snap == nil {
		return true
	}
	m := a.snap.BucketMap()
	return !m.Valid() || slices.Contains(TableShardsOf(m), a.cfg.ID)
}

// partitioned reports whether this shard is one of several table shards
// (placement.go partitionedLayout).
func (a *Actor) partitioned() bool {
	return a.snap != nil && a.snap.BucketMap().Valid() && partitionedLayout(a.snap.BucketMap())
}

// exchangePeers makes sure the table shard tracks the view shard, with the
// acknowledgements stored for it.
func (a *Actor) exchangePeers(ctx runtime.Context) error {
	if a.snap == nil || !a.isTableShard() || a.store == nil {
		return nil
	}
	m := a.snap.BucketMap()
	if !m.Valid() || len(m.Shards()) < 2 || len(a.exchange.out) > 0 {
		return nil
	}
	// NB: every view shard receives every table's changes, whether its
	// views read them or not (placement.go).
	for _, s := range ViewShardsOf(m) {
		if s == a.cfg.ID || a.exchangeOutOf(s) != nil {
			continue
		}
		acked, err := getUint64(a.store, exchangeAckKey(s))
		if err != nil {
			return err
		}
		frontier, err := getUint64(a.store, exchangeFrontierKey(s))
		if err != nil {
			return err
		}
		a.exchange.out = append(a.exchange.out, exchangeOut{peer: s, acked: acked, sent: acked, frontier: min(frontier, acked), ackedAtTick: acked})
	}
	sort.Slice(a.exchange.out, func(i, j int) bool { return a.exchange.out[i].peer < a.exchange.out[j].peer })
	floor, err := getUint64(a.store, logFloorKey())
	if err != nil {
		return err
	}
	a.exchange.logFloor = floor
	if !a.exchange.ticking {
		a.exchange.ticking = true
		ctx.After(exchangeResendEvery, exchangeTick{})
	}
	return nil
}

func (a *Actor) exchangeOutOf(peer partition.ShardID) *exchangeOut {
	for i := range a.exchange.out {
		if a.exchange.out[i].peer == peer {
			return &a.exchange.out[i]
		}
	}
	return nil
}

// logKeep is the lowest frontier of the view shards: log entries above it
// are kept, to send and to read the tables as of any epoch a view shows
// (MaxUint64: no view shards).
func (a *Actor) logKeep() uint64 {
	keep := uint64(math.MaxUint64)
	for _, o := range a.exchange.out {
		if plantOutboxCollectedOnSend {
			keep = min(keep, o.sent)
			continue
		}
		keep = min(keep, o.frontier)
	}
	return keep
}

// pushFrames sends each view shard the durable epochs it has not been
// sent, within its credit.
func (a *Actor) pushFrames(ctx runtime.Context) {
	if a.openErr != nil || len(a.exchange.out) == 0 {
		return
	}
	durable := a.durableEpoch
	if plantFrameBeforeDurable {
		durable = a.lastEpoch
	}
	sparse := a.partitioned()
	if sparse {
		durable = a.sealed()
		if plantFrameBeforeDurable {
			durable = max(durable, a.lastEpoch)
		}
	}
	for i := range a.exchange.out {
		o := &a.exchange.out[i]
		for len(o.inFlight) < exchangeFramesInFlight && o.sent < durable {
			if o.sent < a.exchange.logFloor && o.acked == 0 {
				// INVARIANT: the floor is below every tracked peer's
				// acknowledgement, so a peer that never acknowledged
				// joined after it rose.
				ctx.Send(ActorOf(o.peer), ExchangeFrame{After: o.sent, Through: a.exchange.logFloor, Collected: true})
				o.sent = a.exchange.logFloor
				o.inFlight = append(o.inFlight, inFlightFrame{through: o.sent})
				continue
			}
			f := ExchangeFrame{After: o.sent, Durable: durable}
			bytes := 0
			if sparse {
				f.Through = durable
				err := scanLog(a.store, o.sent, durable, func(e uint64, v []byte) error {
					if len(f.Entries) >= exchangeFrameEntriesMax || (bytes >= exchangeFrameBytesMax && len(f.Entries) > 0) {
						f.Through = e - 1
						return kv.ErrStop
					}
					f.Entries, f.Epochs = append(f.Entries, v), append(f.Epochs, e)
					bytes += len(v)
					return nil
				})
				if err != nil {
					ctx.Logger().Error("reading the delta log for the exchange", "after", o.sent, "err", err)
					return
				}
				a.seal.shown = max(a.seal.shown, f.Through)
				ctx.Send(ActorOf(o.peer), f)
				o.sent = f.Through
				o.inFlight = append(o.inFlight, inFlightFrame{through: o.sent, bytes: bytes})
				continue
			}
			for e := o.sent + 1; e <= durable && len(f.Entries) < exchangeFrameEntriesMax && (bytes < exchangeFrameBytesMax || len(f.Entries) == 0); e++ {
				v, ok, err := a.store.Get(logKey(e))
				if err != nil {
					ctx.Logger().Error("reading the delta log for the exchange", "epoch", e, "err", err)
					return
				}
				// INVARIANT: an entry is kept until every view shard
				// acknowledged it, and it is durable up to durableEpoch.
				assert.That(ok, "delta log entry %d for shard %d is missing (acked %d, floor %d)", e, o.peer, o.acked, a.exchange.logFloor)
				f.Entries = append(f.Entries, v)
				f.Through = e
				bytes += len(v)
			}
			ctx.Send(ActorOf(o.peer), f)
			o.sent = f.Through
			o.inFlight = append(o.inFlight, inFlightFrame{through: o.sent, bytes: bytes})
		}
	}
}

// receiveExchangeAck records a view shard's acknowledgement, collects the
// log entries every view shard has, and sends more.
func (a *Actor) receiveExchangeAck(ctx runtime.Context, m ExchangeAck, from runtime.ActorID) {
	if m.Hello != 0 && a.isTableShard() && a.store != nil && a.openErr == nil {
		// Its durable epoch, whether or not it tracks the peer yet: every
		// frame it ever sent carried only epochs up to it.
		ctx.Send(from, ExchangeFrame{After: m.Through, Through: m.Through, Durable: a.durableEpoch, Hello: m.Hello})
	}
	for i := range a.exchange.out {
		o := &a.exchange.out[i]
		if ActorOf(o.peer) != from {
			continue
		}
		if m.Resend {
			// INVARIANT: the peer's durable frontier is at most its
			// durable last epoch, so every entry after m.Through is kept.
			if m.Through < o.sent {
				o.acked = max(min(m.Through, o.acked), o.frontier)
				o.sent, o.inFlight, o.ackedAtTick = o.acked, o.inFlight[:0], o.acked
			}
			continue
		}
		for len(o.inFlight) > 0 && o.inFlight[0].through <= m.Through {
			o.inFlight = o.inFlight[1:]
		}
		if m.Through > o.acked {
			o.acked = min(m.Through, o.sent)
		}
		o.frontier = max(o.frontier, min(m.Frontier, o.acked))
	}
	if err := a.gcExchangedLog(); err != nil {
		ctx.Logger().Error("collecting exchanged delta-log entries", "err", err)
	}
	a.pushFrames(ctx)
}

// gcExchangedLog deletes the log entries that the table shard's own views
// consumed and every view shard acknowledged, with the acknowledgements,
// in one batch (a lost batch deletes them again later).
func (a *Actor) gcExchangedLog() error {
	if len(a.exchange.out) == 0 || a.openErr != nil {
		return nil
	}
	upTo := min(a.frontier, a.logKeep())
	if plantOutboxCollectedOnSend {
		upTo += a.cfg.ExchangeLogMargin
	}
	if upTo <= a.cfg.ExchangeLogMargin {
		return nil
	}
	// NB: a margin behind the lowest view frontier, so a statement that
	// read a view at an earlier frontier a moment ago still finds the
	// changes after it when it reads the tables (readAtEpoch).
	upTo -= a.cfg.ExchangeLogMargin
	if upTo <= a.exchange.logFloor {
		return nil
	}
	txn := kv.NewTxn(a.store)
	if a.partitioned() {
		// Sparse: the entries there are.
		if err := scanLog(a.store, a.exchange.logFloor, upTo, func(e uint64, _ []byte) error {
			return txn.Delete(logKey(e))
		}); err != nil {
			return err
		}
	} else {
		for e := a.exchange.logFloor + 1; e <= upTo; e++ {
			if err := txn.Delete(logKey(e)); err != nil {
				return err
			}
		}
	}
	for _, o := range a.exchange.out {
		if err := putUint64(txn, exchangeAckKey(o.peer), o.acked); err != nil {
			return err
		}
		if err := putUint64(txn, exchangeFrontierKey(o.peer), o.frontier); err != nil {
			return err
		}
	}
	if err := putUint64(txn, logFloorKey(), upTo); err != nil {
		return err
	}
	if err := a.applyNoWait(txn.Batch()); err != nil {
		a.poison(err)
		return err
	}
	a.exchange.logFloor = upTo
	return nil
}

// receiveExchangeTick resends to every view shard whose acknowledgements
// made no progress since the last tick.
func (a *Actor) receiveExchangeTick(ctx runtime.Context) {
	if !a.isTableShard() {
		x := &a.exchange
		x.helloTicking = x.floorPending
		if x.floorPending {
			ctx.After(exchangeResendEvery, exchangeTick{})
			a.sendHello(ctx)
		}
		return
	}
	for i := range a.exchange.out {
		o := &a.exchange.out[i]
		if o.sent > o.acked && o.acked == o.ackedAtTick {
			o.sent, o.inFlight = o.acked, o.inFlight[:0]
		}
		o.ackedAtTick = o.acked
	}
	a.pushFrames(ctx)
	ctx.After(exchangeResendEvery, exchangeTick{})
}

// sendHello asks the table shard for its durable epoch (ExchangeAck.Hello),
// a new question each time, so an old answer is never taken.
func (a *Actor) sendHello(ctx runtime.Context) {
	x := &a.exchange
	x.hello = a.newRequestID(ctx)
	if a.partitioned() {
		// Its floor is the control plane's last epoch handed out, which
		// every epoch it may have shown is at or below (seal.go).
		ctx.Send(a.cfg.Control, runtime.Request{ID: x.hello, Msg: control.GetEpochs{}})
		return
	}
	ctx.Send(ActorOf(TableShardOf(a.snap.BucketMap())), ExchangeAck{Through: a.lastEpoch, Frontier: a.durableFrontier, Resend: true, Hello: x.hello})
}

// receiveExchangeFrame takes the frame continuing the view shard's last
// epoch: its entries become the shard's log entries, durable, before the
// acknowledgement.
func (a *Actor) receiveExchangeFrame(ctx runtime.Context, m ExchangeFrame) {
	if a.isTableShard() {
		ctx.Logger().Error("the table shard got an exchange frame", "from", ctx.From())
		return
	}
	if a.partitioned() {
		a.receivePartitionedFrame(ctx, m)
		return
	}
	if m.Hello != 0 && m.Hello == a.exchange.hello && a.exchange.floorPending {
		a.readFloor = max(a.readFloor, m.Durable)
		a.exchange.floorPending = false
		defer a.replayWaitingReads(ctx)
	}
	if m.After == m.Through && m.Hello != 0 {
		return // only the answer to a hello
	}
	if m.Through <= a.lastEpoch {
		// A repeat (a resend crossed the acknowledgement, or the steps
		// that make taken frames durable have not run): make what was
		// taken durable and acknowledge it.
		if err := a.makeTakenDurable(); err != nil {
			ctx.Logger().Error("making exchanged epochs durable", "err", err)
			return
		}
		ctx.Send(ctx.From(), ExchangeAck{Through: a.durableEpoch, Frontier: a.durableFrontier})
		return
	}
	if m.Collected {
		a.takeCollected(ctx, m)
		return
	}
	if m.After > a.lastEpoch || int(m.Through-m.After) != len(m.Entries) {
		// A gap: a frame was lost; ask for it again.
		ctx.Send(ctx.From(), ExchangeAck{Through: a.lastEpoch, Frontier: a.durableFrontier, Resend: true})
		return
	}
	// NB: held in memory, not written: the epoch steps over the entries
	// are what a sync makes durable (epochTick, or the read that needs
	// them), and the acknowledgement of the durable frontier leaves after
	// it (reportFrontier). Until then the table shard keeps the entries
	// and resends them after a restart of this shard. Storing them wrote
	// every committed row once more on each view shard (and synced it).
	if a.exchange.taken == nil {
		a.exchange.taken = map[uint64][]byte{}
	}
	for i, e := range m.Entries {
		if epoch := m.After + 1 + uint64(i); epoch > a.lastEpoch {
			a.exchange.taken[epoch] = e
		}
	}
	a.lastEpoch = m.Through
	a.exchange.unsynced++
	a.scheduleStep(ctx)
	a.resumeRemoteBackfill(ctx)
	a.replayWaitingReads(ctx)
}

// takeCollected moves a view shard that joined the exchange late past
// the epochs the table shard collected before (ExchangeFrame.Collected).
func (a *Actor) takeCollected(ctx runtime.Context, m ExchangeFrame) {
	if m.After > a.lastEpoch || len(m.Entries) != 0 {
		ctx.Send(ctx.From(), ExchangeAck{Through: a.lastEpoch, Frontier: a.durableFrontier, Resend: true})
		return
	}
	if len(a.views) > 0 && a.frontier < m.Through {
		// Cannot happen: a shard running views acknowledged its epochs.
		ctx.Logger().Error("the table shard collected epochs this view shard's views have not consumed", "frontier", a.frontier, "collected_through", m.Through)
		return
	}
	txn := kv.NewTxn(a.store)
	if err := putUint64(txn, lastEpochKey(), m.Through); err != nil {
		ctx.Logger().Error("taking collected epochs", "err", err)
		return
	}
	if err := putUint64(txn, frontierKey(), max(a.frontier, m.Through)); err != nil {
		ctx.Logger().Error("taking collected epochs", "err", err)
		return
	}
	if err := a.store.Apply(txn.Batch()); err != nil {
		a.poison(err)
		return
	}
	a.lastEpoch, a.durableEpoch = m.Through, m.Through
	a.frontier = max(a.frontier, m.Through)
	a.durableFrontier = a.frontier
	ctx.Send(ctx.From(), ExchangeAck{Through: m.Through, Frontier: a.durableFrontier})
	a.scheduleStep(ctx)
	a.resumeRemoteBackfill(ctx)
	a.replayWaitingReads(ctx)
}

// awaitEpoch parks a Read or Subscribe on a view shard that has not
// received the epoch it must reflect (minEpoch); it reports whether it
// did.
func (a *Actor) awaitEpoch(ctx runtime.Context, msg runtime.Message, minEpoch uint64) bool {
	if a.isTableShard() {
		return false
	}
	if a.exchange.floorPending {
		return a.park(ctx, msg)
	}
	if minEpoch > a.stepTarget() {
		// NB: a pin may hold the steps below epochs the shard has; steps
		// are not only run by ticks (buggify skips them), so take it now.
		a.passPins(ctx)
	}
	if minEpoch <= a.stepTarget() {
		return false
	}
	if a.partitioned() {
		// An idle table shard seals only when asked (seal.go).
		a.askSeals(ctx, minEpoch)
	}
	return a.park(ctx, msg)
}

// park holds msg until the exchange brings epochs or a pin is taken
// (replayWaitingReads), for at most awaitEpochMax.
func (a *Actor) park(ctx runtime.Context, msg runtime.Message) bool {
	if len(a.exchange.waitingReads) >= parkedMessagesMax {
		ctx.Reply(errcode.New(errcode.ShardUnavailable, "the view shard waits for epoch %d from the table shard and has %d requests queued", a.lastEpoch+1, len(a.exchange.waitingReads)))
		return true
	}
	since := ctx.Now()
	if !a.exchange.replaySince.IsZero() {
		// Parked again on replay: it keeps its first arrival, so that
		// awaitEpochMax bounds its whole wait.
		since = a.exchange.replaySince
	}
	a.exchange.waitingReads = append(a.exchange.waitingReads, parkedMessage{msg: msg, from: ctx.From(), reply: ctx.Defer()})
	a.exchange.waitingSince = append(a.exchange.waitingSince, since)
	if !a.exchange.waitTicking {
		a.exchange.waitTicking = true
		ctx.After(exchangeResendEvery, awaitEpochTick{})
	}
	return true
}

// awaitEpochTick fails the requests that waited for epochs longer than
// awaitEpochMax: the table shard is down or the exchange is stuck, and a
// client gets an error to retry instead of waiting without end.
type awaitEpochTick struct{}

// awaitEpochMax bounds a request's wait for the table shard's epochs.
const awaitEpochMax = 10 * time.Second

func (a *Actor) receiveAwaitEpochTick(ctx runtime.Context) {
	a.exchange.waitTicking = false
	keep, since := a.exchange.waitingReads[:0], a.exchange.waitingSince[:0]
	for i, p := range a.exchange.waitingReads {
		if r, ok := p.msg.(Read); ok && a.upperStarting(r.Relations) && ctx.Now().Sub(a.exchange.waitingSince[i]) < upperStartWaitMax {
			// A staged view's upper stage starting (after a restart: once
			// its lower stages are filled again) waits as a fill does.
			keep, since = append(keep, p), append(since, a.exchange.waitingSince[i])
			continue
		}
		if ctx.Now().Sub(a.exchange.waitingSince[i]) >= awaitEpochMax {
			ctx.Logger().Error("a request waited too long for the table shard's epochs", "last_epoch", a.lastEpoch)
			p.reply.Reply(errcode.New(errcode.ShardUnavailable, "the view shard has not received the epochs this request needs from the table shard (it has epoch %d)", a.lastEpoch))
			continue
		}
		keep, since = append(keep, p), append(since, a.exchange.waitingSince[i])
	}
	a.exchange.waitingReads, a.exchange.waitingSince = keep, since
	if len(keep) > 0 {
		a.exchange.waitTicking = true
		ctx.After(exchangeResendEvery, awaitEpochTick{})
	}
}

func (a *Actor) replayWaitingReads(ctx runtime.Context) {
	waiting, since := a.exchange.waitingReads, a.exchange.waitingSince
	a.exchange.waitingReads, a.exchange.waitingSince = nil, nil
	outer := a.exchange.replaySince
	for i, p := range waiting {
		a.exchange.replaySince = since[i]
		a.Receive(replayContext{Context: ctx, from: p.from, reply: p.reply}, p.msg)
	}
	a.exchange.replaySince = outer
}

// failWaitingReads answers the parked reads with err (the shard stopped).
func (a *Actor) failWaitingReads(err error) {
	waiting := a.exchange.waitingReads
	a.exchange.waitingReads, a.exchange.waitingSince = nil, nil
	for _, p := range waiting {
		p.reply.Reply(err)
	}
}

// placedHere reports whether view id of snap runs on this shard.
func (a *Actor) placedHere(snap *control.Snapshot, id catalog.ID) bool {
	m := snap.BucketMap()
	if rel, ok := snap.RelationByID(id); ok && IsSpread(rel) && m.Valid() {
		return slices.Contains(SpreadShardsOf(m), a.cfg.ID)
	}
	return !m.Valid() || HomeOf(snap, m, id) == a.cfg.ID
}

// afterMessage runs after every message: the table shard sends what the
// message made durable.
func (a *Actor) afterMessage(ctx runtime.Context) {
	if a.openErr != nil || a.snap == nil {
		return
	}
	a.reachPins(ctx)
	if len(a.stageStreams) > 0 {
		a.startStageStreams(ctx)
	}
	a.startUppers(ctx)
	a.reportFrontier(ctx)
	a.scheduleTemporalTick(ctx)
	if err := a.exchangePeers(ctx); err != nil {
		ctx.Logger().Error("loading the exchange's acknowledgements", "err", err)
		return
	}
	a.pushFrames(ctx)
}

// reportFrontier tells the table shard a view shard's durable frontier
// after a step, so the table shard collects the log entries behind it.
func (a *Actor) reportFrontier(ctx runtime.Context) {
	if a.snap == nil {
		return
	}
	if a.isTableShard() {
		a.exchange.floorPending = false // its floor is its own last epoch
		return
	}
	if x := &a.exchange; x.floorPending && !x.helloTicking {
		// After an open: ask the table shard for its durable epoch, the
		// floor of what this shard may have shown before (readFloor),
		// again at every resend tick until it answers.
		x.helloTicking = true
		ctx.After(exchangeResendEvery, exchangeTick{})
		a.sendHello(ctx)
	}
	if a.durableFrontier <= a.exchange.reported && a.durableEpoch <= a.exchange.reportedEpoch {
		return
	}
	a.exchange.reported, a.exchange.reportedEpoch = a.durableFrontier, a.durableEpoch
	if a.partitioned() {
		for _, in := range a.exchangeIns() {
			ctx.Send(ActorOf(in.peer), ExchangeAck{Through: a.durableEpoch, Frontier: a.durableFrontier})
		}
		return
	}
	ctx.Send(ActorOf(TableShardOf(a.snap.BucketMap())), ExchangeAck{Through: a.durableEpoch, Frontier: a.durableFrontier})
}

// makeTakenDurable makes a view shard's steps over the entries it took
// from exchange frames durable: what it acknowledges.
func (a *Actor) makeTakenDurable() error {
	if a.durableFrontier >= a.frontier && a.durableEpoch >= a.syncedEpoch() {
		return nil
	}
	if s, ok := a.store.(Syncer); ok {
		if err := s.Sync(); err != nil {
			a.poison(err)
			return err
		}
	}
	a.durableEpoch, a.durableFrontier = a.syncedEpoch(), a.frontier
	a.exchange.unsynced = 0
	return nil
}

// syncedEpoch is the last epoch a sync makes durable: every epoch a table
// shard has (its commits wrote their log entries); on a view shard, the
// frontier its steps reached and the entries stored before (storedLast),
// not the entries taken since, which only its steps make durable.
func (a *Actor) syncedEpoch() uint64 {
	if a.isTableShard() {
		return a.lastEpoch
	}
	return min(a.lastEpoch, max(a.frontier, a.exchange.storedLast))
}

// readAtEpoch reads tables as they were right after epoch m.Epoch: their
// current rows minus the deltas of the later epochs, which the log keeps
// while a view shard's frontier is behind them (logKeep).
func (a *Actor) readAtEpoch(m Read) (runtime.Message, error) {
	sparse := a.partitioned()
	if sparse && m.Epoch > a.sealed() {
		return nil, errcode.New(errcode.InternalError, "tables read at epoch %d, after the sealed epoch %d", m.Epoch, a.sealed())
	}
	if !sparse && m.Epoch > a.lastEpoch {
		return nil, errcode.New(errcode.InternalError, "tables read at epoch %d, after the last epoch %d", m.Epoch, a.lastEpoch)
	}
	later, err := a.laterDeltas(a.store, m.Relations, m.Epoch, a.lastEpoch, sparse)
	if err != nil {
		return nil, err
	}
	res := ReadResult{Frontier: m.Epoch}
	for i, id := range m.Relations {
		b, err := a.snapshotOf(a.store, id)
		if err != nil {
			return nil, err
		}
		b.AddBatch(later[i], -1)
		res.Batches = append(res.Batches, zset.Consolidate(b))
	}
	return res, nil
}

// laterDeltas are the changes the log entries of r in (after, through]
// made to the tables ids, one batch each: what a read as of epoch after
// takes away from their rows in r. sparse: the entries are a partitioned
// layout's table shard's, at its own epochs only (scanLog); else one
// at every epoch.
func (a *Actor) laterDeltas(r kv.Reader, ids []catalog.ID, after, through uint64, sparse bool) ([]zset.Batch, error) {
	decoders := map[catalog.ID]*rowDecoder{}
	for _, id := range ids {
		rel, ok := a.snap.RelationByID(id)
		if !ok || rel.Kind == catalog.KindMaterializedView {
			return nil, errcode.New(errcode.InternalError, "relation %s read at an epoch is not a table", id)
		}
		codec, err := a.codecOf(rel)
		if err != nil {
			return nil, err
		}
		decoders[id] = &rowDecoder{codec: codec}
	}
	undo := func(v []byte) error {
		_, err := decodeLog(v, a.snap.Namespace(), func(id catalog.ID) (deltaDecoder, bool) {
			d, ok := decoders[id]
			return d, ok
		})
		return err
	}
	if after < a.exchange.logFloor && through > after {
		return nil, errcode.New(errcode.SnapshotUnavailable, "could not serialize access: the changes after epoch %d are no longer kept", after)
	}
	if sparse {
		// The entries there are after it (a table shard of a partitioned
		// layout holds its own epochs only); none collected after it.
		if err := scanLog(r, after, through, func(_ uint64, v []byte) error { return undo(v) }); err != nil {
			return nil, err
		}
	}
	for e := after + 1; !sparse && e <= through; e++ {
		v, ok, err := r.Get(logKey(e))
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, errcode.New(errcode.SnapshotUnavailable, "could not serialize access: the changes after epoch %d are no longer kept", after)
		}
		if err := undo(v); err != nil {
			return nil, err
		}
	}
	out := make([]zset.Batch, len(ids))
	for i, id := range ids {
		out[i] = decoders[id].batch
	}
	return out, nil
}

// resumeRemoteBackfill schedules the running backfill when it waits for the
// frontier to reach its export's epoch (remoteBackfill): a frame brought
// the epochs, or a pin that held the steps was taken (pins.go).
func (a *Actor) resumeRemoteBackfill(ctx runtime.Context) {
	if len(a.backfills) == 0 {
		return
	}
	// NB: a streamed export's backfill is fed before the frontier reaches
	// its epoch, and waits for it with every row fed (streamWaiting).
	if b := a.backfills[0]; b.remote != nil && b.remote.done && (b.reader == nil || b.remote.stream && !b.scanned) {
		a.scheduleBackfill(ctx)
	}
}
