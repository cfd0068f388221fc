// Package real runs actors for production: one goroutine per actor, the wall
// clock, real object stores, and bounded mailboxes.
//
// Walkthrough:
//
//	rt := real.New(real.Options{Store: store, Logger: logger, Seed: seed})
//	err := rt.Spawn("embedded", "control/0", newControl)     // Started is delivered first
//	reply, err := rt.Ask(goctx, "control/0", CreateTable{...}) // from a pgwire goroutine
//	err = rt.Tell(goctx, "shard/3", Poke{})                   // fire and forget, waits when full
//	err = rt.TrySend("shard/3", Poke{})                       // ErrMailboxFull instead of waiting
//	err = rt.Stop("control/0")                                // Stopping, then the goroutine ends
//	err = rt.Shutdown(goctx)                                  // stop everything and wait
//
// # Mailboxes and backpressure (STYLE.md 10)
//
// Each mailbox is a FIFO with two bounds:
//
//   - a soft bound, Options.MailboxMessagesMax (default 1024): callers outside
//     the actor system (Ask, Tell) wait while the mailbox is at it, until
//     their context ends. This is the backpressure a pgwire connection feels.
//     TrySend fails with runtime.ErrMailboxFull instead.
//   - a hard bound, soft + Options.MailboxOverflowMessagesMax (default 4096
//     more): sends from inside an actor (ctx.Send, ctx.Reply to an actor)
//     never wait, because an actor waiting on a full mailbox whose owner is
//     waiting on it (itself, or any cycle) would deadlock. They use the
//     overflow room; past the hard bound the message is dropped, counted in
//     Dropped and logged. runtime.Context.Send is at-most-once, so protocols
//     must already survive loss (the simulator drops messages too).
//
// Timer messages and Stopping bypass both bounds: losing one would silently
// stop the background work it drives.
//
// # Actor life cycle
//
//	Spawn ──► [Started] ──► running ──Stop──► [Stopping] ──► gone
//	                          │                              ▲
//	                          └──── Shutdown ────────────────┘
//
// Messages queued before Stop are delivered before Stopping; once gone, the
// actor's timers are cancelled, undelivered messages are discarded and every
// pending Ask fails with runtime.ErrActorGone.
//
// Named random streams (ctx.Rand) are seeded from Options.Seed, the actor id
// and the stream name. A panic inside Receive is not recovered: assertions
// crash the process (STYLE.md 9).
package real
