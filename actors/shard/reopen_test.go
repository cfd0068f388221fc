package shard

import (
	"context"
	"errors"
	"testing"

	"github.com/rockstream/rockstream/actors/storage"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/slate/objstore"
)

// brokenWrites is an object store whose writes fail while broken is set:
// the WAL object of an acknowledged-in-memory batch does not land, the
// half-failed durable write that poisons a shard.
type brokenWrites struct {
	objstore.Store
	broken bool
}

var errBroken = errors.New("injected: object store write failed")

func (b *brokenWrites) Put(ctx context.Context, key string, data []byte) (objstore.Version, error) {
	if b.broken {
		return "", errBroken
	}
	return b.Store.Put(ctx, key, data)
}

func (b *brokenWrites) PutIfAbsent(ctx context.Context, key string, data []byte) (objstore.Version, error) {
	if b.broken {
		return "", errBroken
	}
	return b.Store.PutIfAbsent(ctx, key, data)
}

func (b *brokenWrites) PutIfMatch(ctx context.Context, key string, data []byte, match objstore.Version) (objstore.Version, error) {
	if b.broken {
		return "", errBroken
	}
	return b.Store.PutIfMatch(ctx, key, data, match)
}

// TestPoisonedShardReopens: a commit whose durable write half-fails
// poisons the shard; once the store works again the next request reopens
// the shard from durable state (no process restart) and it serves again,
// with the view equal to exactly the commits that were made durable.
func TestPoisonedShardReopens(t *testing.T) {
	h, view := newHarness(t)
	objects := &brokenWrites{Store: objstore.NewMemory()}
	opens := 0
	h.ctx = &testCtx{store: objects}
	h.actor = New(Config{
		// Every (re)open is a new slate writer over the same objects.
		OpenStore: func(runtime.Context) (kv.Store, error) {
			opens++
			return storage.Open(context.Background(), objects, "shards/0", storage.Options{})
		},
		Planner: sumPlanner{table: h.table},
	})().(*Actor)
	h.actor.Receive(h.ctx, runtime.Started{})
	h.ask(SyncCatalog{Catalog: h.snap.Value()})

	row := func(k, v int64) types.Row { return types.Row{k, v} }
	commit := func(k, v int64) error {
		h.ctx.reply = nil
		h.actor.Receive(h.ctx, Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{{Table: h.table.ID, Key: types.Row{k}, Row: row(k, v)}}})
		if h.ctx.reply == nil {
			// A deferred (group-commit) reply: deliver the queued flush.
			h.deliver(func(m runtime.Message) bool { _, ok := m.(flushCommits); return ok })
		}
		if err, ok := h.ctx.reply.(error); ok {
			return err
		}
		return nil
	}
	if err := commit(1, 10); err != nil {
		t.Fatal(err)
	}
	h.drain()

	// The store breaks: the commit fails and the shard is poisoned.
	objects.broken = true
	if err := commit(2, 20); err == nil || !containsState(err, "57P03") {
		t.Fatalf("commit on a broken store: %v", err)
	}
	if !h.actor.reopen.poisoned {
		t.Fatal("a half-failed commit did not poison the shard")
	}
	// While the store is broken, requests fail (and reopen attempts fail).
	h.ctx.now = h.ctx.now.Add(reopenBackoffMax)
	if err := commit(3, 30); err == nil {
		t.Fatal("a poisoned shard accepted a commit")
	}
	// The store heals: after the backoff the next request reopens the shard.
	objects.broken = false
	h.ctx.now = h.ctx.now.Add(reopenBackoffMax)
	before := opens
	if err := commit(4, 40); err != nil {
		t.Fatalf("commit after the store healed: %v", err)
	}
	if opens != before+1 || h.actor.reopen.poisoned || h.actor.reopen.reopens != 1 {
		t.Fatalf("opens %d→%d, poisoned %v, reopens %d", before, opens, h.actor.reopen.poisoned, h.actor.reopen.reopens)
	}
	h.drain()
	got := h.view(view)
	// Key 2's commit failed: it is in the view only if its WAL landed,
	// which it did not (every write failed), so exactly keys 1 and 4.
	if len(got) != 2 || got[1] != 10 || got[4] != 40 {
		t.Fatalf("view after reopen: %v", got)
	}
	// The recovered shard keeps working and its state survives a restart.
	if err := commit(1, 11); err != nil {
		t.Fatal(err)
	}
	h.drain()
	if got := h.view(view); got[1] != 11 || got[4] != 40 || len(got) != 2 {
		t.Fatalf("view after more commits: %v", got)
	}
}

// TestFailedFirstOpenRetries: a store unreachable when the shard starts
// (a transient read failure) must not leave the shard failing every
// request until the process restarts: after the backoff the next request
// opens it.
func TestFailedFirstOpenRetries(t *testing.T) {
	h, view := newHarness(t)
	h.ctx = &testCtx{store: objstore.NewMemory()}
	opens, failing := 0, true
	h.actor = New(Config{
		OpenStore: func(runtime.Context) (kv.Store, error) {
			opens++
			if failing {
				return nil, errors.New("objstore: transient failure")
			}
			return h.store, nil
		},
		Planner: sumPlanner{table: h.table},
	})().(*Actor)
	h.actor.Receive(h.ctx, runtime.Started{})
	if h.actor.openErr == nil {
		t.Fatal("the failing open was not recorded")
	}
	h.ctx.reply = nil
	h.actor.Receive(h.ctx, SyncCatalog{Catalog: h.snap.Value()})
	if _, ok := h.ctx.reply.(error); !ok {
		t.Fatalf("a shard whose store is unreachable answered %v", h.ctx.reply)
	}
	failing = false
	h.ctx.now = h.ctx.now.Add(reopenBackoffMax)
	h.ask(SyncCatalog{Catalog: h.snap.Value()})
	if opens < 2 || h.actor.openErr != nil {
		t.Fatalf("after the store came back: %d opens, open error %v", opens, h.actor.openErr)
	}
	h.ctx.reply = nil
	h.actor.Receive(h.ctx, Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{{Table: h.table.ID, Key: types.Row{int64(1)}, Row: types.Row{int64(1), int64(10)}}}})
	if h.ctx.reply == nil {
		h.deliver(func(m runtime.Message) bool { _, ok := m.(flushCommits); return ok })
	}
	if err, ok := h.ctx.reply.(error); ok {
		t.Fatal(err)
	}
	h.drain()
	if got := h.view(view); got[1] != 10 {
		t.Fatalf("view after the late open: %v", got)
	}
}
