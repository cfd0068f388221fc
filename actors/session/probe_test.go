package session_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/session"
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/actors/wire"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/sim"
)

// slowShard stands in for a shard that takes commitTakes to answer a
// commit and, as a shard does, answers a Probe only after the commits it
// got before it (dropCommits: it loses them instead). lookupTakes and
// dropLookups do the same to a lookup (a shard busy compacting before it
// gets to one).
type slowShard struct {
	commitTakes time.Duration
	dropCommits bool
	lookupTakes time.Duration
	dropLookups bool
	lookup      runtime.Deferred
	pending     []runtime.Deferred
	probes      []runtime.Deferred
	commits     int
}

type (
	commitDone struct{}
	lookupDone struct{}
)

func (f *slowShard) Receive(ctx runtime.Context, msg runtime.Message) {
	switch msg.(type) {
	case shard.Commit:
		f.commits++
		if f.dropCommits {
			return
		}
		f.pending = append(f.pending, ctx.Defer())
		ctx.After(f.commitTakes, commitDone{})
	case commitDone:
		f.pending[0].Reply(shard.Committed{Epoch: uint64(f.commits)})
		f.pending = f.pending[1:]
		if len(f.pending) == 0 {
			for _, p := range f.probes {
				p.Reply(shard.Probed{})
			}
			f.probes = nil
		}
	case shard.LockRows:
		ctx.Reply(shard.RowsLocked{})
	case shard.Lookup:
		if f.dropLookups {
			return
		}
		if f.lookupTakes > 0 {
			f.lookup = ctx.Defer()
			ctx.After(f.lookupTakes, lookupDone{})
			return
		}
		ctx.Reply(shard.LookupResult{Rows: []types.Row{nil}})
	case lookupDone:
		f.lookup.Reply(shard.LookupResult{Rows: []types.Row{nil}})
		f.lookup = nil
		for _, p := range f.probes {
			p.Reply(shard.Probed{})
		}
		f.probes = nil
	case shard.UnlockRows:
	case shard.Probe:
		if len(f.pending) > 0 || f.lookup != nil {
			f.probes = append(f.probes, ctx.Defer())
			return
		}
		ctx.Reply(shard.Probed{})
	}
}

func probeWorld(t *testing.T, f *slowShard) (*sim.Sim, runtime.ActorID, catalog.Relation) {
	t.Helper()
	codec, err := wire.NewCodec(wire.Messages()...)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.QuietConfig()
	s := sim.New(sim.Options{Seed: 1, Config: &cfg, Codec: codec, AskTimeout: time.Hour})
	table := &catalog.Relation{Kind: catalog.KindTable, Name: "t", PrimaryKey: []int{0}, Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8, NotNull: true}, {Name: "v", Type: types.TInt8},
	}}
	snap := control.NewSnapshot(catalog.NamespaceID{}, 1, table)
	if err := s.Spawn("p", shard.ActorOf(0), func() runtime.Actor { return f }); err != nil {
		t.Fatal(err)
	}
	a := session.ActorOf(1)
	if err := s.Spawn("p", a, session.New(session.Config{Session: 1, Router: shard.NewRouter(snap.BucketMap())})); err != nil {
		t.Fatal(err)
	}
	return s, a, *table
}

func commitOneRow(t *testing.T, s *sim.Sim, a runtime.ActorID, table catalog.Relation) (runtime.Message, time.Duration) {
	t.Helper()
	for _, m := range []runtime.Message{
		session.Begin{},
		session.Statement{CatalogVersion: 1, Data: true},
		session.Lookup{CatalogVersion: 1, Table: table, Keys: []types.Row{{int64(1)}}, Lock: true},
		session.Set{Table: table, Keys: []types.Row{{int64(1)}}, Rows: []types.Row{{int64(1), int64(10)}}},
	} {
		if r, err := s.Ask(context.Background(), a, m); err != nil {
			t.Fatalf("%T: %v", m, err)
		} else if e, ok := r.(error); ok {
			t.Fatalf("%T: %v", m, e)
		}
	}
	start := s.Now()
	r, err := s.Ask(context.Background(), a, session.Commit{CatalogVersion: 1})
	if err != nil {
		t.Fatal(err)
	}
	return r, s.Now() - start
}

// TestSlowCommitIsWaitedFor: a commit the shard takes 35s to answer (a
// large commit on a loaded machine), past the session's 10s reply
// timeout, is answered with its epoch: the shard does not answer the
// session's probes before it, so the session keeps waiting instead of
// reporting an unknown outcome (RS-3100) for a commit that succeeds.
func TestSlowCommitIsWaitedFor(t *testing.T) {
	s, a, table := probeWorld(t, &slowShard{commitTakes: 35 * time.Second})
	r, took := commitOneRow(t, s, a, table)
	if c, ok := r.(session.Committed); !ok || c.Epoch != 1 {
		t.Fatalf("the slow commit answered %v after %v", r, took)
	}
	if took < 35*time.Second {
		t.Fatalf("the commit was answered after %v, before the shard answered it", took)
	}
}

// TestLostCommitIsReportedUnknown: a commit the shard never answers (it
// or its answer was lost) while the shard answers the probe sent after
// it is reported as RS-3100, outcome unknown, at the first timeout.
func TestLostCommitIsReportedUnknown(t *testing.T) {
	s, a, table := probeWorld(t, &slowShard{dropCommits: true})
	r, took := commitOneRow(t, s, a, table)
	err, _ := r.(error)
	if !errcode.Has(err, errcode.ShardUnavailable) {
		t.Fatalf("a lost commit answered %v after %v, want RS-3100", r, took)
	}
	if took > 15*time.Second {
		t.Fatalf("a lost commit was reported after %v", took)
	}
}

// lookupOneRow runs a transaction's first lookup.
func lookupOneRow(t *testing.T, s *sim.Sim, a runtime.ActorID, table catalog.Relation) (runtime.Message, time.Duration) {
	t.Helper()
	for _, m := range []runtime.Message{session.Begin{}, session.Statement{CatalogVersion: 1, Data: true}} {
		if r, err := s.Ask(context.Background(), a, m); err != nil {
			t.Fatalf("%T: %v", m, err)
		} else if e, ok := r.(error); ok {
			t.Fatalf("%T: %v", m, e)
		}
	}
	start := s.Now()
	r, err := s.Ask(context.Background(), a, session.Lookup{CatalogVersion: 1, Table: table, Keys: []types.Row{{int64(1)}}})
	if err != nil {
		t.Fatal(err)
	}
	return r, s.Now() - start
}

// TestSlowReadIsWaitedFor: a lookup the shard gets to only after 35s
// (busy merging its storage, as a shard compacting a large table on a
// loaded machine is) is answered, not failed with RS-3100 at the 10s
// reply timeout: the shard does not answer the probes sent after it.
func TestSlowReadIsWaitedFor(t *testing.T) {
	s, a, table := probeWorld(t, &slowShard{lookupTakes: 35 * time.Second})
	r, took := lookupOneRow(t, s, a, table)
	if _, ok := r.(session.LookupResult); !ok {
		t.Fatalf("the slow lookup answered %v after %v", r, took)
	}
	if took < 35*time.Second {
		t.Fatalf("the lookup was answered after %v, before the shard answered it", took)
	}
}

// TestLostReadIsReported: a lookup the shard never answers while it
// answers the probe sent after it fails with RS-3100 at the first
// timeout, naming no unknown outcome (a read has none).
func TestLostReadIsReported(t *testing.T) {
	s, a, table := probeWorld(t, &slowShard{dropLookups: true})
	r, took := lookupOneRow(t, s, a, table)
	err, _ := r.(error)
	if !errcode.Has(err, errcode.ShardUnavailable) || strings.Contains(err.Error(), "outcome") {
		t.Fatalf("a lost lookup answered %v after %v, want RS-3100", r, took)
	}
	if took > 15*time.Second {
		t.Fatalf("a lost lookup was reported after %v", took)
	}
}
