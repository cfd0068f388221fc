package shard

import (
	"github.com/rockstream/rockstream/buggify"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/internal/assert"
	"github.com/rockstream/rockstream/runtime"
)

// Group commit.
//
// A commit is applied to the store without waiting for durability and its
// reply is deferred; a flushCommits timer (delay 0, so it queues behind
// every commit already in the mailbox) then makes all of them durable with
// ONE store sync (one WAL object, one object-store PUT) and answers them.
// Commits that arrive while that sync is in flight wait in the mailbox and
// share the next one, so the batch grows with the load by itself.
//
// What this keeps:
//   - a COMMIT is answered only after its rows are durable: the reply is
//     sent after the sync returned nil; a failed sync poisons the shard and
//     answers every pending commit with ShardUnavailable (their rows are in
//     memory only, so the shard must be reopened from durable state);
//   - atomicity: each transaction is still one store batch (rows, delta-log
//     entry, last epoch), written to the WAL whole and in order;
//   - order: epochs are assigned in mailbox order, as before;
//   - no dirty reads: any message other than a Commit first flushes the
//     pending commits, so reads, epoch steps, subscriptions and status never
//     see rows that are not durable yet.
//
// A timer, not a Send: timer messages bypass the mailbox bound, and a lost
// flush would leave commits unanswered forever.

// flushCommits makes the pending commits durable and answers them.
type flushCommits struct{}

type pendingCommit struct {
	reply runtime.Deferred
	msg   runtime.Message
	// txn's row locks are released when the commit is durable.
	txn TxnID
}

// groupSyncer is a store that supports group commit.
type groupSyncer interface {
	NoWaitApplier
	Syncer
}

// groupCommits reports whether the store lets commits share a sync.
func (a *Actor) groupCommits() bool {
	_, ok := a.store.(groupSyncer)
	return ok
}

// beforeMessage runs ahead of every message: a flushCommits message, or any
// message that might observe state, makes the pending commits durable
// first. It reports whether msg was fully handled.
func (a *Actor) beforeMessage(ctx runtime.Context, msg runtime.Message) bool {
	if a.openErr != nil {
		// Poisoned (e.g. a commit's own write failed behind pending ones):
		// the pending commits are lost with the memory state; answer them
		// with the error now, before any reopen (reopen.go) replaces the
		// store they were applied to.
		a.flushPending(ctx)
	}
	switch msg.(type) {
	case Commit, LockRows, CancelLockWait, BreakDeadlock, reportWaits, backfillChunk, runtime.Response, allocEpochTick:
		// Lock requests observe no rows, so they do not split a group
		// commit; UnlockRows does flush first (rowlock.go). A backfill
		// chunk shows nothing either: the chunk that finishes a view
		// writes durably, which covers the pending commits before.
		return false
	case flushCommits:
		a.flushScheduled = false
		a.flushPending(ctx)
		return true
	case Read, Lookup:
		if len(a.pending) > 0 && a.openErr == nil {
			// Served right after the pending commits' sync instead of
			// forcing a sync of its own: with sessions that commit and
			// then read, flushing for every read would split the group
			// into groups of one.
			a.waiting = append(a.waiting, waitingRead{msg: msg, reply: ctx.Defer()})
			return true
		}
	case epochTick:
		if len(a.pending) > 0 && len(a.subs) == 0 && a.openErr == nil {
			// The epoch step over the pending commits runs BEFORE their
			// sync, so one WAL write covers the commits and the step and
			// the frontier is durable by the time anyone reads it (else a
			// read pays a second sync). Safe: with no subscribers a step
			// shows nothing to anyone, and a failed sync poisons the shard
			// before any message can observe the step.
			a.epochTick(ctx)
			a.flushPending(ctx)
			return true
		}
	}
	a.flushPending(ctx)
	return false
}

// epochTick runs the scheduled epoch step.
func (a *Actor) epochTick(ctx runtime.Context) {
	a.stepScheduled = false
	if buggify.Fire(ctx, buggify.ShardSkipEpochStep) { // views lag: reads must catch up to MinEpoch themselves
		return
	}
	if err := a.step(ctx); err != nil {
		ctx.Logger().Error("epoch step failed", "err", err)
		return
	}
	if !a.isTableShard() && a.exchange.unsynced >= exchangeFramesInFlight/2 {
		// NB: a view shard has no commit syncs to carry its steps along
		// (a table shard's next group commit makes them durable): it syncs
		// every half of the table shard's credit of frames, so the
		// acknowledgements of its durable frontier let them keep coming
		// (exchange.go). Its reads need no sync (makeFrontierShowable),
		// and a frame left unacknowledged is sent again by the table
		// shard's resend tick, whose repeat makes the steps durable.
		if err := a.makeFrontierDurable(); err != nil {
			ctx.Logger().Error("making the view shard's frontier durable", "err", err)
		}
	}
}

// receiveCommit applies a commit and answers it once it is durable.
func (a *Actor) receiveCommit(ctx runtime.Context, m Commit) {
	if a.partitioned() && a.isTableShard() && (len(m.Writes) > 0 || m.Offset != nil || len(m.Offsets) > 0) {
		// Its epoch comes from the control plane (seal.go).
		a.queueCommit(ctx, m)
		return
	}
	r, err := a.commit(ctx, m)
	a.answerCommit(ctx, m, r, err, nil)
}

// applyCommit applies a commit queued for its epoch and answers it once
// it is durable (seal.go).
func (a *Actor) applyCommit(ctx runtime.Context, m Commit, epoch uint64, reply runtime.Deferred) {
	var r runtime.Message
	var err error
	if a.openErr != nil {
		err = openFailure(a.openErr, "commit was not made durable")
	} else {
		r, err = a.commitAt(ctx, m, epoch)
	}
	a.answerCommit(ctx, m, r, err, reply)
}

// answerCommit answers a commit (reply, or the message's own when nil):
// now when it failed or is durable, else with its group's sync.
func (a *Actor) answerCommit(ctx runtime.Context, m Commit, r runtime.Message, err error, reply runtime.Deferred) {
	if err != nil || (len(a.pending) == 0 && !a.commitUnsynced) {
		// Durable on return (or failed): the locks go now, before the
		// reply, so a waiter is granted no later than the committer
		// learns of its commit.
		a.locks.release(ctx, m.Txn)
		if reply != nil {
			reply.Reply(a.replyOf(r, err))
		} else {
			ctx.Reply(a.replyOf(r, err))
		}
		return
	}
	// NB: an empty commit answered with the last epoch also waits: that
	// epoch may belong to a pending commit.
	a.commitUnsynced = false
	if reply == nil {
		reply = ctx.Defer()
	}
	a.pending = append(a.pending, pendingCommit{reply: reply, msg: r, txn: m.Txn})
	if !a.flushScheduled {
		a.flushScheduled = true
		ctx.After(0, flushCommits{})
	}
}

// waitingRead is a Read or Lookup that arrived behind pending commits.
type waitingRead struct {
	msg   runtime.Message
	reply runtime.Deferred
}

// flushPending makes every pending commit durable with one sync, answers
// them all, then serves the reads that waited for it.
func (a *Actor) flushPending(ctx runtime.Context) {
	if len(a.pending) == 0 {
		return
	}
	if len(a.waiting) > 0 && len(a.subs) == 0 && a.openErr == nil && a.snap != nil {
		// Catch maintenance up before the sync (see epochTick in
		// beforeMessage for why that is safe), so the same sync makes the
		// frontier the reads will see durable and they need no second one.
		for a.frontier < a.lastEpoch {
			before := a.frontier
			if err := a.step(ctx); err != nil || a.frontier <= before {
				break // the reads below retry and report it
			}
		}
	}
	defer a.answerPauses(ctx)
	defer a.replaySealWaits(ctx)
	defer a.serveWaiting(ctx)
	pending := a.pending
	a.pending = nil
	var err error
	switch {
	case a.openErr != nil:
		err = openFailure(a.openErr, "commit was not made durable")
	default:
		if serr := a.store.(groupSyncer).Sync(); serr != nil {
			// NB: the commits are applied in memory but not durable;
			// continuing would let a later commit reuse their epochs.
			a.poison(serr)
			err = errcode.Wrap(errcode.ShardUnavailable, serr, "commit was not made durable")
		} else {
			// The sync flushed every earlier write, epoch steps included.
			a.durableFrontier = a.frontier
			a.durableEpoch = a.lastEpoch
			a.stats.CommitSyncs++
		}
	}
	for _, p := range pending {
		// NB: here and not before the sync above: a lock released before
		// its commit is durable would let a waiter build on a row version
		// a crash can take back.
		a.locks.release(ctx, p.txn)
		if err != nil {
			p.reply.Reply(err)
			continue
		}
		if c, ok := p.msg.(Committed); ok {
			// Paired with open's check: an acknowledged epoch is durable.
			assert.That(c.Epoch <= a.durableEpoch, "acknowledging epoch %d, durable only up to %d", c.Epoch, a.durableEpoch)
		}
		p.reply.Reply(p.msg)
	}
}

// serveWaiting answers the reads that waited for a group's sync.
func (a *Actor) serveWaiting(ctx runtime.Context) {
	waiting := a.waiting
	a.waiting = nil
	for _, w := range waiting {
		if a.openErr != nil {
			w.reply.Reply(openFailure(a.openErr, "shard storage failed to open"))
			continue
		}
		var r runtime.Message
		var err error
		switch m := w.msg.(type) {
		case Read:
			if m.AtEpoch && a.partitioned() && a.isTableShard() {
				if a.hear(m.Epoch); m.Epoch > a.sealed() {
					a.seal.waiting = append(a.seal.waiting, parkedMessage{msg: m, reply: w.reply})
					continue
				}
			}
			if a.holdReadForBackfill(m, "", func() runtime.Deferred { return w.reply }) {
				continue
			}
			r, err = a.read(ctx, m)
		case Lookup:
			r, err = a.lookup(m)
		}
		w.reply.Reply(a.replyOf(r, err))
	}
}
