package system

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rockstream/rockstream/buggify"
	"github.com/rockstream/rockstream/faults"
	"github.com/rockstream/rockstream/sim"
)

// Coverage counts what one run (or, merged, a soak) exercised: every
// faults/ entry, every buggify site, and the scenario's own events.
type Coverage struct {
	// Runs is how many runs were merged.
	Runs int
	// Faults counts injections per faults/ entry name.
	Faults map[string]int
	// Sites counts firings per buggify site.
	Sites map[string]int
	// Scenario counts workload events (late view created, overload run,
	// crash after an acknowledgement, ...).
	Scenario map[string]int
}

func (c *Coverage) add(m *map[string]int, name string, n int) {
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[name] += n
}

// scenario counts a workload event.
func (c *Coverage) scenario(name string) { c.add(&c.Scenario, name, 1) }

// collect records the simulator's counters at the end of a run.
func (c *Coverage) collect(s *sim.Sim) {
	c.Runs = 1
	st := s.Stats()
	fs := s.Store(processName).Stats()
	cfg := s.Config()
	//lint:maprange addition is commutative.
	for name, n := range map[string]int{
		faults.ObjstoreLatency:         int(fs.Latency.Milliseconds()),
		faults.ObjstoreTransient:       fs.Transient,
		faults.ObjstoreAmbiguousWrite:  fs.AmbiguousApplied + fs.AmbiguousLost,
		faults.ObjstoreCrashAfterWrite: fs.CrashAfterWrite,
		faults.ObjstoreStaleList:       fs.StaleList,
		faults.ObjstoreCorruptRead:     fs.CorruptRead,
		faults.NetworkDrop:             st.Dropped,
		faults.NetworkDuplicate:        st.Duplicated,
		faults.NetworkPartition:        st.Partitions,
		faults.NetworkCongestion:       st.Congestions,
		faults.ProcessCrash:            st.Crashes,
		faults.ProcessSlow:             st.Slowdowns,
		faults.ClockSkew:               btoi(cfg.ClockSkewMax > 0),
		faults.ClockDrift:              btoi(cfg.ClockDriftPPMMax > 0),
		faults.TimerJitter:             btoi(cfg.TimerJitterMax > 0 && st.Timers > 0),
	} {
		c.add(&c.Faults, name, n)
	}
	for _, rep := range s.Buggify().Report() {
		c.add(&c.Sites, string(rep.Site), rep.Fired)
	}
}

// Merge adds another run's coverage.
func (c *Coverage) Merge(o Coverage) {
	c.Runs += o.Runs
	for _, p := range []struct{ dst, src *map[string]int }{{&c.Faults, &o.Faults}, {&c.Sites, &o.Sites}, {&c.Scenario, &o.Scenario}} {
		//lint:maprange addition is commutative.
		for k, n := range *p.src {
			c.add(p.dst, k, n)
		}
	}
}

// ZeroReasons says why a fault entry or buggify site is never hit by this
// scenario (and where it is tested instead). Report lists any other zero as
// uncovered.
//
//lint:immutable a constant table.
var zeroReasons = map[string]string{
	faults.ObjstoreCorruptRead:               "opt-in per test (only checksummed formats survive it); slate's own tests inject it",
	faults.NetworkDelay:                      "one process: the embedded system has no cross-process messages (client replies get the drawn delay, counted under scenario client_reply_delayed); sim/register covers the network",
	faults.NetworkDrop:                       "one process: no cross-process messages (client connections drop: scenario client_reply_lost); sim/register covers the network",
	faults.NetworkDuplicate:                  "one process: no cross-process messages; sim/register covers it",
	faults.NetworkReorder:                    "one process: no cross-process messages; sim/register covers it",
	faults.NetworkPartition:                  "one process: nothing to partition; sim/register covers it",
	faults.NetworkCongestion:                 "one process: no links to congest; sim/register covers it",
	faults.MailboxOverflow:                   "the shard and control actors receive asks (never dropped), their own timers and the shard's catalog fetches (few, retried on a timer); overload is the scenario's many-session runs (scenario overload_run)",
	string(buggify.RegisterClientEarlyRetry): "a site of the sim/register example workload",
	string(buggify.RegisterReplicaDropReply): "a site of the sim/register example workload",
}

// requiredScenarios are the transaction paths (txn.go) a run of many
// seeds must exercise: a checker that never sees its path checks nothing.
//
//lint:immutable a constant list.
var requiredScenarios = []string{
	"row_lock_wait",            // a lookup queued behind another transaction's row lock
	"stale_row_rerun",          // READ COMMITTED: the row changed during the wait, the statement ran again
	"deadlock_40P01",           // a wait closed a cycle and failed with 40P01
	"deadlock_cycle_confirmed", // ... and the clients' view confirmed the cycle
	"rr_snapshot_pinned",       // REPEATABLE READ read its snapshot again after a newer commit
	"rr_update_40001",          // REPEATABLE READ UPDATE of a row committed after its snapshot
	"savepoint_rollback",       // ROLLBACK TO SAVEPOINT undid a change, then the transaction went on
	"txn_rolled_back",          // ROLLBACK discarded a change
	"upsert_insert",            // INSERT ... ON CONFLICT inserted
	"upsert_conflict_update",   // ... and updated the conflicting row
	"txn_commit_acked",         // a transaction of the session actor committed
	"sequence_nextval",         // an upsert took nextval
	"lock_timeout_55P03",       // a lock wait ran past the statement's lock_timeout
	"lock_wait_canceled_57014", // a lock wait ended by CancelWait (a canceled statement)
}

// Uncovered lists fault entries and buggify sites with no hit and no
// written reason, and required transaction scenarios never exercised.
func (c *Coverage) Uncovered() []string {
	var out []string
	for _, name := range requiredScenarios {
		if c.Scenario[name] == 0 {
			out = append(out, "scenario "+name)
		}
	}
	for _, f := range faults.Catalog() {
		if c.Faults[f.Name] == 0 && zeroReasons[f.Name] == "" {
			out = append(out, "fault "+f.Name)
		}
	}
	for _, s := range buggify.Sites() {
		if c.Sites[string(s.Site)] == 0 && zeroReasons[string(s.Site)] == "" {
			out = append(out, "buggify "+string(s.Site))
		}
	}
	return out
}

// String is the coverage report: every fault entry and buggify site with
// its count (or the reason it is not hit), then the scenario counters.
func (c *Coverage) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "coverage over %d runs\n", c.Runs)
	line := func(kind, name string, n int) {
		reason := ""
		if n == 0 {
			reason = zeroReasons[name]
			if kind == "scenario" || reason == "" {
				reason = "UNCOVERED"
			}
			reason = "  -- " + reason
		}
		fmt.Fprintf(&b, "  %-8s %-40s %10d%s\n", kind, name, n, reason)
	}
	for _, f := range faults.Catalog() {
		line("fault", f.Name, c.Faults[f.Name])
	}
	for _, s := range buggify.Sites() {
		line("buggify", string(s.Site), c.Sites[string(s.Site)])
	}
	names := make([]string, 0, len(c.Scenario))
	//lint:maprange sorted below.
	for k := range c.Scenario {
		names = append(names, k)
	}
	for _, k := range requiredScenarios {
		if c.Scenario[k] == 0 {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		line("scenario", k, c.Scenario[k])
	}
	return b.String()
}
