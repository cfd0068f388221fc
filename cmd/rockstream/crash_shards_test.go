package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// TestCrashKill9Shards4 is the kill -9 loop over --shards=4: tables on
// shard 0, materialized views of every placement on shards 1-3 (spread
// GROUP BY views, a join view and global aggregates each on one view
// shard, views over views read in place or computed inline), fed by the
// exchange. A writer commits transfers between accounts (two balances, two
// ledger rows, a transaction log row, sometimes a branch move or the
// reversal of an earlier transfer, which deletes its ledger rows) while
// readers check in every read that no transaction is partly visible: the
// balances sum to the money created, each balance is 1000 plus its ledger
// rows, and views read in one statement (pinned at one epoch across the
// view shards) agree with each other. The server is killed with SIGKILL at
// random moments, right after a commit returns, and during a CREATE
// MATERIALIZED VIEW backfill; after every restart the tables equal the
// model of the committed transactions (every acknowledged one, the one in
// flight wholly or not at all) and every view equals PostgreSQL 15's
// answer to its query over the same table contents.
//
//	ROCKSTREAM_KILL9_CYCLES=200 go test ./cmd/rockstream -run TestCrashKill9Shards4 -v   # more cycles
//	ROCKSTREAM_KILL9_SEED=n     replays the kill schedule and workload choices of seed n
//	ROCKSTREAM_KILL9_TAGS=tags  builds the server with those tags (a planted bug: plantbug_outboxonsend, ...)
//
// On a failure the data directory is copied to $TMPDIR/rockstream-kill9-<seed>.
func TestCrashKill9Shards4(t *testing.T) {
	runKill4(t, []string{"--shards=4"}, false)
}

// TestCrashKill9Partitioned is the same loop over a partitioned layout
// (--shards=4 --partition-tables: the tables' rows on shards 0 and 1 by
// their keys, the views on shards 2 and 3, GROUP BY views spread over
// both): most transfers write rows of both table shards, so they commit
// through prepare, decision and resolve, and a kill lands between those
// too. The checks are the loop's, the REPEATABLE READ reader's and the
// one-statement reads of views of both view shards included (a snapshot
// pinned on every shard); only the views' placements are not checked.
//
//	ROCKSTREAM_KILL9_CYCLES=200 go test ./cmd/rockstream -run TestCrashKill9Partitioned -v
func TestCrashKill9Partitioned(t *testing.T) {
	runKill4(t, []string{"--shards=4", "--partition-tables"}, true)
}

// TestCrashKill9Stages is the loop over --shards=4 --exchange-stages:
// branch_net (a GROUP BY a.branch over a join on the account id) and
// net_sum (its query inlined) run in stages, their lower stages spread
// over shards 1-3 and their upper stages on shard 1, fed by the others'
// outputs; so does the first view created while the server is killed. A
// kill loses the stages' streams, and every restart starts the upper
// stages over from the lower stages' outputs.
//
//	ROCKSTREAM_KILL9_CYCLES=200 go test ./cmd/rockstream -run TestCrashKill9Stages -v
func TestCrashKill9Stages(t *testing.T) {
	runKill4(t, []string{"--shards=4", "--exchange-stages"}, false)
}

// runKill4 runs the kill -9 loop over a store created with layout.
func runKill4(t *testing.T, layout []string, partitioned bool) {
	cycles := envInt(t, "ROCKSTREAM_KILL9_CYCLES", 20)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("ROCKSTREAM_KILL9_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("ROCKSTREAM_KILL9_SEED: %v", err)
		}
		seed = v
	}
	t.Logf("seed %d (replay the schedule: ROCKSTREAM_KILL9_SEED=%d)", seed, seed)
	bin := buildBinaryTags(t, os.Getenv("ROCKSTREAM_KILL9_TAGS"))
	h := &kill4{t: t, bin: bin, storage: t.TempDir(), seed: seed, rnd: rand.New(rand.NewPCG(seed, 4)), layout: layout, partitioned: partitioned, stages: slices.Contains(layout, "--exchange-stages")}
	h.run(cycles)
}

// kill4Accounts accounts hold 1000 each at the start: no transaction
// creates or destroys money.
const (
	kill4Accounts = 40
	kill4Branches = 5
	kill4Filler   = 30000
)

// kill4Views are the views created at setup (name → query), in creation
// order, with the placement EXPLAIN INCREMENTAL must show for each.
var kill4Views = []struct{ name, query, placement string }{
	{"by_branch", "SELECT branch, count(*) AS n, sum(balance) AS total FROM accounts GROUP BY branch", "SHARDS  0, 1, 2, 3 (spread"},
	{"ledger_by_acct", "SELECT acct, count(*) AS n, sum(delta) AS net FROM ledger GROUP BY acct", "SHARDS  0, 1, 2, 3 (spread"},
	{"branch_net", "SELECT a.branch, count(*) AS n, sum(l.delta) AS net, count(DISTINCT l.txn) AS txns FROM ledger l JOIN accounts a ON a.id = l.acct GROUP BY a.branch", "SHARD  1 (view shard"},
	{"totals", "SELECT count(*) AS n, sum(balance) AS total, min(balance) AS lo, max(balance) AS hi FROM accounts", "SHARD  2 (view shard"},
	{"ledger_totals", "SELECT count(*) AS n, sum(delta) AS net, count(DISTINCT txn) AS txns FROM ledger", "SHARD  3 (view shard"},
	{"txlog_n", "SELECT count(*) AS n, max(id) AS last FROM txlog", "SHARD  1 (view shard"},
	// Over a spread view: computed inside it.
	{"branch_sum", "SELECT sum(n) AS n, sum(total) AS total, count(*) AS branches FROM by_branch", "by_branch: materialized view spread over shards 0, 1, 2, 3, computed here from its definition (inlined)"},
	// Over a view of its own shard: reads its state.
	{"net_sum", "SELECT sum(n) AS n, sum(net) AS net FROM branch_net", "branch_net: materialized view on shard 1 (no exchange)"},
	// Over views of two shards: one read in place, one computed inline.
	{"cross_v", "SELECT t.n AS accounts, t.total, l.n, l.net FROM totals t, ledger_totals l", "ledger_totals: materialized view on shard 3, computed here from its definition (inlined)"},
	// Over the filler table (never written after setup): its backfill is
	// what the setup measures.
	{"fill_g", "SELECT g, count(*) AS n, sum(x) AS sx FROM filler GROUP BY g", "SHARDS  0, 1, 2, 3 (spread"},
}

// kill4Backfills are the views created while the server is killed
// (during their backfill, unless it was faster than the kill), in turn:
// one of each at a time, the oldest dropped to make room.
var kill4Backfills = []string{
	"SELECT a.branch, count(*) AS n, sum(f.x) AS sx, sum(a.balance) AS sb FROM filler f JOIN accounts a ON a.id = f.g GROUP BY a.branch",
	"SELECT f.g, count(*) AS n, sum(f.x) AS sx FROM filler f WHERE f.x % 3 = 1 GROUP BY f.g",
	"SELECT l.acct, a.branch, count(*) AS n, sum(l.delta) AS net FROM ledger l JOIN accounts a ON a.id = l.acct JOIN filler f ON f.id = l.acct GROUP BY l.acct, a.branch",
}

// kill4Txn is one writer transaction: a transfer of amount from src to
// dst (two balance updates, ledger rows 2*id and 2*id+1), optionally
// moving account move to branch branch, or (reverses > 0) the reversal of
// transfer reverses (its ledger rows deleted, its balances restored).
// Every one inserts its id into txlog, which tells after a crash whether
// it committed.
type kill4Txn struct {
	id, reverses     int64
	src, dst, amount int64
	move, branch     int64
}

func (x kill4Txn) sql(of map[int64]kill4Txn) string {
	var b strings.Builder
	b.WriteString("BEGIN; ")
	if x.reverses > 0 {
		r := of[x.reverses]
		fmt.Fprintf(&b, "DELETE FROM ledger WHERE txn = %d; ", r.id)
		fmt.Fprintf(&b, "UPDATE accounts SET balance = balance + %d WHERE id = %d; ", r.amount, r.src)
		fmt.Fprintf(&b, "UPDATE accounts SET balance = balance - %d WHERE id = %d; ", r.amount, r.dst)
	} else {
		fmt.Fprintf(&b, "UPDATE accounts SET balance = balance - %d WHERE id = %d; ", x.amount, x.src)
		fmt.Fprintf(&b, "INSERT INTO ledger VALUES (%d, %d, %d, %d), (%d, %d, %d, %d); ",
			2*x.id, x.id, x.src, -x.amount, 2*x.id+1, x.id, x.dst, x.amount)
		fmt.Fprintf(&b, "UPDATE accounts SET balance = balance + %d WHERE id = %d; ", x.amount, x.dst)
	}
	if x.move > 0 {
		fmt.Fprintf(&b, "UPDATE accounts SET branch = %d WHERE id = %d; ", x.branch, x.move)
	}
	fmt.Fprintf(&b, "INSERT INTO txlog VALUES (%d); COMMIT", x.id)
	return b.String()
}

// kill4Model is the state the committed transactions make, applied in id
// order (one writer: commit order).
type kill4Model struct {
	committed []kill4Txn // ascending id
	byID      map[int64]kill4Txn
	reversed  map[int64]bool
}

func (m *kill4Model) add(x kill4Txn) {
	m.committed = append(m.committed, x)
	m.byID[x.id] = x
	if x.reverses > 0 {
		m.reversed[x.reverses] = true
	}
}

// state is accounts (id → "branch|balance") and ledger ("id|txn|acct|delta").
func (m *kill4Model) state() (accounts map[int64]string, ledger []string) {
	branch := map[int64]int64{}
	balance := map[int64]int64{}
	for id := int64(1); id <= kill4Accounts; id++ {
		branch[id], balance[id] = id%kill4Branches, 1000
	}
	rows := map[int64]string{}
	for _, x := range m.committed {
		if x.reverses > 0 {
			r := m.byID[x.reverses]
			delete(rows, 2*r.id)
			delete(rows, 2*r.id+1)
			balance[r.src] += r.amount
			balance[r.dst] -= r.amount
		} else {
			balance[x.src] -= x.amount
			balance[x.dst] += x.amount
			rows[2*x.id] = fmt.Sprintf("%d|%d|%d|%d", 2*x.id, x.id, x.src, -x.amount)
			rows[2*x.id+1] = fmt.Sprintf("%d|%d|%d|%d", 2*x.id+1, x.id, x.dst, x.amount)
		}
		if x.move > 0 {
			branch[x.move] = x.branch
		}
	}
	accounts = map[int64]string{}
	for id := range branch {
		accounts[id] = fmt.Sprintf("%d|%d", branch[id], balance[id])
	}
	for _, r := range rows {
		ledger = append(ledger, r)
	}
	slices.Sort(ledger)
	return accounts, ledger
}

type kill4 struct {
	t *testing.T
	// layout is the first start's flags; partitioned: --partition-tables.
	layout      []string
	partitioned bool
	// stages: --exchange-stages, given at every start.
	stages  bool
	bin     string
	storage string
	seed    uint64
	rnd     *rand.Rand
	p       *process
	log     string // the servers' stderr, every start appended
	pg      *pgx.Conn

	model    kill4Model
	next     int64
	backfill time.Duration // fill_g's backfill at setup
	views    []string      // every view to compare, creation order
	queries  map[string]string
	acked    map[string]bool // backfill views whose CREATE was acknowledged

	stats struct {
		txns, inDoubtCommitted, inDoubtLost, afterCommitKills, backfillKills, backfillInterrupted, recoveryKills int
	}
	reads, viewReads atomic.Int64 // counted by the readers
}

func (h *kill4) run(cycles int) {
	t := h.t
	start := time.Now()
	h.model = kill4Model{byID: map[int64]kill4Txn{}, reversed: map[int64]bool{}}
	h.queries = map[string]string{}
	h.acked = map[string]bool{}
	h.next = 1
	h.log = filepath.Join(t.TempDir(), "server.log")
	h.p = h.start(h.layout...)
	defer func() { h.p.kill9() }()
	h.setup()
	for cycle := 0; cycle < cycles; cycle++ {
		h.cycle(cycle)
	}
	if h.stats.txns < cycles {
		t.Fatalf("only %d transactions were acknowledged over %d cycles: the workload did not run", h.stats.txns, cycles)
	}
	if cycles >= 20 && h.stats.backfillInterrupted == 0 {
		t.Fatalf("no kill landed during a CREATE MATERIALIZED VIEW backfill (%d tried; fill_g's backfill took %v)", h.stats.backfillKills, h.backfill)
	}
	s := h.stats
	t.Logf("%d cycles in %v: %d acknowledged transactions (%d committed, %d lost of those in doubt at a kill), %d kills right after a commit returned, %d kills during CREATE MATERIALIZED VIEW (%d before it returned), %d more kills during a restart's recovery, %d table reads and %d view reads checked during the run",
		cycles, time.Since(start).Round(time.Millisecond), s.txns, s.inDoubtCommitted, s.inDoubtLost, s.afterCommitKills, s.backfillKills, s.backfillInterrupted, s.recoveryKills, h.reads.Load(), h.viewReads.Load())
}

// restartFlags are the flags of a restart (a store keeps its layout).
func (h *kill4) restartFlags() []string {
	if h.stages {
		return []string{"--exchange-stages"}
	}
	return nil
}

// viewsAtSetup are kill4Views as this layout places them: with exchange
// stages, branch_net runs in stages, and net_sum, which cannot read a
// view run in stages, computes branch_net's query itself (in stages too).
func (h *kill4) viewsAtSetup() []struct{ name, query, placement string } {
	out := slices.Clone(kill4Views)
	if !h.stages {
		return out
	}
	for i, v := range out {
		switch v.name {
		case "branch_net":
			out[i].placement = "SHARDS  0, 1, 2, 3 (in stages"
		case "net_sum":
			out[i].query = "SELECT sum(n) AS n, sum(net) AS net FROM (" + kill4Views[2].query + ") b"
			out[i].placement = "SHARDS  0, 1, 2, 3 (in stages"
		}
	}
	return out
}

func (h *kill4) setup() {
	t := h.t
	ctx := context.Background()
	c := h.connect()
	defer c.Close(ctx)
	for _, s := range []string{
		"CREATE TABLE accounts (id int PRIMARY KEY, branch int NOT NULL, balance bigint NOT NULL)",
		"CREATE TABLE ledger (id bigint PRIMARY KEY, txn bigint NOT NULL, acct int NOT NULL, delta bigint NOT NULL)",
		"CREATE TABLE txlog (id bigint PRIMARY KEY)",
		"CREATE TABLE filler (id int PRIMARY KEY, g int NOT NULL, x int NOT NULL)",
		fmt.Sprintf("INSERT INTO accounts SELECT i, i %% %d, 1000 FROM generate_series(1, %d) AS i", kill4Branches, kill4Accounts),
		fmt.Sprintf("INSERT INTO filler SELECT i, i %% 97, i %% 1013 FROM generate_series(1, %d) AS i", kill4Filler),
	} {
		h.exec(c, s)
	}
	for _, v := range h.viewsAtSetup() {
		began := time.Now()
		h.exec(c, "CREATE MATERIALIZED VIEW "+v.name+" AS "+v.query)
		if v.name == "fill_g" {
			h.backfill = time.Since(began)
		}
		plan := strings.Join(flatten(queryText(t, c, "EXPLAIN INCREMENTAL "+v.name)), "\n")
		if !h.partitioned && !strings.Contains(plan, v.placement) {
			t.Fatalf("view %s is not placed as this test means it (%q):\n%s", v.name, v.placement, plan)
		}
		h.views = append(h.views, v.name)
		h.queries[v.name] = v.query
	}
	t.Logf("fill_g's backfill over %d rows took %v", kill4Filler, h.backfill)
	// PostgreSQL holds the same tables; filler is generated the same way.
	_, h.pg = pgtest.Database(t)
	execPG(t, h.pg, "CREATE TABLE accounts (id int PRIMARY KEY, branch int NOT NULL, balance bigint NOT NULL); "+
		"CREATE TABLE ledger (id bigint PRIMARY KEY, txn bigint NOT NULL, acct int NOT NULL, delta bigint NOT NULL); "+
		"CREATE TABLE txlog (id bigint PRIMARY KEY); "+
		"CREATE TABLE filler (id int PRIMARY KEY, g int NOT NULL, x int NOT NULL); "+
		fmt.Sprintf("INSERT INTO filler SELECT i, i %% 97, i %% 1013 FROM generate_series(1, %d) AS i", kill4Filler))
	for _, v := range h.viewsAtSetup() {
		// Views in PostgreSQL, so that views over views read them.
		execPG(t, h.pg, "CREATE VIEW "+v.name+" AS "+v.query)
	}
	h.verify(-1)
}

func flatten(rows [][]string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = strings.Join(r, "|")
	}
	return out
}

func (h *kill4) connect() *pgx.Conn {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, h.p.url)
	if err != nil {
		h.t.Fatalf("connect: %v", err)
	}
	return c
}

func (h *kill4) exec(c *pgx.Conn, sql string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if _, err := c.PgConn().Exec(ctx, sql).ReadAll(); err != nil {
		h.t.Fatalf("%s: %v", sql, err)
	}
}

// kill modes of a cycle.
const (
	killRandom      = iota // after a random delay
	killAfterCommit        // the writer kills right after its n-th commit returns
	killInBackfill         // a random delay into a CREATE MATERIALIZED VIEW
)

func (h *kill4) cycle(cycle int) {
	t := h.t
	mode := killRandom
	switch {
	case cycle%5 == 2:
		mode = killInBackfill
		if len(h.views)-len(kill4Views) == len(kill4Backfills) {
			// Every backfill query has its view: drop the oldest (its
			// query is the next one's).
			old := h.views[len(kill4Views)]
			c := h.connect()
			h.exec(c, "DROP MATERIALIZED VIEW "+old)
			c.Close(context.Background())
			execPG(t, h.pg, "DROP VIEW "+old)
			h.views = slices.Delete(h.views, len(kill4Views), len(kill4Views)+1)
		}
	case h.rnd.IntN(3) == 0:
		mode = killAfterCommit
	}
	delay := time.Duration(50+h.rnd.IntN(900)) * time.Millisecond
	afterN := 1 + h.rnd.IntN(60)
	// Sometimes the restart is killed too, a random moment into its
	// recovery (view shards asking the table shard for what they lack).
	recoveryKill := time.Duration(-1)
	if h.rnd.IntN(4) == 0 {
		recoveryKill = time.Duration(h.rnd.IntN(300)) * time.Millisecond
	}
	if mode == killInBackfill {
		// Into the backfill: fill_g's took h.backfill at setup.
		delay = time.Duration(5+h.rnd.IntN(int(max(h.backfill, 40*time.Millisecond)/time.Millisecond)*3/4)) * time.Millisecond
	}
	wseed := h.rnd.Uint64()

	var killed atomic.Bool
	var killOnce sync.Once
	p := h.p
	kill := func() {
		killOnce.Do(func() {
			killed.Store(true)
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
		})
	}
	var mu sync.Mutex
	var failures []string
	fail := func(format string, args ...any) {
		mu.Lock()
		failures = append(failures, fmt.Sprintf(format, args...))
		mu.Unlock()
		kill()
	}
	var wg sync.WaitGroup
	var inFlight atomic.Pointer[kill4Txn]
	var newAcked []kill4Txn
	var writerErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		rnd := rand.New(rand.NewPCG(wseed, 1))
		c, err := pgx.Connect(context.Background(), p.url)
		if err != nil {
			if !killed.Load() {
				fail("writer: connect: %v", err)
			}
			return
		}
		defer c.Close(context.Background())
		local := kill4Model{committed: slices.Clone(h.model.committed), byID: map[int64]kill4Txn{}, reversed: map[int64]bool{}}
		for k, v := range h.model.byID {
			local.byID[k] = v
		}
		for k, v := range h.model.reversed {
			local.reversed[k] = v
		}
		for n := 1; !killed.Load(); n++ {
			x := kill4Txn{id: h.next + int64(n) - 1}
			if r := rnd.IntN(8); r == 0 && len(local.committed) > 0 {
				cand := local.committed[rnd.IntN(len(local.committed))]
				if cand.reverses == 0 && !local.reversed[cand.id] {
					x.reverses = cand.id
				}
			}
			if x.reverses == 0 {
				x.src = 1 + rnd.Int64N(kill4Accounts)
				x.dst = 1 + (x.src+rnd.Int64N(kill4Accounts-1))%kill4Accounts
				x.amount = 1 + rnd.Int64N(100)
			}
			if rnd.IntN(4) == 0 {
				x.move, x.branch = 1+rnd.Int64N(kill4Accounts), rnd.Int64N(kill4Branches)
			}
			inFlight.Store(&x)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			_, err := c.PgConn().Exec(ctx, x.sql(local.byID)).ReadAll()
			cancel()
			if err != nil {
				writerErr = err
				return
			}
			inFlight.Store(nil)
			local.add(x)
			newAcked = append(newAcked, x)
			if mode == killAfterCommit && n == afterN {
				kill()
				return
			}
			if n%4 == 0 {
				// Read-your-writes through the exchange: a view read
				// after a commit returned includes it.
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				rows, err := c.PgConn().Exec(ctx, "SELECT last FROM txlog_n").ReadAll()
				cancel()
				if err != nil {
					writerErr = err
					return
				}
				if got := resultText(rows); got != fmt.Sprint(x.id) {
					fail("writer: txlog_n.last = %s right after transaction %d was acknowledged", got, x.id)
					return
				}
			}
		}
	}()
	readers := []func(*pgx.Conn) (string, error){h.readTables, h.readViews, h.readRepeatable}
	for i, r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := pgx.Connect(context.Background(), p.url)
			if err != nil {
				if !killed.Load() {
					fail("reader %d: connect: %v", i, err)
				}
				return
			}
			defer c.Close(context.Background())
			for !killed.Load() {
				bad, err := r(c)
				if bad != "" {
					fail("reader %d: %s", i, bad)
					return
				}
				if err != nil {
					if !killed.Load() && !isConnErr(err) {
						fail("reader %d: %v", i, err)
					}
					return
				}
			}
		}()
	}
	var ddl string
	var ddlErr error
	ddlDone := make(chan struct{})
	if mode == killInBackfill {
		name := fmt.Sprintf("fill_c%d", cycle)
		ddl = name
		q := kill4Backfills[h.stats.backfillKills%len(kill4Backfills)]
		h.queries[name] = q
		go func() {
			defer close(ddlDone)
			c, err := pgx.Connect(context.Background(), p.url)
			if err != nil {
				ddlErr = err
				return
			}
			defer c.Close(context.Background())
			time.Sleep(20 * time.Millisecond) // the writer is going
			_, ddlErr = c.PgConn().Exec(context.Background(), "CREATE MATERIALIZED VIEW "+name+" AS "+q).ReadAll()
			if ddlErr == nil {
				mu.Lock()
				h.acked[name] = true
				mu.Unlock()
			}
		}()
		delay += 20 * time.Millisecond
	} else {
		close(ddlDone)
	}
	if mode != killAfterCommit {
		timer := time.AfterFunc(delay, kill)
		defer timer.Stop()
	} else {
		// The writer kills; if it cannot get that far, stop anyway.
		timer := time.AfterFunc(20*time.Second, kill)
		defer timer.Stop()
	}
	wg.Wait()
	<-ddlDone
	kill()
	_ = p.cmd.Wait()
	if len(failures) > 0 {
		h.fail(cycle, "%s", strings.Join(failures, "\n"))
	}
	if writerErr != nil && !isConnErr(writerErr) {
		t.Logf("cycle %d: the writer's transaction failed with %v (in doubt)", cycle, writerErr)
	}
	h.stats.txns += len(newAcked)
	for _, x := range newAcked {
		h.model.add(x)
	}
	h.next += int64(len(newAcked))
	var doubt *kill4Txn
	if x := inFlight.Load(); x != nil {
		doubt = x
	}
	switch mode {
	case killAfterCommit:
		h.stats.afterCommitKills++
	case killInBackfill:
		h.stats.backfillKills++
		if !h.acked[ddl] {
			h.stats.backfillInterrupted++
		}
	}
	restarted := time.Now()
	h.p = h.start(h.restartFlags()...)
	if recoveryKill >= 0 {
		time.Sleep(recoveryKill)
		h.p.kill9()
		h.stats.recoveryKills++
		h.p = h.start(h.restartFlags()...)
	}
	up := time.Since(restarted)
	h.resolve(cycle, doubt)
	if ddl != "" {
		h.views = append(h.views, ddl)
		execPG(t, h.pg, "CREATE VIEW "+ddl+" AS "+h.queries[ddl])
		if !h.acked[ddl] && !h.viewExists(ddl) {
			// Not acknowledged and not there: it never happened.
			// Create it again, so later cycles check it.
			c := h.connect()
			h.exec(c, "CREATE MATERIALIZED VIEW "+ddl+" AS "+h.queries[ddl])
			c.Close(context.Background())
		}
	}
	ready := time.Since(restarted)
	h.verify(cycle)
	t.Logf("cycle %d: mode %d, delay %v, recovery kill %v, %d acknowledged (last %d), in doubt %v; restart: up %v, first reads %v, checked %v",
		cycle, mode, delay, recoveryKill, len(newAcked), h.next-1, doubt != nil, up.Round(time.Millisecond), ready.Round(time.Millisecond), time.Since(restarted).Round(time.Millisecond))
}

// resolve decides from txlog whether the transaction in flight at the
// kill committed, and counts it as such.
func (h *kill4) resolve(cycle int, doubt *kill4Txn) {
	if doubt == nil {
		return
	}
	c := h.connect()
	defer c.Close(context.Background())
	rows, err := query(c, fmt.Sprintf("SELECT id FROM txlog WHERE id = %d", doubt.id))
	if err != nil {
		h.fail(cycle, "reading whether the transaction in doubt committed: %v", err)
	}
	got := flatten(rows)
	if len(got) == 1 {
		h.model.add(*doubt)
		h.next = doubt.id + 1
		h.stats.inDoubtCommitted++
	} else {
		h.stats.inDoubtLost++
	}
}

func (h *kill4) viewExists(name string) bool {
	c := h.connect()
	defer c.Close(context.Background())
	_, err := h.readView(c, "SELECT * FROM "+name+" LIMIT 0")
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P01" {
		return false
	}
	if err != nil {
		h.t.Fatalf("SELECT from %s: %v", name, err)
	}
	return true
}

// readView runs sql, retrying while a view it reads is still being filled
// (a backfill the kill interrupted resumes at the restart): 40001.
func (h *kill4) readView(c *pgx.Conn, sql string) ([][]string, error) {
	deadline := time.Now().Add(90 * time.Second)
	for {
		rows, err := query(c, sql)
		var pe *pgconn.PgError
		if err == nil || !errors.As(err, &pe) || pe.Code != "40001" || time.Now().After(deadline) {
			return rows, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// verify checks the tables against the model of the committed
// transactions and every view against PostgreSQL over the same tables.
func (h *kill4) verify(cycle int) {
	c := h.connect()
	defer c.Close(context.Background())
	// txlog first: it names the transactions lost or partly there.
	gotLog := map[int64]bool{}
	for _, r := range flatten(queryText(h.t, c, "SELECT id FROM txlog")) {
		n, _ := strconv.ParseInt(r, 10, 64)
		gotLog[n] = true
		if _, ok := h.model.byID[n]; !ok {
			h.fail(cycle, "txlog has transaction %d, which was never acknowledged nor in flight at a kill", n)
		}
	}
	var lost []string
	for _, x := range h.model.committed {
		if !gotLog[x.id] {
			lost = append(lost, fmt.Sprint(x.id))
		}
	}
	if len(lost) > 0 {
		h.fail(cycle, "%d acknowledged transactions are lost (txlog lacks them): %s", len(lost), strings.Join(lost, " "))
	}
	wantAcc, wantLedger := h.model.state()
	gotAcc := flatten(queryText(h.t, c, "SELECT id, branch, balance FROM accounts"))
	if len(gotAcc) != kill4Accounts {
		h.fail(cycle, "accounts has %d rows, want %d", len(gotAcc), kill4Accounts)
	}
	for _, r := range gotAcc {
		id, rest, _ := strings.Cut(r, "|")
		n, _ := strconv.ParseInt(id, 10, 64)
		if wantAcc[n] != rest {
			h.fail(cycle, "a partly visible transaction: account %d is %s, the committed transactions (txlog) make it %s (branch|balance)", n, rest, wantAcc[n])
		}
	}
	gotLedger := flatten(queryText(h.t, c, "SELECT id, txn, acct, delta FROM ledger"))
	slices.Sort(gotLedger)
	if d := diffLines(gotLedger, wantLedger); d != "" {
		h.fail(cycle, "a partly visible transaction: ledger differs from the committed transactions (txlog):\n%s", d)
	}
	execPG(h.t, h.pg, "TRUNCATE accounts, ledger, txlog")
	copyTable(h.t, c, h.pg, "accounts", "SELECT id, branch, balance FROM accounts")
	copyTable(h.t, c, h.pg, "ledger", "SELECT id, txn, acct, delta FROM ledger")
	copyTable(h.t, c, h.pg, "txlog", "SELECT id FROM txlog")
	for _, name := range h.views {
		rows, err := h.readView(c, "SELECT * FROM "+name)
		if err != nil {
			h.fail(cycle, "SELECT * FROM %s: %v", name, err)
		}
		got := joinRows(rows)
		want := joinRows(queryText(h.t, h.pg, "SELECT * FROM "+name))
		if got != want {
			h.fail(cycle, "view %s differs from PostgreSQL 15 over the same tables\n got: %s\nwant: %s", name, got, want)
		}
	}
}

func diffLines(got, want []string) string {
	g := map[string]bool{}
	for _, r := range got {
		g[r] = true
	}
	w := map[string]bool{}
	for _, r := range want {
		w[r] = true
	}
	var out []string
	for _, r := range got {
		if !w[r] {
			out = append(out, "  unexpected "+r)
		}
	}
	for _, r := range want {
		if !g[r] {
			out = append(out, "  missing    "+r)
		}
	}
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("  ... %d more", len(out)-20))
	}
	return strings.Join(out, "\n")
}

// start starts the server on h.storage like startProcess, its stderr
// appended to h.log, which a failure to start shows.
func (h *kill4) start(extra ...string) *process {
	t := h.t
	t.Helper()
	logf, err := os.OpenFile(h.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	fmt.Fprintf(logf, "--- start %s\n", time.Now().UTC().Format(time.RFC3339Nano))
	p, err := launch(h.bin, h.storage, logf, extra...)
	if err != nil {
		h.fail(-2, "%v; its stderr:\n%s", err, h.logTail())
	}
	return p
}

func (h *kill4) logTail() string {
	b, _ := os.ReadFile(h.log)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-40):], "\n")
}

// fail stops the test, keeping the data directory for replay.
func (h *kill4) fail(cycle int, format string, args ...any) {
	h.t.Helper()
	keep := filepath.Join(os.TempDir(), fmt.Sprintf("rockstream-kill9-%d", h.seed))
	_ = os.RemoveAll(keep)
	if h.p != nil {
		_ = h.p.cmd.Process.Signal(syscall.SIGKILL)
		_ = h.p.cmd.Wait()
	}
	if out, err := exec.Command("cp", "-a", h.storage, keep).CombinedOutput(); err != nil {
		h.t.Logf("keeping the data directory: %v %s", err, out)
	}
	_ = exec.Command("cp", h.log, keep+".log").Run()
	h.t.Fatalf("seed %d, cycle %d (data directory kept in %s, the servers' stderr in %s.log): %s", h.seed, cycle, keep, keep, fmt.Sprintf(format, args...))
}

func resultText(rs []*pgconn.Result) string {
	var rows []string
	for _, r := range rs {
		for _, row := range r.Rows {
			vals := make([]string, len(row))
			for i, v := range row {
				if v == nil {
					vals[i] = "NULL"
				} else {
					vals[i] = string(v)
				}
			}
			rows = append(rows, strings.Join(vals, "|"))
		}
	}
	return strings.Join(rows, "\n")
}

// query runs sql on c; a nil error means rows came back.
func query(c *pgx.Conn, sql string) ([][]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rs, err := c.PgConn().Exec(ctx, sql).ReadAll()
	if err != nil {
		return nil, err
	}
	var out [][]string
	for _, r := range rs {
		for _, row := range r.Rows {
			vals := make([]string, len(row))
			for i, v := range row {
				if v == nil {
					vals[i] = "NULL"
				} else {
					vals[i] = string(v)
				}
			}
			out = append(out, vals)
		}
	}
	return out, nil
}

// readTables checks one statement's view of the tables: the money adds
// up, and every balance is 1000 plus its ledger rows.
func (h *kill4) readTables(c *pgx.Conn) (string, error) {
	rows, err := query(c, "SELECT a.id, a.balance, coalesce(l.net, 0), (SELECT sum(balance) FROM accounts), (SELECT coalesce(sum(delta), 0) FROM ledger) "+
		"FROM accounts a LEFT JOIN (SELECT acct, sum(delta) AS net FROM ledger GROUP BY acct) l ON l.acct = a.id")
	if err != nil {
		return "", err
	}
	h.countRead(false)
	if len(rows) != kill4Accounts {
		return fmt.Sprintf("accounts read %d rows, want %d", len(rows), kill4Accounts), nil
	}
	for _, r := range rows {
		bal, _ := strconv.ParseInt(r[1], 10, 64)
		net, _ := strconv.ParseInt(r[2], 10, 64)
		if bal != 1000+net || r[3] != fmt.Sprint(1000*kill4Accounts) || r[4] != "0" {
			return fmt.Sprintf("a partly visible transaction in one read of the tables: account %s balance %d with ledger net %d (want 1000 + net), total %s (want %d), ledger sum %s (want 0)",
				r[0], bal, net, r[3], 1000*kill4Accounts, r[4]), nil
		}
	}
	return "", nil
}

// readViews checks one statement reading views of every view shard,
// pinned at one epoch: each sums right and they agree with each other.
func (h *kill4) readViews(c *pgx.Conn) (string, error) {
	rows, err := query(c, "SELECT (SELECT total FROM totals), (SELECT sum(total) FROM by_branch), (SELECT total FROM branch_sum), (SELECT total FROM cross_v), "+
		"(SELECT n FROM ledger_totals), (SELECT coalesce(sum(n), 0) FROM ledger_by_acct), (SELECT coalesce(sum(n), 0) FROM branch_net), (SELECT coalesce(n, 0) FROM net_sum), (SELECT n FROM cross_v), "+
		"(SELECT net FROM ledger_totals), (SELECT coalesce(sum(net), 0) FROM ledger_by_acct), (SELECT coalesce(net, 0) FROM net_sum), (SELECT net FROM cross_v), "+
		"(SELECT txns FROM ledger_totals), (SELECT coalesce(sum(txns), 0) FROM branch_net), (SELECT n FROM totals), (SELECT n FROM branch_sum)")
	if err != nil {
		return "", err
	}
	h.countRead(true)
	if len(rows) != 1 {
		return fmt.Sprintf("the statement reading the views returned %d rows", len(rows)), nil
	}
	r := rows[0]
	money := fmt.Sprint(1000 * kill4Accounts)
	for i := 0; i < 4; i++ {
		if r[i] != money {
			return fmt.Sprintf("views totals, by_branch, branch_sum, cross_v read %v as the money in one statement, want %s in each", r[0:4], money), nil
		}
	}
	for i := 5; i < 9; i++ {
		if r[i] != r[4] {
			return fmt.Sprintf("ledger row counts of ledger_totals, ledger_by_acct, branch_net, net_sum, cross_v in one statement differ: %v", r[4:9]), nil
		}
	}
	for i := 9; i < 13; i++ {
		if r[i] != "0" && !(r[i] == "NULL" && r[4] == "0") {
			return fmt.Sprintf("ledger sums of ledger_totals, ledger_by_acct, net_sum, cross_v in one statement: %v, want 0", r[9:13]), nil
		}
	}
	// Each transfer's two ledger rows are in one branch or two.
	txns, _ := strconv.Atoi(r[13])
	byBranch, _ := strconv.Atoi(r[14])
	if byBranch < txns || byBranch > 2*txns {
		return fmt.Sprintf("ledger_totals counts %d transactions but branch_net's per-branch counts add to %d", txns, byBranch), nil
	}
	if r[15] != fmt.Sprint(kill4Accounts) || r[16] != fmt.Sprint(kill4Accounts) {
		return fmt.Sprintf("totals and branch_sum count %s and %s accounts, want %d", r[15], r[16], kill4Accounts), nil
	}
	return "", nil
}

// readRepeatable reads tables and views in one REPEATABLE READ
// transaction, which sees them at one snapshot: each balance is 1000 plus
// the account's net in the spread view ledger_by_acct, and the table's
// ledger rows are the ones the views count.
func (h *kill4) readRepeatable(c *pgx.Conn) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rs, err := c.PgConn().Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ; "+
		"SELECT id, balance, branch FROM accounts; "+
		"SELECT acct, net FROM ledger_by_acct; "+
		"SELECT count(*) FROM ledger; "+
		"SELECT n FROM ledger_totals; "+
		"SELECT branch, n, total FROM by_branch; "+
		"COMMIT").ReadAll()
	if err != nil {
		if !isConnErr(err) {
			_, _ = c.PgConn().Exec(context.Background(), "ROLLBACK").ReadAll()
		}
		return "", err
	}
	h.countRead(true)
	if len(rs) != 7 {
		return fmt.Sprintf("%d results from the REPEATABLE READ transaction", len(rs)), nil
	}
	net := map[string]int64{}
	for _, row := range rs[2].Rows {
		v, _ := strconv.ParseInt(string(row[1]), 10, 64)
		net[string(row[0])] = v
	}
	perBranch := map[string][2]int64{}
	for _, row := range rs[1].Rows {
		bal, _ := strconv.ParseInt(string(row[1]), 10, 64)
		if bal != 1000+net[string(row[0])] {
			return fmt.Sprintf("REPEATABLE READ: account %s has balance %d but ledger_by_acct's net is %d (want balance = 1000 + net)", row[0], bal, net[string(row[0])]), nil
		}
		b := perBranch[string(row[2])]
		perBranch[string(row[2])] = [2]int64{b[0] + 1, b[1] + bal}
	}
	if a, b := resultText(rs[3:4]), resultText(rs[4:5]); a != b {
		return fmt.Sprintf("REPEATABLE READ: ledger has %s rows, ledger_totals counts %s", a, b), nil
	}
	for _, row := range rs[5].Rows {
		b := perBranch[string(row[0])]
		if got := fmt.Sprintf("%s|%s", row[1], row[2]); got != fmt.Sprintf("%d|%d", b[0], b[1]) {
			return fmt.Sprintf("REPEATABLE READ: by_branch has branch %s as %s (n|total), accounts make it %d|%d", row[0], got, b[0], b[1]), nil
		}
		delete(perBranch, string(row[0]))
	}
	if len(perBranch) > 0 {
		return fmt.Sprintf("REPEATABLE READ: by_branch lacks branches %v of accounts", perBranch), nil
	}
	return "", nil
}

func (h *kill4) countRead(view bool) {
	if view {
		h.viewReads.Add(1)
	} else {
		h.reads.Add(1)
	}
}

// isConnErr reports whether err is the connection's loss (the kill), not
// an error the server answered with.
func isConnErr(err error) bool {
	var pe *pgconn.PgError
	return !errors.As(err, &pe)
}

func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

func buildBinaryTags(t *testing.T, tags string) string {
	t.Helper()
	if tags == "" {
		return buildBinary(t)
	}
	bin := filepath.Join(t.TempDir(), "rockstream")
	out, err := exec.Command("go", "build", "-tags", tags, "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -tags %s: %v\n%s", tags, err, out)
	}
	return bin
}
