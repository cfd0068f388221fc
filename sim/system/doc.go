// Package system simulates the embedded RockStream database itself (issue
// 8, spec §17): the control-plane and shard actors over slate on the
// simulator's fault-injecting object store, in one crashable process,
// with the row generator source (its view checked too; rows 1..n exactly,
// progress after healing), driven by 1–12 concurrent client sessions (overload runs: many sessions,
// no think time) issuing multi-table transactions that insert, update and
// delete, linearizable reads and read-your-writes session reads, and
// explicit and implicit transactions run through real session actors
// (actors/session, one per client connection: txn.go) over a few hot rows
// — row-lock waits, stale re-runs, deadlocks, READ COMMITTED and
// REPEATABLE READ, savepoints, ON CONFLICT upserts — while a
// view is created with data flowing and the nemesis crashes the process
// (also mid-commit, via the store's crash-after-write), injects
// object-store faults, skews clocks and fires buggify sites. Client
// connections drop replies (the outcome becomes unknown) and delay them.
//
// Checkers:
//   - (a) linearizability (porcupine, lin.go): every row of every table is
//     a register; commits write, reads read; session reads get a window
//     starting at their own last commit (read-your-writes);
//   - (b) durability and atomicity (model.go): every read at frontier F
//     shows exactly the acknowledged commits of epoch <= F, every other
//     commit all-or-nothing, and no commit is seen at a frontier and then
//     not at a later one or acknowledged at an epoch contradicting a read;
//   - (c) views: at every read, each materialized view equals its defining
//     query run ad hoc (non-incrementally) over the tables of the same
//     read, including after healing over the model's tables; a temporal
//     view (half the runs: rows whose times pass during the run) is run
//     at the time of the read's epoch;
//   - (d) monotonicity: epochs per session and in real time, LastEpoch and
//     frontiers never go backwards (across crashes), LastEpoch never below
//     an acknowledged epoch, the frontier never past LastEpoch;
//   - (e) transactions (txn.go): porcupine per key over their changes as
//     compare-and-sets, no lost update, REPEATABLE READ repeatability and
//     40001, READ COMMITTED stale re-runs, savepoint and rollback undo,
//     no commit refused under held row locks, 40P01 only for a real cycle,
//     no session state left after a transaction ends, and nextval never
//     returning a value twice or out of real-time order;
//   - coverage (coverage.go): every faults/ entry and buggify site is hit
//     over TestSystem's seeds, or has a written reason, and every
//     transaction path (row-lock wait, deadlock, REPEATABLE READ pin and
//     40001, savepoint rollback, stale re-run, upsert) is exercised.
//
// Every message between actors and clients crosses the wire codec
// (actors/wire, sim.Options.Codec): encoded when sent, decoded for the
// receiver, so no actor shares memory with another and a message that is
// not a value fails the run.
//
// Replay one seed: go test ./sim/system -run '^TestSystem$' -seed=N -v
// Over shards: go test ./sim/system -run '^TestSystemShards$' -seed=N -v (fresh
// ones: -seeds=K, or go run ./soak -shards).
// Fresh seeds:     go test ./sim/system -run '^TestSystem$' -seeds=K
// Soak:            go run ./soak -runs=10000 (shrinks and saves failures in seeds/testdata)
//
// Planted bugs, each asserted caught within a bounded number of seeds:
// AckBeforeDurable (Options.Plant; and the plantbug_ackbeforedurable tag
// plants it into every run: TestPlantedBugCaught), TornCommit (a commit's
// batch applied as two durable writes; Options.Plant), and an aggregate
// that does not subtract retracted values from SUM (the
// plantbug_aggretraction tag, in ivm/op: TestPlantedAggRetractionCaught),
// row locks released as soon as they are granted, long before the
// holder's commit is durable (the plantbug_lockbeforedurable tag, in
// actors/shard: TestPlantedLockBeforeDurableCaught), and REPEATABLE READ
// statements reading the newest state instead of their snapshot (the
// plantbug_rrnewsnapshot tag, in actors/session:
// TestPlantedRRNewSnapshotCaught):
//
//	go test -tags plantbug_ackbeforedurable ./sim/system -run TestPlantedBugCaught -v
//	go test -tags plantbug_aggretraction ./sim/system -run TestPlantedAggRetractionCaught -v
//	go test -tags plantbug_lockbeforedurable ./sim/system -run TestPlantedLockBeforeDurableCaught -v
//	go test -tags plantbug_rrnewsnapshot ./sim/system -run TestPlantedRRNewSnapshotCaught -v
package system

// Findings, all fixed (replay with -seed):
//   - seed 1263 (sequential scenario): the read frontier went backwards
//     across a crash; the shard now makes a frontier durable before
//     showing it to anyone.
//   - seeds 1544, 14514280840814524977 (sequential scenario): a
//     materialized view missed epochs when a catalog sync failed half-way;
//     a failed sync now restores the catalog version and the view list.
//   - seed 1 (concurrent sessions; seeds/testdata/system-none-1.json): a
//     Read of tables and views returned the tables at the last epoch but
//     the views at an older frontier; a mixed read now catches up.
//   - seeds 6, 9 (generator source; seeds/testdata): the control plane's
//     catalog Version restarted at 0 after a reload, so a shard holding a
//     higher-numbered snapshot ignored newer DDL and a view was backfilled
//     twice; actors/control now stores the version.
//   - seed 18: a generator whose GetSourceOffset failed never started;
//     actors/source now retries it on its tick.
//   - seed 11: a shard that adopted, after a restart, a catalog older than
//     a view whose state it stored neither maintained nor dropped that
//     view, and later re-installed it from stale state. The shard drops
//     the state of every view its catalog does not have, and since issue
//     16 it never adopts a catalog older than one it ran (a durable
//     catalog floor; actors/shard TestOlderCatalogNeverDropsViewState).
