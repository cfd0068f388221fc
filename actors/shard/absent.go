package shard

import (
	"github.com/rockstream/rockstream/ivm/sql/catalog"
)

// Keys a transaction found absent need not be read again by its commit.
//
// A plain INSERT or COPY looks its keys up (the session's duplicate check,
// 23505 at the statement, as PostgreSQL) and the commit reads them again
// (a concurrent transaction may have inserted one since). A Lookup's
// answer names the state it was answered in (LookupSeen: the last epoch
// and the catalog version); a Commit lists, per table, the oldest such
// state over all its lookups of the table (Commit.Absent). If no commit
// wrote the table after that epoch and the catalog is the same, the table
// holds what it held then, so every key found absent is still absent and
// the commit skips reading those (a COPY of a million rows into a table
// that holds rows read each of them twice).
//
// Sound because every change of a table's rows on a table shard outside
// a catalog change is a commit (commitAt), which records its epoch for
// each table it writes here, in the same message that applies it; a
// catalog change (rekey.go's rewrites among them) changes the version; a
// partitioned layout, whose rows also move between shards and commit in
// two phases, gives no state; and a restart forgets the record, so states
// named before it are refused (floor: every epoch answered before an open
// is at most the last durable epoch the open reads; a lookup never sees a
// commit that is not durable, groupcommit.go).
type absentProofs struct {
	// written is the epoch of the last commit that wrote each table since
	// the open; floor the first epoch a state may name.
	written map[catalog.ID]uint64
	floor   uint64
	// tables are the tables the commit being built writes (commitBatchOf).
	tables []catalog.ID
}

// opened resets the record at an open whose last epoch is last.
func (p *absentProofs) opened(last uint64) {
	*p = absentProofs{floor: last + 1}
}

// seen is the state a Lookup at the newest state is answered in (zero:
// none, in a partitioned layout or on a view shard).
func (a *Actor) lookupSeen() LookupSeen {
	if a.snap == nil || a.partitioned() || !a.isTableShard() {
		return LookupSeen{}
	}
	return LookupSeen{Epoch: a.lastEpoch, Catalog: a.snap.Version}
}

// provenAbsent reports whether m's keys of table found absent by its
// lookups are still absent (see above).
func (a *Actor) provenAbsent(m Commit, table catalog.ID) bool {
	if m.Resolves != 0 || a.snap == nil || a.partitioned() {
		return false
	}
	for _, t := range m.Absent {
		if t.Table != table {
			continue
		}
		s := t.Seen
		return s.Epoch != 0 && s.Catalog == a.snap.Version && s.Epoch >= a.absent.floor && a.absent.written[table] <= s.Epoch
	}
	return false
}

// committed records that the commit just applied under epoch wrote
// a.absent.tables.
func (p *absentProofs) committed(epoch uint64) {
	if p.written == nil {
		p.written = map[catalog.ID]uint64{}
	}
	for _, t := range p.tables {
		p.written[t] = epoch
	}
	p.tables = p.tables[:0]
}
