package buggify

import "github.com/rockstream/rockstream/faults"

// Site names one place in the code where simulation may inject a fault.
type Site string

// SiteInfo registers a site: the faults/ entry it exercises and what must
// survive it (STYLE.md 6).
type SiteInfo struct {
	Site Site
	// Fault is the faults.Catalog entry this site exercises.
	Fault string
	// Survives says what must still hold when the site fires.
	Survives string
}

// Registered sites. Adding one: a constant here and a line in registry below
// (one line each, owners add their own; keep the table sorted by name).
const (
	// RegisterClientEarlyRetry: the example register's client resends a
	// request at once, so replicas see duplicates.
	RegisterClientEarlyRetry Site = "sim/register.client_early_retry"
	// RegisterReplicaDropReply: a register replica applies a request but
	// loses its reply.
	RegisterReplicaDropReply Site = "sim/register.replica_drop_reply"
	// ShardExtraStorageTick: the shard runs slate's background work
	// (WAL/memtable flush, compaction, GC) twice on one tick.
	ShardExtraStorageTick Site = "actors/shard.extra_storage_tick"
	// ShardSkipEpochStep: the shard skips a scheduled maintenance step.
	ShardSkipEpochStep Site = "actors/shard.skip_epoch_step"
)

// registry is the one place every site is registered.
//
//lint:immutable a constant table; Sites returns a copy.
var registry = []SiteInfo{
	{ShardExtraStorageTick, faults.TimerJitter, "flushes and compactions at any moment never lose or duplicate a committed row or view state"},
	{ShardSkipEpochStep, faults.TimerJitter, "views lag the tables, but a read with MinEpoch catches up before answering and frontiers never pass the last epoch"},
	{RegisterClientEarlyRetry, faults.NetworkDuplicate, "replicas are idempotent: a duplicate store request never rolls a register back"},
	{RegisterReplicaDropReply, faults.NetworkDrop, "an applied but unacknowledged write is either visible later or the op stays indeterminate; never a lost acknowledged write"},
}

// Sites returns every registered site in name order.
func Sites() []SiteInfo { return append([]SiteInfo(nil), registry...) }

func lookup(site Site) (SiteInfo, bool) {
	for _, s := range registry {
		if s.Site == site {
			return s, true
		}
	}
	return SiteInfo{}, false
}
