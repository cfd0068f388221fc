// Package shard is the shard actor: it owns one shard DB (a slate database
// behind kv.Store), the base tables stored in it, and the circuits of every
// materialized view placed on it (the embedded profile has one shard).
//
// Two durable steps, each ONE atomic write batch (spec §9, §13.5):
//
//	Commit (a session's transaction)          Epoch step (maintenance)
//	─────────────────────────────────         ─────────────────────────────
//	table rows put/deleted                    every view circuit stepped on
//	delta log entry under the next            the deltas (frontier, last],
//	  source epoch                            op state + view outputs,
//	last source epoch                         consumed log entries deleted,
//	→ durable, then COMMIT returns            new frontier = last epoch
//
// A crash between the two replays the log from the frontier on restart, so a
// committed transaction is never lost and never applied twice: the frontier
// and the state it describes are written in the same batch.
//
// Group commit (groupcommit.go): commits that queue up while a durable
// write is in flight are applied without waiting and acknowledged together
// after ONE store sync (one WAL object); reads behind them are served right
// after that sync, and an epoch step due at that moment runs before it, so
// the same WAL object carries the commits and their maintenance.
//
// Row locks (rowlock.go, deadlock.go): the shard holds the exclusive
// locks of the rows it stores, by transaction id. LockRows that meets a
// held key waits in the key's FIFO queue with a deferred reply (Receive
// never blocks); the lock passes on when its holder's Commit is durable
// (Commit.Txn), or at UnlockRows (rollback, empty commit, closed
// session). Each wait is reported to the deadlock detector actor as a
// wait-for edge; a cycle is answered with 40P01 to the wait that closed
// it. A detector rather than wound-wait: wound-wait aborts transactions
// that are not deadlocked (any older waiter wounds a younger holder),
// which hot-row workloads such as pgbench's would feel as failures
// PostgreSQL does not produce, and one detector sees cycles across every
// shard, which a shard alone cannot.
//
// Catalog by version (catalog.go): messages name the catalog version they
// were planned against; the shard caches the newest catalog it has, and one
// that is behind parks the message and fetches the catalog from the
// control plane. It never adopts a catalog older than one it ran (a durable
// floor survives restarts), so a stale message never drops a view's state.
//
// State diagram of a view on this shard:
//
//	        catalog adopted (new mview)          chunks done
//	absent ───────────────────────────► backfilling ─────────► maintained
//	   ▲  │                               ▲  │  ▲                │  │
//	   │  │ cannot be built               │  │  └ catalog with a ┘  │
//	   │  ▼                               │  │    new plan (RECOMPILE;│
//	   │ failed ── catalog adopted, built ┘  │    rebuilt)            │
//	   │  │  ▲                               │ CancelBackfill, error  │
//	   │  │  └───────────────────────────────┘                        │
//	   └──┴───────────── newer catalog without it ◄──────────────────┘
//	                     (state scan-deleted)
//
// Backfill (backfill.go): a new or rebuilt view is filled from its inputs
// in bounded chunks that the shard sends itself, so commits, reads and
// epoch steps are served between them; the inputs are pinned at the
// frontier when the fill starts, and the epoch steps meanwhile store the
// view's input deltas, which the last chunks feed before the view joins
// the steps. The SyncCatalog that added the view is answered once it is
// filled; a Background one (startup) at once.
//
// A view that cannot be built from its stored definition is failed
// (failed.go): not maintained, reads answer RS-1514, every other view runs.
// So is a view whose backfill or maintenance step is refused for memory
// (RS-5502: the circuit's per-step bound, Config.StepBytesMax), and one
// whose backfill was started backfillAttemptsMax times without finishing,
// across restarts (backfillbound.go), so a backfill that kills the process
// cannot keep the server from starting.
//
// Keys (spec §5.1):
//
//	0x01 'T' table(16) bucket(2) pk-key
//	                                   base-table row (keyenc PK → row value);
//	                                   bucket = partition.BucketOf(pk-key)
//	0x01 'T' table(16) bucket(2) epoch(8) pos(4)
//	                                   row of a table without a primary key;
//	                                   bucket of the stored row (BucketOfRow)
//	0x01 kind op(16) …                 operator state (ivm/arrange)
//	0x03 kind view(16) …               view outputs (ivm/circuit)
//	0x06 'E'                           last assigned source epoch
//	0x06 'F'                           frontier: last epoch applied to views
//	0x06 'L' epoch(8)                  delta log entry awaiting maintenance
//	0x06 'V' view(16)                  view installed (backfilled) marker,
//	                                   holding its state format record
//	0x06 'v'                           shard (base-table row) format version
//	0x06 'C'                           catalog floor: newest catalog version adopted
//	0x06 'H' view(16) epoch(8)         change history: the view's output
//	                                   delta of the step ending at epoch
//	0x06 'h' view(16)                  history floor: every change after
//	                                   it is kept (history.go)
//	0x06 'B' view(16)                  backfill record: the view's fill
//	                                   has written state, not finished
//	0x06 'b' view(16) epoch(8)         a backfilling view's input deltas
//	                                   of the step ending at epoch
//	                                   (backfill.go)
//
// SUBSCRIBE (subscription.go): each closed, durable epoch step is sent as
// a value to the subscription's edge actor (actors/subscriber) within the
// credit it granted; a subscriber without credit, or resuming AS OF EPOCH,
// is served from the view's change history (history.go), never from a
// buffer in the shard.
//
// Every row key carries its bucket (ivm/partition), so a bucket's rows are
// one key range that can move to another shard; a table scan reads bucket
// after bucket, each in primary-key order. Secondary indexes keep one entry
// per row beside the rows, written in the same commit batch (index.go).
// A shard writes only rows of
// buckets the bucket map gives it (route.go); senders address shards
// through a Router.
//
// Formats (format.go): a stored view whose format record is not this
// build's is rebuilt from its inputs at install, with the views reading
// it; base-table rows of shard format 1 (keys without buckets) are re-keyed
// in place at the first catalog sync (upgrade.go); a shard in a format
// this build does not read is refused (RS-5001).
package shard
