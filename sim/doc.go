// Package sim is the deterministic simulator: a whole RockStream cluster in
// ONE goroutine, in virtual time, under injected faults (ARCHITECTURE.md
// §3, STYLE.md 4–8). It implements runtime.Runtime, so the same actors run
// here and on runtime/real.
//
// # Walkthrough
//
//	s := sim.New(sim.Options{Seed: seed})         // configuration drawn from the seed
//	fmt.Print(s.Describe())                       // SEED=..., the configuration, active buggify sites
//	s.AddProcess("shard/0", sim.ProcessOptions{Crashable: true})
//	s.Spawn("shard/0", "shard/0", newShard)       // re-created from the factory on restart
//	s.Invariant("acked writes durable", check)     // checked after every step of the safety phase
//	err := s.RunFor(2 * time.Second)              // safety phase: nemesis, network and store faults
//	s.Heal()                                      // liveness phase: faults off, crashed processes restart
//	err = s.RunUntil(converged, 10*time.Second)   // must converge within a bound
//	reply, err := s.Ask(ctx, "shard/0", Query{})  // runs the event loop until the reply
//	hash := s.TraceHash()                         // same seed, same hash (TestDeterminism)
//
// Tests choose seeds with package seeds: `go test ./sim -seed=N -v` replays
// one, `-seeds=K` runs K fresh ones; a failure prints the replay command.
//
// # Model
//
// Events live in one queue ordered by (virtual time, sequence number), so
// simultaneous events run in the order they were scheduled. Kinds: a
// message arriving over the network, an actor taking the next message from
// its inbox, a timer, a scheduled callback (At), the nemesis, a restart.
//
// A process is a group of actors with one clock (skewed and drifting), one
// object store and one fate. Within a process, Send goes straight to the
// destination's inbox (FIFO). Between processes it crosses the simulated
// network: delay = min + exponential, drops, duplicates, reordering (an
// extra delay), partitions (symmetric or one-way, per link) and congested
// links (delay multiplied). An inbox holds at most Config.MailboxMessagesMax
// messages; actor sends past that are dropped, as in runtime/real.
//
// With Options.Codec (wire.go), every message between actors, every Ask
// and every reply is encoded when sent and its receiver gets the decoded
// copy, as across a process boundary; a message the codec cannot carry
// fails the run.
//
// Object-store calls are synchronous inside Receive. Each process's store is
// a FaultyStore over its durable store: the sampled latency is charged to
// the calling actor (its ctx.Now advances, its later effects and its next
// message are delayed by it); transient errors, ambiguous writes (applied or
// not, reported objstore.ErrAmbiguous), crash-after-write and stale LISTs
// are injected. FaultyStore is usable alone (NewFaultyStore).
//
// Process life cycle:
//
//	       Crash (nemesis, crash-after-write, Crash)
//	┌────┐ ────────────────────────────────────────► ┌──────┐
//	│ up │                                           │ down │
//	└────┘ ◄──────────────────────────────────────── └──────┘
//	        restart (scheduled, Restart, Heal): roots re-created
//	        from their Factory, each gets Started; durable store kept
//
// A crash discards the actors' memory, inboxes and timers; pending Asks to
// them fail with runtime.ErrActorGone. Messages in flight on the network
// reach whichever incarnation is up when they arrive.
//
// Phases: the safety phase (faults on, invariants after every actor step)
// runs under RunFor; Heal switches to the liveness phase (no nemesis, no
// network or store faults, buggify off, every process up), where RunUntil
// demands convergence within a bound.
//
// # Determinism
//
// Every random choice comes from a named stream (NewStream: a hash of seed
// and name seeds a PCG), so adding a draw in one component does not shift
// the others. The Trace hashes every delivered message (contents hashed by
// value, never by address; maps sorted), timer firing, random draw, drop,
// crash and restart. TestDeterminism runs each seed twice and compares.
// The package obeys the determinism lint (internal/lint).
package sim
