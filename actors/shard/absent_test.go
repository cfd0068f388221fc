package shard

import (
	"testing"

	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
)

// TestCommitAbsentProof: a commit naming the state its lookups found its
// keys absent in (Commit.Absent) skips reading them only while that still
// holds. A commit of the key by another transaction after the lookup, or
// a restart after it, makes the commit read the key again and fail with
// 23505; while it holds, the commit trusts it: a forged state, named
// after the key's insert, lets a second insert of the key through, which
// shows the read was skipped.
func TestCommitAbsentProof(t *testing.T) {
	h, _ := newHarness(t)
	h.start()
	insert := func(k int64) RowWrite {
		return RowWrite{Table: h.table.ID, Key: types.Row{k}, Row: types.Row{k, int64(1)}, MustNotExist: true}
	}
	lookup := func(k int64) LookupSeen {
		t.Helper()
		res := h.ask(Lookup{CatalogVersion: h.snap.Version, Table: h.table.ID, Keys: []types.Row{{k}}}).(LookupResult)
		if res.Rows[0] != nil || res.Seen.Epoch != h.actor.lastEpoch || res.Seen.Catalog != h.snap.Version {
			t.Fatalf("lookup of %d: %v, seen %+v (last epoch %d)", k, res.Rows[0], res.Seen, h.actor.lastEpoch)
		}
		return res.Seen
	}
	commit := func(seen LookupSeen, w RowWrite) runtime.Message {
		h.ctx.reply = nil
		h.actor.Receive(h.ctx, Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{w}, Absent: []TableAbsent{{Table: h.table.ID, Seen: seen}}})
		h.deliver(func(m runtime.Message) bool { _, ok := m.(flushCommits); return ok })
		h.drain()
		return h.ctx.reply
	}
	h.ask(Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{insert(100)}})
	h.drain()

	seen := lookup(1)
	h.ask(Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{insert(1)}}) // another transaction
	h.drain()
	if err, ok := commit(seen, insert(1)).(error); !ok || !containsState(err, "23505") {
		t.Fatalf("insert of a key committed after the lookup: %v, want 23505", h.ctx.reply)
	}

	seen = lookup(3)
	h.ask(Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{insert(3)}})
	h.drain()
	h.start() // forgets which tables commits wrote
	if err, ok := commit(seen, insert(3)).(error); !ok || !containsState(err, "23505") {
		t.Fatalf("insert of a key committed after the lookup, across a restart: %v, want 23505", h.ctx.reply)
	}

	h.ask(Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{insert(200)}})
	h.drain()
	forged := LookupSeen{Epoch: h.actor.lastEpoch, Catalog: h.snap.Version}
	if _, ok := commit(forged, insert(3)).(Committed); !ok {
		t.Fatalf("insert under a state no commit of the table followed: %v, want it trusted", h.ctx.reply)
	}
}
