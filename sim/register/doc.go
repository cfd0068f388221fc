// Package register proves the simulator finds bugs: a small replicated
// key-value register (ABD: three durable replicas, quorum reads with
// write-back, quorum writes) runs under sim with every fault on, and
// porcupine checks the clients' history for linearizability.
//
// Two deliberately buggy variants must be caught within a bounded number of
// seeds (TestBuggyRegistersAreCaught), while the correct variant passes 500
// (TestCorrectRegisterIsLinearizable):
//
//   - AckBeforeDurable: replicas acknowledge a store from memory and persist
//     it later; a crash in between loses an acknowledged write.
//   - ReadOneReplica: a read answers from the first replica that replies,
//     with no quorum and no write-back: stale reads.
//
// Walkthrough:
//
//	out := register.Run(register.Options{Seed: 42, Variant: register.Correct})
//	fmt.Print(out.Header)  // SEED=42, the configuration, the variant
//	out.Err                // nil, a liveness failure, or "not linearizable"
//	fmt.Print(out.History) // the operation log, kept with a failing seed
//
// Each run: 3 replicas on crashable processes, 3 clients on their own
// processes, 1.5 s (virtual) of safety phase, Heal, then at least 6
// operations must complete within 5 s (liveness). A seed costs a few
// milliseconds.
//
// Writes enter the history when they start, with an unknown return: a write
// cut off by its deadline or the end of the run may take effect at any
// later time, which is exactly what porcupine assumes for it. Reads enter
// only when they complete.
package register
