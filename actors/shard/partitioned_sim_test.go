package shard

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/storage"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/sim"
	"github.com/rockstream/rockstream/slate/objstore"
)

// partSimOutcome is what one simulated run of the partitioned workload did.
type partSimOutcome struct {
	acked, unknown, reads, crashes, stranded int
	// snapshots: reads in a snapshot pinned on every shard; refused:
	// prepares refused for an older transaction in doubt (wait-die).
	snapshots, refused int
	trace              uint64
}

// runPartitionedSim runs a partitioned layout in the simulator: a table
// spread over table shards 0 and 1 (epochs from the control plane, seals
// pulled by the view shard), a view on shard 2, clients writing one key
// per commit to its owner and reading the view as of the control plane's
// last epoch, and crashes of every process or of one shard's, under the
// seed's faults. Checked:
// a client's reads never show an older frontier than its last one (within
// a run of the process) and every read shows every commit acknowledged
// before it began; at the end the view equals the tables read on both
// table shards as of its frontier, and each key holds its last
// acknowledged value or a later write whose outcome was unknown.
func runPartitionedSim(t *testing.T, seed uint64) (partSimOutcome, error) {
	const clients, opsPerClient, keys = 3, 40, 24
	// The seed's faults, network drops, duplicates and reorders included
	// (a lost export is asked for again: export.go), less partitions and
	// congestion: under a partition a backfill's export stalls until the
	// heal while this harness's SyncCatalog retries pile up behind it
	// (seed 28: "256 statements are already waiting"), which the network
	// transport of worker processes is to settle.
	cfg := sim.DrawConfig(sim.NewStream(seed, "sim/config"))
	cfg.PartitionProbability, cfg.CongestionProbability = 0, 0
	s := sim.New(sim.Options{Seed: seed, Config: &cfg})
	base, table, viewID := testSnapshot(t)
	v := base.Value()
	for i := range v.Relations {
		switch v.Relations[i].Relation.ID {
		case table.ID:
			v.Relations[i].Relation.Placement = catalog.PlacementSpread
		case viewID:
			v.Relations[i].Relation.Placement = 3 // shard 2
		}
	}
	v.BucketMap = partition.NewMapOver(1, []partition.ShardID{0, 1, 2}, []partition.ShardID{0, 1}).Encode()
	v.Partitioned = true
	snap := control.SnapshotOf(v)
	ptable, _ := snap.RelationByID(table.ID)
	router := NewRouter(snap.BucketMap())
	if !router.Partitioned() || len(router.TableShards()) != 2 {
		t.Fatalf("the layout is not partitioned over two table shards: %v", router.TableShards())
	}
	// Crash domains: the control plane in process p, each shard in a
	// process of its own, all over one durable store (the object store
	// every process of a deployment shares), so a crash may take one
	// shard's memory and leave the others' (a table shard's unsynced
	// commits gone, the view shard's steps over them kept).
	durable := objstore.NewMemory()
	if err := s.AddProcess("p", sim.ProcessOptions{Durable: durable}); err != nil {
		t.Fatal(err)
	}
	processOf := func(id partition.ShardID) string { return fmt.Sprintf("shard%d", id) }
	processes := []string{"p"}
	for _, id := range router.Shards() {
		if err := s.AddProcess(processOf(id), sim.ProcessOptions{Durable: durable}); err != nil {
			t.Fatal(err)
		}
		processes = append(processes, processOf(id))
	}
	open := func(path string) func(ctx runtime.Context) (kv.Store, error) {
		return func(ctx runtime.Context) (kv.Store, error) {
			return storage.Open(context.Background(), ctx.Store(), path, storage.Options{})
		}
	}
	if err := s.Spawn("p", control.ActorID, control.New(control.Config{OpenStore: open("control")})); err != nil {
		t.Fatal(err)
	}
	if err := s.Spawn("p", DetectorID, NewDetector()); err != nil {
		t.Fatal(err)
	}
	for _, id := range router.Shards() {
		if err := s.Spawn(processOf(id), ActorOf(id), New(Config{ID: id, OpenStore: open(fmt.Sprintf("shards/%d", id)), Planner: sumPlanner{table: ptable}, TickEvery: 10 * time.Millisecond})); err != nil {
			t.Fatal(err)
		}
	}
	sync := func() {
		for _, id := range router.Shards() {
			for attempt := 0; ; attempt++ {
				reply, err := s.Ask(context.Background(), ActorOf(id), SyncCatalog{Catalog: snap.Value()})
				if _, ok := reply.(Synced); ok && err == nil {
					break
				}
				// NB: past a shard's longest reopen backoff (10 s): its first opens
				// may fail on transient store faults.
				if attempt == 2000 {
					for _, j := range router.Shards() {
						st, err := s.Ask(context.Background(), ActorOf(j), GetStatus{})
						t.Logf("shard %d: %+v %v", j, st, err)
					}
					t.Fatalf("%s\nseed %d: shard %d never synced its catalog: %v %v", s.Describe(), seed, id, reply, err)
				}
				if err := s.RunFor(10 * time.Millisecond); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	// The catalog is the test's, not the control plane's: pushed again
	// and again, as the engine does at startup, for the restarts and
	// the reopens after store faults, which fetch it from the control plane.
	var push func()
	push = func() {
		for _, id := range router.Shards() {
			s.AskAsync(ActorOf(id), SyncCatalog{Catalog: snap.Value()}, func(runtime.Message, error) {})
		}
		s.At(20*time.Millisecond, push)
	}
	push()
	sync()
	var out partSimOutcome
	// possible[k] are the values key k may hold: its last acknowledged
	// write's, then every later write whose outcome is unknown (nil: never
	// written, or a write of unknown outcome may have made it so).
	possible := map[int64][]any{}
	rnd := s.Rand("partitioned")
	// observe narrows possible by what a read showed: a value once shown
	// is never lost (its write was durable), so the key holds it or a
	// later write's at the end. (A seal passing commits not yet durable
	// shows values a crash then loses.)
	lastFrontier := make([]uint64, clients)
	// crash stops every process (half the time) or one shard's (of
	// shards, or any when nil), and restarts them a little later.
	crash := func(shards []partition.ShardID) {
		if shards == nil {
			shards = router.Shards()
		}
		victims := processes
		if rnd.IntN(2) == 0 {
			victims = []string{processOf(shards[rnd.IntN(len(shards))])}
		}
		for _, p := range victims {
			if !s.ProcessUp(p) {
				return
			}
		}
		out.crashes++
		for _, p := range victims {
			s.Crash(p)
		}
		s.At(time.Duration(1+rnd.IntN(30))*time.Millisecond, func() {
			for _, p := range victims {
				s.Restart(p)
				if p == processOf(2) {
					for c := range lastFrontier {
						lastFrontier[c] = 0 // a new run of the view shard
					}
				}
			}
		})
	}
	observe := func(view zset.Batch) {
		if out.crashes < 4 && rnd.IntN(8) == 0 {
			// Right after a read: what it showed must survive, the
			// table shards' crashes too, the view shard keeping it.
			crash(router.TableShards())
		}
		for k, v := range viewSums(view) { //lint:maprange each key narrowed on its own
			if j := slices.Index(possible[k], any(v)); j > 0 {
				possible[k] = possible[k][j:]
			}
		}
	}
	// pairs: keys a (on shard 0) and b (on shard 1) that transactions on
	// both shards always write together, with one value: every read must
	// show them equal (no transaction partially visible). Client c owns
	// the pairs p with p % clients == c.
	const pairs = 6
	var pairA, pairB []int64
	for k := int64(100); len(pairA) < pairs || len(pairB) < pairs; k++ {
		switch router.OwnerOfKey(ptable, types.Row{k}) {
		case 0:
			if len(pairA) < pairs {
				pairA = append(pairA, k)
			}
		case 1:
			if len(pairB) < pairs {
				pairB = append(pairB, k)
			}
		}
	}
	var maxAcked uint64
	finished := 0
	var run func(c, n int)
	var runPair func(c, n int, next func())
	var runSnapshot func(c int, next func())
	var readSnapshot func(c int, id, epoch, floor uint64, done func())
	run = func(c, n int) {
		if n == opsPerClient {
			finished++
			return
		}
		next := func() { s.At(time.Duration(rnd.IntN(4))*time.Millisecond, func() { run(c, n+1) }) }
		if n%10 == 9 {
			runSnapshot(c, next)
			return
		}
		if n%5 == 4 {
			// A read: every commit acknowledged before it shows.
			floor := maxAcked
			s.AskAsync(control.ActorID, control.GetEpochs{}, func(reply runtime.Message, err error) {
				e, ok := reply.(control.EpochAllocated)
				if err != nil || !ok {
					next()
					return
				}
				s.AskAsync(ActorOf(2), Read{CatalogVersion: snap.Version, Relations: []catalog.ID{viewID}, MinEpoch: e.Known}, func(reply runtime.Message, err error) {
					r, ok := reply.(ReadResult)
					if err != nil || !ok {
						next()
						return
					}
					out.reads++
					if r.Frontier < floor {
						s.Fail(fmt.Errorf("client %d read the view at frontier %d, below the acknowledged epoch %d", c, r.Frontier, floor))
						return
					}
					if r.Frontier < lastFrontier[c] {
						s.Fail(fmt.Errorf("client %d read the view at frontier %d after %d", c, r.Frontier, lastFrontier[c]))
						return
					}
					lastFrontier[c] = r.Frontier
					// The tables of both table shards as of the view's
					// frontier hold what the view shows.
					view := r.Batches[0]
					var tables zset.Batch
					var readTables func(shards []partition.ShardID)
					readTables = func(shards []partition.ShardID) {
						if len(shards) == 0 {
							if err := samePairs(view, pairA, pairB); err != nil {
								s.Fail(fmt.Errorf("client %d read at frontier %d: %w", c, r.Frontier, err))
								return
							}
							if err := sameAsTables(view, tables); err != nil {
								s.Fail(fmt.Errorf("client %d read at frontier %d: %w", c, r.Frontier, err))
								return
							}
							observe(view)
							next()
							return
						}
						s.AskAsync(ActorOf(shards[0]), Read{CatalogVersion: snap.Version, Relations: []catalog.ID{ptable.ID}, AtEpoch: true, Epoch: r.Frontier}, func(reply runtime.Message, err error) {
							tr, ok := reply.(ReadResult)
							if err != nil || !ok {
								next() // a fault: unchecked
								return
							}
							tables.AddBatch(tr.Batches[0], 1)
							readTables(shards[1:])
						})
					}
					readTables(router.TableShards())
				})
			})
			return
		}
		if n%3 == 1 {
			runPair(c, n, next)
			return
		}
		// Client c writes the keys k with k % clients == c, one commit at a
		// time, so its writes of a key are ordered.
		k := int64(c + clients*rnd.IntN(keys/clients))
		val := int64(1000*c + n)
		var row types.Row
		if rnd.IntN(6) != 0 {
			row = types.Row{k, val}
		}
		w := RowWrite{Table: ptable.ID, Key: types.Row{k}, Row: row}
		owner := router.OwnerOfKey(ptable, types.Row{k})
		s.AskAsync(ActorOf(owner), Commit{CatalogVersion: snap.Version, Writes: []RowWrite{w}}, func(reply runtime.Message, err error) {
			var value any
			if row != nil {
				value = val
			}
			if c, ok := reply.(Committed); ok && err == nil {
				out.acked++
				possible[k] = []any{value}
				maxAcked = max(maxAcked, c.Epoch)
			} else {
				out.unknown++
				if _, seen := possible[k]; !seen {
					possible[k] = []any{nil}
				}
				possible[k] = append(possible[k], value)
			}
			next()
		})
	}
	// runSnapshot reads in a snapshot of every shard as a session pins it
	// (session snapshot.go): the view pinned at an epoch E handed out,
	// then, a little later (commits land on the table shards meanwhile,
	// which reads of the pin must take away), the tables; the view, the
	// tables and the pairs' lookups must tell of one epoch.
	runSnapshot = func(c int, next func()) {
		floor := maxAcked
		s.AskAsync(control.ActorID, control.AllocEpoch{Count: 1}, func(reply runtime.Message, err error) {
			e, ok := reply.(control.EpochAllocated)
			if err != nil || !ok {
				next()
				return
			}
			id, epoch := e.Epoch, max(e.Known, e.Epoch)
			release := func() {
				for _, sh := range router.Shards() {
					s.AskAsync(ActorOf(sh), ReleaseSnapshot{ID: id}, func(runtime.Message, error) {})
				}
				next()
			}
			s.AskAsync(ActorOf(2), PinViews{CatalogVersion: snap.Version, ID: id, Epoch: epoch}, func(reply runtime.Message, err error) {
				if p, ok := reply.(ViewsPinned); err != nil || !ok || p.Behind {
					release() // a fault, or the view stepped past it: untried
					return
				}
				var open func(shards []partition.ShardID)
				open = func(shards []partition.ShardID) {
					if len(shards) > 0 {
						s.AskAsync(ActorOf(shards[0]), OpenSnapshot{CatalogVersion: snap.Version, ID: id, Epoch: epoch}, func(reply runtime.Message, err error) {
							if _, ok := reply.(SnapshotOpened); err != nil || !ok {
								release()
								return
							}
							open(shards[1:])
						})
						return
					}
					readSnapshot(c, id, epoch, floor, release)
				}
				s.At(time.Duration(rnd.IntN(8))*time.Millisecond, func() { open(router.TableShards()) })
			})
		})
	}
	readSnapshot = func(c int, id, epoch, floor uint64, done func()) {
		s.AskAsync(ActorOf(2), Read{CatalogVersion: snap.Version, Relations: []catalog.ID{viewID}, At: id, PinEpoch: epoch}, func(reply runtime.Message, err error) {
			r, ok := reply.(ReadResult)
			if err != nil || !ok {
				done()
				return
			}
			out.snapshots++
			if r.Frontier != epoch || epoch < floor {
				s.Fail(fmt.Errorf("client %d's snapshot at epoch %d (acknowledged %d) read the view at %d", c, epoch, floor, r.Frontier))
				return
			}
			view := r.Batches[0]
			var tables zset.Batch
			looked := map[int64]types.Row{}
			var read func(shards []partition.ShardID)
			read = func(shards []partition.ShardID) {
				if len(shards) == 0 {
					for _, err := range []error{samePairs(view, pairA, pairB), sameAsTables(view, tables), sameAsLookups(view, looked)} {
						if err != nil {
							s.Fail(fmt.Errorf("client %d's snapshot at epoch %d: %w", c, epoch, err))
							return
						}
					}
					observe(view)
					done()
					return
				}
				sh := shards[0]
				s.AskAsync(ActorOf(sh), Read{CatalogVersion: snap.Version, Relations: []catalog.ID{ptable.ID}, At: id, PinEpoch: epoch}, func(reply runtime.Message, err error) {
					tr, ok := reply.(ReadResult)
					if err != nil || !ok {
						done() // a fault: unchecked
						return
					}
					tables.AddBatch(tr.Batches[0], 1)
					keys := pairA
					if sh == 1 {
						keys = pairB
					}
					var rows []types.Row
					for _, k := range keys {
						rows = append(rows, types.Row{k})
					}
					s.AskAsync(ActorOf(sh), Lookup{CatalogVersion: snap.Version, Table: ptable.ID, Keys: rows, At: id}, func(reply runtime.Message, err error) {
						lr, ok := reply.(LookupResult)
						if err != nil || !ok {
							done()
							return
						}
						for i, k := range keys {
							looked[k] = lr.Rows[i]
						}
						read(shards[1:])
					})
				})
			}
			read(router.TableShards())
		})
	}
	// runPair writes a pair in one transaction on both table shards, as
	// a session coordinates it: prepare on shard 0 (the home) and shard 1,
	// decide on the home, resolve both. The coordinator sometimes stops
	// after the prepares (the participants' queries abort it) or after the
	// decision (they learn it from the home).
	runPair = func(c, n int, next func()) {
		p := c + clients*rnd.IntN(pairs/clients)
		a, b := pairA[p], pairB[p]
		val := int64(1000*c + n)
		var rowA, rowB types.Row
		var value any
		if rnd.IntN(6) != 0 {
			rowA, rowB, value = types.Row{a, val}, types.Row{b, val}, val
		}
		txn := rnd.Uint64() | 1
		record := func(outcome string) {
			switch outcome {
			case "acked":
				out.acked++
				possible[a], possible[b] = []any{value}, []any{value}
			case "unknown":
				out.unknown++
				for _, k := range []int64{a, b} {
					if _, seen := possible[k]; !seen {
						possible[k] = []any{nil}
					}
					possible[k] = append(possible[k], value)
				}
			}
			next()
		}
		abort := func() {
			for _, sh := range []partition.ShardID{0, 1} {
				s.AskAsync(ActorOf(sh), Resolve{Txn: txn, Abort: true}, func(runtime.Message, error) {})
			}
			record("aborted")
		}
		// Both parts at once, as a session prepares them (wait-die: a
		// part refused for an older transaction in doubt aborts this one).
		left, failed := 2, false
		prepare := func(sh partition.ShardID, row types.Row, key int64, then func()) {
			s.AskAsync(ActorOf(sh), Prepare{CatalogVersion: snap.Version, Txn: txn, Home: 0, Writes: []RowWrite{{Table: ptable.ID, Key: types.Row{key}, Row: row}}}, func(reply runtime.Message, err error) {
				if _, ok := reply.(PrepareRefused); ok {
					out.refused++
				}
				if _, ok := reply.(Prepared); !ok || err != nil {
					failed = true
				}
				if left--; left > 0 {
					return
				}
				if failed {
					abort()
					return
				}
				then()
			})
		}
		both := func(then func()) {
			prepare(0, rowA, a, then)
			prepare(1, rowB, b, then)
		}
		both(func() {
			if rnd.IntN(10) == 0 {
				out.stranded++
				record("aborted") // never decided: presumed abort
				return
			}
			s.AskAsync(control.ActorID, control.AllocEpoch{Count: 1}, func(reply runtime.Message, err error) {
				e, ok := reply.(control.EpochAllocated)
				if !ok || err != nil {
					abort()
					return
				}
				s.AskAsync(ActorOf(0), Decide{Txn: txn, Epoch: e.Epoch}, func(reply runtime.Message, err error) {
					d, ok := reply.(Decided)
					switch {
					case !ok || err != nil:
						record("unknown")
					case d.Aborted:
						record("aborted")
					default:
						maxAcked = max(maxAcked, d.Epoch)
						if rnd.IntN(5) != 0 {
							for _, sh := range []partition.ShardID{0, 1} {
								s.AskAsync(ActorOf(sh), Resolve{Txn: txn, Epoch: d.Epoch}, func(runtime.Message, error) {})
							}
						}
						record("acked")
					}
				})
			})
		})
	}
	for c := range clients {
		run(c, 0)
	}
	// Whole-process crashes, restarted a little later.
	for i := range 2 {
		s.At(time.Duration(20+rnd.IntN(150)+200*i)*time.Millisecond, func() { crash(nil) })
	}
	// NB: virtual time; a seed with lost messages and slow storage waits
	// out many resend ticks and reply timeouts.
	for limit := s.Now() + 10*time.Minute; finished < clients; {
		err := s.RunFor(10 * time.Millisecond)
		if err == nil && s.Now() > limit {
			err = errors.New("clients did not finish")
			for _, id := range router.Shards() {
				st, serr := s.Ask(context.Background(), ActorOf(id), GetStatus{})
				t.Logf("shard %d (process up %t): %+v %v", id, s.ProcessUp(processOf(id)), st, serr)
			}
		}
		if err != nil {
			return partSimOutcome{}, fmt.Errorf("%s\nseed %d: %v (finished %d of %d clients, %+v)", s.Describe(), seed, err, finished, clients, out)
		}
	}
	s.Heal()
	// The final state: the view at the control plane's last epoch, and the
	// tables of both table shards as of the view's frontier.
	final := func() (ReadResult, error) {
		reply, err := s.Ask(context.Background(), control.ActorID, control.GetEpochs{})
		if err != nil {
			return ReadResult{}, err
		}
		e, ok := reply.(control.EpochAllocated)
		if !ok {
			return ReadResult{}, fmt.Errorf("epochs: %v", reply)
		}
		view, err := s.Ask(context.Background(), ActorOf(2), Read{CatalogVersion: snap.Version, Relations: []catalog.ID{viewID}, MinEpoch: e.Known})
		if err != nil {
			return ReadResult{}, err
		}
		vr, ok := view.(ReadResult)
		if !ok {
			return ReadResult{}, fmt.Errorf("view read: %v", view)
		}
		res := ReadResult{Frontier: vr.Frontier, Batches: []zset.Batch{vr.Batches[0], {}}}
		for _, id := range router.TableShards() {
			tr, err := s.Ask(context.Background(), ActorOf(id), Read{CatalogVersion: snap.Version, Relations: []catalog.ID{ptable.ID}, AtEpoch: true, Epoch: vr.Frontier})
			if err != nil {
				return ReadResult{}, err
			}
			r, ok := tr.(ReadResult)
			if !ok {
				return ReadResult{}, fmt.Errorf("table read on shard %d: %v", id, tr)
			}
			res.Batches[1].AddBatch(r.Batches[0], 1)
		}
		return res, nil
	}
	var res ReadResult
	for attempt := 0; ; attempt++ {
		var err error
		if res, err = final(); err == nil {
			break
		}
		if attempt%20 == 0 {
			st, _ := s.Ask(context.Background(), ActorOf(2), GetStatus{})
			t.Logf("attempt %d: %v; status %+v", attempt, err, st)
		}
		if attempt == 400 {
			// NB: past a shard's longest reopen backoff (10 s), which
			// store faults before the heal may have reached.
			return partSimOutcome{}, fmt.Errorf("%s\nseed %d: the final read failed: %v", s.Describe(), seed, err)
		}
		if err := s.RunFor(50 * time.Millisecond); err != nil {
			return partSimOutcome{}, err
		}
	}
	if err := samePairs(res.Batches[0], pairA, pairB); err != nil {
		return partSimOutcome{}, fmt.Errorf("%s\nseed %d: the final read at frontier %d: %v", s.Describe(), seed, res.Frontier, err)
	}
	if err := sameAsTables(res.Batches[0], res.Batches[1]); err != nil {
		return partSimOutcome{}, fmt.Errorf("%s\nseed %d: the final read at frontier %d: %v", s.Describe(), seed, res.Frontier, err)
	}
	rows := map[int64]int64{}
	tb := zset.Consolidate(res.Batches[1])
	for i, r := range tb.Rows {
		if tb.Weights[i] != 1 {
			return partSimOutcome{}, fmt.Errorf("seed %d: table row %v has weight %d", seed, r, tb.Weights[i])
		}
		rows[r[0].(int64)] = r[1].(int64)
	}
	all := append(append([]int64(nil), pairA...), pairB...)
	for k := range int64(keys) {
		all = append(all, k)
	}
	for _, k := range all {
		got, present := rows[k]
		var value any
		if present {
			value = got
		}
		if want, written := possible[k]; written && !slices.Contains(want, value) {
			return partSimOutcome{}, fmt.Errorf("%s\nseed %d: key %d holds %v, not one of %v", s.Describe(), seed, k, value, want)
		} else if !written && present {
			return partSimOutcome{}, fmt.Errorf("seed %d: key %d was never written, and holds %v", seed, k, got)
		}
	}
	// The view (k, sum(v), count(*)) is the table's rows as of its frontier.
	view := map[int64]int64{}
	vb := res.Batches[0]
	for i, r := range vb.Rows {
		if vb.Weights[i] != 1 || r[2].(int64) != 1 {
			return partSimOutcome{}, fmt.Errorf("seed %d: view row %v weight %d", seed, r, vb.Weights[i])
		}
		view[r[0].(int64)] = r[1].(int64)
	}
	if len(view) != len(rows) {
		return partSimOutcome{}, fmt.Errorf("%s\nseed %d: the view has %d groups, the tables %d keys at frontier %d: %v vs %v", s.Describe(), seed, len(view), len(rows), res.Frontier, view, rows)
	}
	for k, v := range rows {
		if view[k] != v {
			return partSimOutcome{}, fmt.Errorf("%s\nseed %d: view row %d has %d, the table %d", s.Describe(), seed, k, view[k], v)
		}
	}
	out.trace = s.TraceHash()
	return out, nil
}

// TestPartitionedUnderSim runs the partitioned workload over several
// seeds: it must hold its checks, replay identically from its seed, and
// exercise acknowledged commits, reads and crashes.
func TestPartitionedUnderSim(t *testing.T) {
	t.Logf("seeds 1..%d", partSimSeeds)
	var total partSimOutcome
	for seed := uint64(partSimFirst); seed <= partSimSeeds; seed++ {
		o, err := runPartitionedSim(t, seed)
		if err != nil {
			t.Fatal(err)
		}
		if seed <= 2 {
			if again, err := runPartitionedSim(t, seed); err != nil || again != o {
				t.Fatalf("seed %d ran twice: %+v then %+v (not deterministic)", seed, o, again)
			}
		}
		total.acked += o.acked
		total.unknown += o.unknown
		total.reads += o.reads
		total.crashes += o.crashes
		total.stranded += o.stranded
		total.snapshots += o.snapshots
		total.refused += o.refused
	}
	if total.acked == 0 || total.reads == 0 || total.crashes == 0 {
		t.Fatalf("the workload exercised too little: %+v", total)
	}
	if total.snapshots == 0 {
		t.Fatalf("no read in a snapshot of every shard: %+v", total)
	}
	if total.stranded == 0 {
		t.Fatalf("no transaction was left undecided: %+v", total)
	}
	t.Logf("%d seeds: %d commits acknowledged, %d unknown, %d reads, %d in snapshots, %d crashes, %d transactions left undecided, %d prepares refused", partSimSeeds, total.acked, total.unknown, total.reads, total.snapshots, total.crashes, total.stranded, total.refused)
}

// partSimSeeds is how many seeds TestPartitionedUnderSim runs (more with
// PARTITIONED_SIM_SEEDS).
var partSimSeeds = uint64(envInt("PARTITIONED_SIM_SEEDS", 10))

// partSimFirst is the first seed (PARTITIONED_SIM_FIRST, to replay one).
var partSimFirst = envInt("PARTITIONED_SIM_FIRST", 1)

// envInt reads an integer from the environment, def when unset or bad.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// sameAsTables checks that view (k, sum(v), count(*)) is table (k, v).
func sameAsTables(view, table zset.Batch) error {
	rows := map[int64]int64{}
	tb := zset.Consolidate(table)
	for i, r := range tb.Rows {
		if tb.Weights[i] != 1 {
			return fmt.Errorf("table row %v has weight %d", r, tb.Weights[i])
		}
		rows[r[0].(int64)] = r[1].(int64)
	}
	got := map[int64]int64{}
	vb := zset.Consolidate(view)
	for i, r := range vb.Rows {
		if vb.Weights[i] != 1 || r[2].(int64) != 1 {
			return fmt.Errorf("view row %v has weight %d", r, vb.Weights[i])
		}
		got[r[0].(int64)] = r[1].(int64)
	}
	if len(got) != len(rows) {
		return fmt.Errorf("the view has %d groups, the tables %d keys: %v vs %v", len(got), len(rows), got, rows)
	}
	for k, v := range rows {
		if g, ok := got[k]; !ok || g != v {
			return fmt.Errorf("view group %d has %d (present %v), the table %d", k, g, ok, v)
		}
	}
	return nil
}

// samePairs checks that the view (k, sum(v), count(*)) shows each pair's
// keys alike: both absent, or both with one value.
func samePairs(view zset.Batch, pairA, pairB []int64) error {
	got := viewSums(view)
	for p := range pairA {
		va, okA := got[pairA[p]]
		vb, okB := got[pairB[p]]
		if okA != okB || va != vb {
			return fmt.Errorf("a transaction shows on one shard only: pair %d, key %d = %d (present %v), key %d = %d (present %v)", p, pairA[p], va, okA, pairB[p], vb, okB)
		}
	}
	return nil
}

// sameAsLookups checks that the view (k, sum(v), count(*)) shows the rows
// looked up by key (nil: absent).
func sameAsLookups(view zset.Batch, looked map[int64]types.Row) error {
	got := viewSums(view)
	for k, row := range looked {
		v, ok := got[k]
		if ok != (row != nil) || (row != nil && row[1].(int64) != v) {
			return fmt.Errorf("key %d looked up as %v, the view has %d (present %v)", k, row, v, ok)
		}
	}
	return nil
}

// viewSums is the view (k, sum(v), count(*)) as k → sum, rows of weight 1.
func viewSums(view zset.Batch) map[int64]int64 {
	got := map[int64]int64{}
	vb := zset.Consolidate(view)
	for i, r := range vb.Rows {
		if vb.Weights[i] == 1 {
			got[r[0].(int64)] = r[1].(int64)
		}
	}
	return got
}
