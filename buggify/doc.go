// Package buggify holds the named fault-injection sites of RockStream
// (FoundationDB's BUGGIFY, STYLE.md 6).
//
// A site is a constant registered in sites.go together with the faults/
// entry it exercises and what must survive it. In simulation the run's Plan
// decides once, from the seed, which sites are active (level one, each with
// ActivationProbability) and how often each active site fires (level two, a
// per-site probability drawn from [FireProbabilityMin, FireProbabilityMax]).
// Outside simulation there is no plan: FromContext returns nil and a nil
// plan never fires, so production pays one failed type assertion.
//
// Walkthrough:
//
//	// in an actor's Receive:
//	if buggify.Fire(ctx, buggify.RegisterReplicaDropReply) {
//		return // pretend the reply was lost
//	}
//	// code that outlives one message keeps the plan:
//	db.plan = buggify.FromContext(ctx)
//	if db.plan.Fire(buggify.SlateSlowFlush) { ... }
//
//	// the simulator:
//	plan := buggify.NewPlan(rand.New(...)) // from the seed
//	plan.Disable()                         // liveness phase
//	fmt.Print(plan)                        // which sites were active and fired
package buggify
