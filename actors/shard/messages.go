package shard

import (
	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/runtime"
)

// Messages the shard answers via Ask (the reply is the listed type or an
// error). Ordering rule (STYLE.md 11): a Commit's reply is sent only after its
// write batch is durable; a Read's reply reflects every epoch up to its
// MinEpoch.
//
// Messages are values (issue 16): a message names the catalog it was
// planned against by CatalogVersion; a shard running an older catalog
// fetches the newer one from the control plane before it handles the
// message (catalog.go).
type (
	// SyncCatalog pushes a catalog: the shard installs (backfilling) every
	// materialized view of it that the shard lacks and drops the state of
	// views no longer in it. A catalog older than the shard's is ignored
	// (never a reason to drop state). → Synced, once every backfill of a
	// view of Catalog has ended (backfill.go), or at once with Background
	// (a server's startup, which must serve while views backfill).
	SyncCatalog struct {
		Catalog    control.SnapshotValue
		Background bool
	}
	// Synced reports the catalog version the shard now runs.
	Synced struct{ Version uint64 }

	// Commit applies a transaction's row writes atomically under the next
	// source epoch. → Committed.
	Commit struct {
		// CatalogVersion is the catalog the writes were planned against.
		CatalogVersion uint64
		Writes         []RowWrite
		// Offset, when set, records a source connector's position in the
		// same batch as its rows, so a restarted connector resumes exactly
		// where its last durable commit ended (exactly-once).
		Offset *SourceOffset
		// Offsets are further positions recorded in the same batch: a
		// partitioned source (a Kafka topic) commits one per partition
		// whose records the batch holds.
		Offsets []SourceOffset
		// Txn, when set, releases the transaction's row locks
		// (rowlock.go) once the commit is durable, or once it failed.
		Txn TxnID
		// Resolves is the transaction whose intent this commit applies
		// (twophase.go): the intent is deleted in its batch.
		Resolves uint64
		// Absent lists tables whose keys found absent by the
		// transaction's lookups the commit need not read again, if no
		// commit wrote them since (absent.go).
		Absent []TableAbsent
	}
	// SourceOffset is a source connector's durable position.
	SourceOffset struct {
		Source catalog.ID
		// Partition tells the positions of a partitioned source apart (a
		// Kafka topic's partition); 0 for a source with one position.
		Partition uint32
		Offset    uint64
		// From, with FromSet, is the offset the commit continues: the
		// shard refuses it (RS-1040) when the stored offset is another,
		// so a connector that lost track of a commit (its reply or the
		// commit itself dropped) re-reads its offset instead of writing
		// rows twice.
		From    uint64
		FromSet bool
	}
	// GetSourceOffset → SourceOffset (0 if the source never committed
	// at Partition).
	GetSourceOffset struct {
		Source    catalog.ID
		Partition uint32
	}
	// Committed carries the transaction's source epoch (its freshness token).
	Committed struct{ Epoch uint64 }
	// GetEpoch asks the table shard for its last epoch: every commit its
	// reads show so far (acknowledged or awaiting its sync) is at or below
	// it. A read on a view shard waits for it, so it shows no less than a
	// read of the tables that finished before it began. → Committed.
	GetEpoch struct{}

	// Read returns consistent snapshots of relations (tables: their rows;
	// materialized views: their outputs) after every epoch up to MinEpoch is
	// applied. → ReadResult.
	Read struct {
		CatalogVersion uint64
		Relations      []catalog.ID
		// Ranges, when set, has one entry per Relations entry: the key
		// ranges a table is read in (nil: all of it; views are always
		// read whole, and so is every relation under AtEpoch).
		Ranges   [][]KeyRange
		MinEpoch uint64
		// At, when set, reads pinned snapshot At (OpenSnapshot) instead
		// of the current state; MinEpoch is then ignored. PinEpoch, when
		// set, is the epoch snapshot At was opened at (SnapshotOpened):
		// a pin of that id at another epoch (ids start again after a
		// restart) fails the read with 40001 instead of answering it.
		At       uint64
		PinEpoch uint64
		// AtEpoch reads tables as they were right after epoch Epoch,
		// which the view shard's frontier reached (a statement reading
		// tables and materialized views: exchange.go). Table shard only.
		AtEpoch bool
		Epoch   uint64
	}
	// ReadResult holds one batch per requested relation, in request order.
	ReadResult struct {
		Frontier uint64
		Batches  []zset.Batch
		// FrontierTime is the time of epoch Frontier, which the views'
		// temporal filters were stepped at (epochtime.go); 0 for a read
		// of tables only at an earlier epoch.
		FrontierTime types.TimestampTZ
	}

	// Lookup returns the current rows of a table for primary keys. →
	// LookupResult.
	Lookup struct {
		CatalogVersion uint64
		Table          catalog.ID
		Keys           []types.Row // primary-key values, in PrimaryKey column order
		// At, when set, looks up in pinned snapshot At (OpenSnapshot).
		At uint64
	}
	// LookupResult has one entry per key: the row, or nil if absent.
	// Seen is the state it was answered in (zero: none), which a commit
	// names so as not to read the absent keys again (absent.go).
	LookupResult struct {
		Rows []types.Row
		Seen LookupSeen
	}
	// LookupSeen is the state of a table shard a Lookup was answered in:
	// its last epoch and its catalog version.
	LookupSeen struct{ Epoch, Catalog uint64 }
	// TableAbsent says that every key of Table a commit writes with
	// MustNotExist was looked up on the shard, and found absent, in Seen
	// or a later state (absent.go).
	TableAbsent struct {
		Table catalog.ID
		Seen  LookupSeen
	}

	// GetStatus → Status. NoRowCounts leaves the views' Rows 0: counting
	// them scans every view's stored rows, which a caller asking only what
	// state the views are in (did a new view fail?) need not pay.
	GetStatus struct{ NoRowCounts bool }
	// Status describes the shard for SHOW VIEW STATUS, metrics and /readyz.
	Status struct {
		Ready      bool
		LastEpoch  uint64
		Frontier   uint64
		CatalogVer uint64
		Views      []ViewStatus
		LastError  string
		Commits    uint64
		// CommitSyncs counts durable writes that acknowledged commits:
		// Commits/CommitSyncs is the group-commit batch size.
		CommitSyncs uint64
		EpochSteps  uint64
		StepNanos   int64
		StateWrites uint64
		// ViewRebuilds counts views whose stored state was in another
		// format and was rebuilt from their inputs (format.go).
		ViewRebuilds uint64
		// CatalogFetches counts the catalogs asked of the control plane
		// because a message named a newer one (catalog.go).
		CatalogFetches uint64
		// BackfillChunks counts the backfill chunks run (backfill.go).
		BackfillChunks uint64
		// BackfillColumnarRows counts the table rows backfills decoded
		// straight into columns (backfill.go).
		BackfillColumnarRows uint64
		// BackfillIngests counts the held backfill states the store
		// ingested as sorted runs (backfillstate.go).
		BackfillIngests uint64
		// BackfillRowsStaged counts the exported table rows a view shard
		// wrote to its store for a backfill (export.go), to delete them
		// when it ends; a view reading only tables is fed from the export
		// as it arrives instead (exportstream.go).
		BackfillRowsStaged uint64
		// ReadRows counts the table rows Read decoded from the store
		// (keyrange.go).
		ReadRows uint64
		// Shard is the shard answering; DurableEpoch its last durable
		// epoch; Exchange its outbound exchange, one entry per view shard
		// (the table shard of a store over several shards).
		Shard        uint32
		DurableEpoch uint64
		Exchange     []ExchangeStatus
		// ExchangeTakenBytes are the bytes of the log entries a view
		// shard took from exchange frames and has not stepped over yet
		// (held in memory).
		ExchangeTakenBytes int64
		// Watermarks are the event-time watermarks of the tables that
		// declare one, with their late-row counts (table shard only).
		Watermarks []WatermarkStatus `json:",omitempty"`
	}
	// ExchangeStatus is the table shard's view of one exchange peer.
	ExchangeStatus struct {
		Peer uint32
		// Acked: every epoch up to it is durable on the peer; Sent: frames
		// up to it were sent; InFlight: frames not acknowledged, holding
		// InFlightBytes of entries; Credit: frames that may still be sent
		// before an acknowledgement (the credit less InFlight);
		// PeerFrontier: the peer's reported frontier.
		Acked, Sent, PeerFrontier uint64
		InFlight, Credit          int
		InFlightBytes             int64
	}
	// ViewStatus is one view's line in SHOW VIEW STATUS.
	ViewStatus struct {
		View       catalog.ID
		Name       string
		Rows       int64
		StateRows  int64
		StateBytes int64
		Error      string
		// Failed is why the view could not be built or backfilled (""
		// when it runs): it is not maintained (failed.go). FailedCode is
		// the RS code of the error that failed it.
		Failed     string
		FailedCode string
		// Backfill is the state of the view's backfill while it is being
		// filled ("queued", "reading inputs", "catching up"; "" once it
		// is maintained), with the input rows fed so far.
		Backfill         string
		BackfillRowsRead int64
		// BackfillPercent estimates how much of its inputs a backfill
		// has fed (100 while it catches up with the changes since).
		BackfillPercent float64 `json:",omitempty"`
		Nodes           []circuit.NodeStats
		// Frontier is the frontier of the shard running the view (set
		// by the engine when it gathers the shards' statuses).
		Frontier uint64 `json:",omitempty"`
		// LagNanos is how long the oldest commit the view does not
		// reflect yet has waited (0: it reflects every commit), and
		// Behind why its shard is behind ("recovering", "behind inputs",
		// "overloaded"); both set by the engine, which knows when
		// epochs were committed.
		LagNanos int64  `json:",omitempty"`
		Behind   string `json:",omitempty"`
	}

	// Subscribe registers a subscription of a view for an edge actor
	// (actors/subscriber), which owns the subscriber's bounded queue: the
	// shard sends it SubscriptionUpdate values, never more than the edge
	// granted room for (Through, then SubscriptionCredit), and keeps a
	// subscriber that is behind in the view's change history instead of in
	// memory (subscription.go). → Subscribed (with the snapshot when
	// asked), or RS-2005 when AsOf is older than the retained history.
	Subscribe struct {
		// CatalogVersion is the catalog the subscriber resolved View in
		// (a shard that is behind fetches it first, catalog.go).
		CatalogVersion uint64
		View           catalog.ID
		WithSnapshot   bool
		// Resume asks for every change after epoch AsOf (SUBSCRIBE ... AS
		// OF EPOCH n), replayed from the view's history, then live.
		Resume bool
		AsOf   uint64
		// Edge is the actor the updates go to; one subscription per edge.
		Edge runtime.ActorID
		// Through is the Seq of the last update the edge has room for.
		Through uint64
		// MinEpoch is the subscriber's last commit: the subscription
		// starts after it (read-your-writes, as Read).
		MinEpoch uint64
	}
	// Subscribed acknowledges a subscription: the first update continues
	// after Frontier (after AsOf when resuming).
	Subscribed struct {
		Frontier uint64
		Snapshot zset.Batch
	}
	// Unsubscribe removes the subscription of an edge actor. → struct{}.
	Unsubscribe struct{ Edge runtime.ActorID }
	// SubscriptionCredit (edge → shard) grants room: the shard may send
	// updates up to Seq Through. Grants are absolute, so a lost or
	// repeated one is harmless.
	SubscriptionCredit struct{ Through uint64 }
	// SubscriptionUpdate (shard → edge) carries a view's changes in
	// epochs (After, Epoch], possibly none: Epoch is then complete. Seq
	// numbers the updates of one subscription from 1 without gaps, so the
	// edge detects a lost message.
	SubscriptionUpdate struct {
		Seq   uint64
		After uint64
		Epoch uint64
		Delta zset.Batch
	}
	// SubscriptionEnded (shard → edge) ends a subscription with an error,
	// as plain values: the errcode id (errcode.Lookup) and the message.
	SubscriptionEnded struct {
		Code    string
		Message string
	}
)

// RowWrite is one row change of a transaction, already validated by the
// session against NOT NULL and CHECK constraints.
type RowWrite struct {
	Table catalog.ID
	// Row is the new row; nil deletes the row with primary key Key.
	Row types.Row
	// Key is the primary key of the row to delete or replace (nil for
	// inserts into INSERT_ONLY tables).
	Key types.Row
	// MustNotExist makes the commit fail with 23505 if a row with this key
	// exists (a plain INSERT racing another session's INSERT).
	MustNotExist bool
	// CheckBase makes the commit fail with RS-2008 (40001) unless the
	// stored row under Key still equals Base, the row the transaction read
	// before changing it (nil Base: the key must be absent). It is the
	// optimistic guard against lost updates in explicit transactions.
	CheckBase bool
	Base      types.Row
}

// epochTick asks the shard to run the maintenance step.
type epochTick struct{}

// A session's commit is answered in the order of the messages it sent to
// the shard (actors in one process receive each other's messages in
// order): a Probe sent after a Commit whose answer has not come is
// answered with Probed only after that answer, so a Probed arriving first
// means the Commit or its answer was lost; while neither arrives, the
// shard is still working on it.
type (
	// Probe (session → shard) → Probed, once every message the sender
	// sent before it was handled and every commit among them answered.
	Probe struct{}
	// Probed answers Probe.
	Probed struct{}
)
