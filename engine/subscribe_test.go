package engine_test

import (
	"context"
	"fmt"
	"github.com/rockstream/rockstream/internal/enginetest"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// change is one subscription row: a change (diff != 0) or a progress row.
type change struct {
	epoch      int64
	progressed bool
	diff       int64
	row        string // the view columns, "|"-separated
}

func (c change) String() string { return fmt.Sprintf("%d|%+d|%s", c.epoch, c.diff, c.row) }

// subscription is one SUBSCRIBE statement on its own connection.
type subscription struct {
	t      *testing.T
	conn   *pgx.Conn
	rows   pgx.Rows
	cancel context.CancelFunc
}

func openSubscription(t *testing.T, url, sql string) (*subscription, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		cancel()
		t.Fatalf("connect: %v", err)
	}
	rows, err := conn.Query(ctx, sql)
	if err == nil {
		// The first row carries a statement error (pgx reports it there).
		if !rows.Next() {
			err = rows.Err()
			if err == nil {
				err = fmt.Errorf("subscription ended before its first row")
			}
		}
	}
	if err != nil {
		cancel()
		_ = conn.Close(context.Background())
		return nil, err
	}
	return &subscription{t: t, conn: conn, rows: rows, cancel: cancel}, nil
}

// next returns the next row (the first call returns the row that
// openSubscription already read).
func (s *subscription) next(first *bool) change {
	s.t.Helper()
	if !*first && !s.rows.Next() {
		s.t.Fatalf("subscription ended: %v", s.rows.Err())
	}
	*first = false
	vals, err := s.rows.Values()
	if err != nil {
		s.t.Fatal(err)
	}
	c := change{epoch: vals[0].(int64), progressed: vals[1].(bool)}
	if !c.progressed {
		c.diff = vals[2].(int64)
		parts := make([]string, 0, len(vals)-3)
		for _, v := range vals[3:] {
			parts = append(parts, fmt.Sprint(v))
		}
		c.row = strings.Join(parts, "|")
	}
	return c
}

// drop disconnects: either a cancel (pgx sends a CancelRequest) or the
// connection closed under the server's feet, as a crashing client would.
func (s *subscription) drop(abrupt bool) {
	if abrupt {
		_ = s.conn.PgConn().Conn().Close()
		s.cancel()
		return
	}
	s.cancel()
	s.rows.Close()
	_ = s.conn.Close(context.Background())
}

// viewFrontier is the frontier SHOW VIEW STATUS reports for a view, after a
// read of the view made it catch up with every commit.
func viewFrontier(t *testing.T, c *pgx.Conn, view string) int64 {
	t.Helper()
	n, err := frontierOf(c, view)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func frontierOf(c *pgx.Conn, view string) (int64, error) {
	ctx := context.Background()
	if _, err := c.PgConn().Exec(ctx, "SELECT count(*) FROM "+view).ReadAll(); err != nil {
		return 0, err
	}
	res, err := c.PgConn().Exec(ctx, "SHOW VIEW STATUS").ReadAll()
	if err != nil {
		return 0, err
	}
	for _, r := range res {
		for _, row := range r.Rows {
			if string(row[0]) == view {
				return strconv.ParseInt(string(row[2]), 10, 64)
			}
		}
	}
	return 0, fmt.Errorf("SHOW VIEW STATUS has no line for %s", view)
}

// accumulate adds changes to a multiset of rows (row → weight).
func accumulate(state map[string]int64, cs []change) {
	for _, c := range cs {
		state[c.row] += c.diff
		if state[c.row] == 0 {
			delete(state, c.row)
		}
	}
}

func stateLines(state map[string]int64) []string {
	var out []string
	for row, w := range state {
		for range w {
			out = append(out, row)
		}
		if w < 0 {
			out = append(out, fmt.Sprintf("%s ×%d", row, w))
		}
	}
	sort.Strings(out)
	return out
}

func changeLines(cs []change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.String()
	}
	sort.Strings(out)
	return out
}

// netLines is what changes add up to, by row.
func netLines(cs []change) []string {
	net := map[string]int64{}
	accumulate(net, cs)
	var out []string
	for row, w := range net { //lint:maprange sorted below
		out = append(out, fmt.Sprintf("%+d|%s", w, row))
	}
	sort.Strings(out)
	return out
}

// readUntil reads a subscription until a progress row at or after epoch,
// returning the changes before it.
func (s *subscription) readUntil(first *bool, epoch int64) []change {
	s.t.Helper()
	var out []change
	for {
		c := s.next(first)
		if c.progressed {
			if c.epoch >= epoch {
				return out
			}
			continue
		}
		out = append(out, c)
	}
}

// TestSubscribeResume is the resume acceptance test: a writer changes a
// table (and the same rows in PostgreSQL 15) while a SUBSCRIBE client
// disconnects at random points (seeded) and resumes AS OF the last epoch a
// progress row reported. The client must receive every change exactly
// once: its changes equal one uninterrupted replay of the view's history,
// and the snapshot plus its changes equal the view and PostgreSQL's answer
// to the view's query.
func TestSubscribeResume(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { subscribeResume(t, seed) })
	}
}

func subscribeResume(t *testing.T, seed uint64) {
	t.Logf("SEED=%d (go test ./engine -run 'TestSubscribeResume/seed=%d$' -count=1)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 25))
	srv := startServer(t, t.TempDir())
	o := newOracle(t, connect(t, srv.url()))
	o.both("CREATE TABLE t (id int PRIMARY KEY, g int, v int)")
	o.both("INSERT INTO t VALUES (1, 0, 5), (2, 1, 7)")
	// The default retention: history starts with the first SUBSCRIBE.
	o.view("tv", "SELECT g, count(*) AS n, sum(v) AS s FROM t GROUP BY g")

	o.both("CREATE TABLE tick (id serial PRIMARY KEY)")

	// The writer: single-statement transactions, each its own epoch. Then
	// it publishes the frontier that covers them all (target) and keeps
	// committing to a table the view does not read, so the subscription
	// keeps getting progress rows until the client reached target.
	const writes = 150
	writerRng := rand.New(rand.NewPCG(seed, 16))
	var target atomic.Int64
	target.Store(-1)
	writerErr := make(chan error, 1)
	start, stop := make(chan struct{}), make(chan struct{})
	rs, pg := connect(t, srv.url()), o.pg
	go func() {
		writerErr <- func() error {
			<-start
			for range writes {
				var sql string
				id, g, v := writerRng.IntN(12), writerRng.IntN(4), writerRng.IntN(10)
				switch writerRng.IntN(3) {
				case 0:
					sql = fmt.Sprintf("INSERT INTO t VALUES (%d, %d, %d) ON CONFLICT (id) DO UPDATE SET g = excluded.g, v = excluded.v", id, g, v)
				case 1:
					sql = fmt.Sprintf("UPDATE t SET v = v + 1 WHERE id = %d", id)
				default:
					sql = fmt.Sprintf("DELETE FROM t WHERE id = %d", id)
				}
				for _, c := range []*pgx.Conn{rs, pg} {
					if _, err := c.PgConn().Exec(context.Background(), sql).ReadAll(); err != nil {
						return fmt.Errorf("%s: %w", sql, err)
					}
				}
			}
			f, err := frontierOf(rs, "tv")
			if err != nil {
				return err
			}
			target.Store(f)
			for {
				select {
				case <-stop:
					return nil
				case <-time.After(20 * time.Millisecond):
				}
				if _, err := rs.PgConn().Exec(context.Background(), "INSERT INTO tick DEFAULT VALUES").ReadAll(); err != nil {
					return err
				}
			}
		}()
	}()

	// The snapshot (WITH (SNAPSHOT) until its progress row was read).
	state := map[string]int64{}
	var startEpoch int64 = -1
	var got []change // every accepted change, in order
	resumes := 0
	last := int64(-1)
	reached := func() bool { return target.Load() >= 0 && last >= target.Load() }
	for !reached() {
		sql := fmt.Sprintf("SUBSCRIBE tv AS OF EPOCH %d", last)
		if startEpoch < 0 {
			sql = "SUBSCRIBE tv WITH (SNAPSHOT)"
		}
		sub, err := openSubscription(t, srv.url(), sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if resumes == 0 {
			close(start) // writes start once the first subscription is open
		}
		select {
		case err := <-writerErr:
			t.Fatalf("writer stopped: %v", err)
		default:
		}
		resumes++
		first := true
		var partial []change // changes after the last progress row
		for k := 1 + rng.IntN(25); k > 0; k-- {
			c := sub.next(&first)
			if !c.progressed {
				partial = append(partial, c)
				continue
			}
			if startEpoch < 0 {
				startEpoch = c.epoch
				accumulate(state, partial)
			} else {
				// INVARIANT (of the protocol): epochs only grow.
				if c.epoch < last {
					t.Fatalf("progress went back from %d to %d", last, c.epoch)
				}
				for _, p := range partial {
					if p.epoch <= last || p.epoch > c.epoch {
						t.Fatalf("change %s outside the progress interval (%d, %d]", p, last, c.epoch)
					}
				}
				got = append(got, partial...)
			}
			partial, last = nil, c.epoch
			if reached() {
				break
			}
		}
		// Changes read after the last progress row are dropped: the resume
		// AS OF that progress epoch delivers them again.
		sub.drop(rng.IntN(2) == 0)
	}
	close(stop)
	if err := <-writerErr; err != nil {
		t.Fatal(err)
	}
	final := target.Load()
	t.Logf("%d subscriptions, %d changes, epochs %d..%d", resumes, len(got), startEpoch, final)
	if resumes < 5 || len(got) < 20 {
		t.Fatalf("the run exercised too little: %d subscriptions, %d changes", resumes, len(got))
	}

	// Exactly once: the resumed client's changes equal one uninterrupted
	// replay of the history over the same epochs.
	ref, err := openSubscription(t, srv.url(), fmt.Sprintf("SUBSCRIBE tv AS OF EPOCH %d", startEpoch))
	if err != nil {
		t.Fatal(err)
	}
	first := true
	want := ref.readUntil(&first, final)
	ref.drop(false)
	g, w := changeLines(got), changeLines(want)
	if shards, _ := enginetest.Shards(); shards > 1 {
		// The view is spread over the shards: a subscription merges
		// their streams at epochs all of them have stepped to, which a
		// replay of their histories need not share, so the same changes
		// may come at other epochs: compare what they add up to (and
		// the state below, against PostgreSQL).
		g, w = netLines(got), netLines(want)
	}
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Fatalf("resumed changes differ from the view's history\n got: %q\nwant: %q", g, w)
	}
	// And the snapshot plus the changes is the view, which is PostgreSQL's
	// answer.
	accumulate(state, got)
	o.check("after the writes")
	if g, w := stateLines(state), rowsText(t, o.rs, "SELECT g, n, s FROM tv"); strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Fatalf("snapshot + changes differ from the view\n got: %q\nwant: %q", g, w)
	}
}

// TestSubscribeResumeAfterRestart: the history is durable, so a client that
// disconnected resumes after a server restart with every change it missed.
func TestSubscribeResumeAfterRestart(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, dir)
	rs := connect(t, srv.url())
	exec(t, rs, "CREATE TABLE r (id int PRIMARY KEY, v text)")
	exec(t, rs, "CREATE MATERIALIZED VIEW rv WITH (retain_history = '1 hour') AS SELECT id, v FROM r WHERE id % 2 = 0")
	// NB: a bare "SUBSCRIBE rv" is dropped by the gateway's statement
	// splitter (pg_query.SplitWithScanner returns no piece for it).
	sub, err := openSubscription(t, srv.url(), "SUBSCRIBE rv WITH (SNAPSHOT = false)")
	if err != nil {
		t.Fatal(err)
	}
	first := true
	start := sub.next(&first)
	if !start.progressed {
		t.Fatalf("first row %v is not a progress row", start)
	}
	exec(t, rs, "INSERT INTO r VALUES (2, 'a'), (3, 'b')")
	exec(t, rs, "INSERT INTO r VALUES (4, 'c')")
	seen := viewFrontier(t, rs, "rv")
	state := map[string]int64{}
	accumulate(state, sub.readUntil(&first, seen))
	sub.drop(true)
	// Changes while disconnected, then a restart.
	exec(t, rs, "UPDATE r SET v = 'A' WHERE id = 2")
	exec(t, rs, "DELETE FROM r WHERE id = 4")
	exec(t, rs, "INSERT INTO r VALUES (6, 'd'), (7, 'e')")
	srv.stop()
	srv = startServer(t, dir)
	rs = connect(t, srv.url())
	exec(t, rs, "INSERT INTO r VALUES (8, 'f')")
	final := viewFrontier(t, rs, "rv")
	sub, err = openSubscription(t, srv.url(), fmt.Sprintf("SUBSCRIBE rv AS OF EPOCH %d", seen))
	if err != nil {
		t.Fatalf("resume after restart: %v", err)
	}
	first = true
	missed := sub.readUntil(&first, final)
	sub.drop(false)
	if len(missed) == 0 {
		t.Fatal("the resume replayed nothing")
	}
	accumulate(state, missed)
	if g, w := stateLines(state), rowsText(t, rs, "SELECT id, v FROM rv"); strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Fatalf("changes before the restart + replayed after it differ from the view\n got: %q\nwant: %q", g, w)
	}
}

// TestSubscribeBeforeRetention: a resume from before the retained history
// fails with RS-2005 naming the oldest available epoch.
func TestSubscribeBeforeRetention(t *testing.T) {
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	exec(t, rs, "CREATE TABLE h (id int PRIMARY KEY)")
	for _, bad := range []string{"retain_history = 'soon'", "retain_history = '8 days'", "retain_histroy = '1 hour'"} {
		_, err := rs.Exec(context.Background(), "CREATE MATERIALIZED VIEW h_bad WITH ("+bad+") AS SELECT id FROM h")
		var pgErr *pgconn.PgError
		if !asPgError(err, &pgErr) || pgErr.Code != "22023" {
			t.Fatalf("WITH (%s): got %v, want 22023", bad, err)
		}
	}
	exec(t, rs, "CREATE MATERIALIZED VIEW h_off WITH (retain_history = '0') AS SELECT id FROM h")
	exec(t, rs, "CREATE MATERIALIZED VIEW h_short WITH (retain_history = '1 second') AS SELECT id FROM h")
	exec(t, rs, "INSERT INTO h VALUES (1)")
	early := viewFrontier(t, rs, "h_short")
	exec(t, rs, "INSERT INTO h VALUES (2)")
	// Past the window (a wall-clock second), later steps delete the
	// entries of the first two inserts.
	time.Sleep(1200 * time.Millisecond)
	exec(t, rs, "INSERT INTO h VALUES (3)")
	exec(t, rs, "INSERT INTO h VALUES (4)")
	now := viewFrontier(t, rs, "h_short")
	for _, tc := range []struct {
		view   string
		oldest string
	}{
		{"h_off", fmt.Sprintf("oldest available epoch %d", now)},
		{"h_short", "oldest available epoch "},
	} {
		_, err := openSubscription(t, srv.url(), fmt.Sprintf("SUBSCRIBE %s AS OF EPOCH %d", tc.view, early-1))
		var pgErr *pgconn.PgError
		if !asPgError(err, &pgErr) || pgErr.Code != "72000" || !strings.Contains(pgErr.Detail, "RS-2005") || !strings.Contains(pgErr.Message, tc.oldest) {
			t.Fatalf("%s: got %v, want RS-2005 (72000) naming the %s", tc.view, err, tc.oldest)
		}
		if pgErr.Hint == "" {
			t.Fatalf("%s: RS-2005 without next steps", tc.view)
		}
	}
	// A resume at the current frontier is always within retention.
	sub, err := openSubscription(t, srv.url(), fmt.Sprintf("SUBSCRIBE h_off AS OF EPOCH %d", now))
	if err != nil {
		t.Fatal(err)
	}
	sub.drop(false)
	_, err = openSubscription(t, srv.url(), fmt.Sprintf("SUBSCRIBE h_off AS OF EPOCH %d", now+1000))
	if err == nil || !strings.Contains(err.Error(), "not complete yet") {
		t.Fatalf("a resume from a future epoch: %v", err)
	}
}

// TestAlterViewRetainHistory: ALTER MATERIALIZED VIEW ... SET
// (retain_history = ...) starts keeping history for a view created
// without it (resumes from epochs since work; earlier ones still fail
// with RS-2005), survives a restart, and checks its options as CREATE
// does; RESET puts the default back.
func TestAlterViewRetainHistory(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, dir)
	rs := connect(t, srv.url())
	exec(t, rs, "CREATE TABLE ah (id int PRIMARY KEY)")
	exec(t, rs, "CREATE MATERIALIZED VIEW ah_v WITH (retain_history = '0') AS SELECT id FROM ah")
	exec(t, rs, "INSERT INTO ah VALUES (1)")
	before := viewFrontier(t, rs, "ah_v")
	exec(t, rs, "INSERT INTO ah VALUES (2)")
	resume := func(url string, epoch int64) error {
		sub, err := openSubscription(t, url, fmt.Sprintf("SUBSCRIBE ah_v AS OF EPOCH %d", epoch))
		if err == nil {
			sub.drop(false)
		}
		return err
	}
	if err := resume(srv.url(), before); err == nil {
		t.Fatal("a resume from before any history was kept succeeded")
	}
	for _, bad := range []string{"ALTER MATERIALIZED VIEW ah_v SET (retain_history = 'soon')", "ALTER MATERIALIZED VIEW ah_v SET (retain_histroy = '1 hour')",
		"ALTER MATERIALIZED VIEW ah_v RESET (fillfactor)"} {
		_, err := rs.Exec(context.Background(), bad)
		var pgErr *pgconn.PgError
		if !asPgError(err, &pgErr) || pgErr.Code != "22023" {
			t.Fatalf("%s: got %v, want 22023", bad, err)
		}
	}
	exec(t, rs, "ALTER MATERIALIZED VIEW ah_v SET (retain_history = '1 hour')")
	kept := viewFrontier(t, rs, "ah_v")
	exec(t, rs, "INSERT INTO ah VALUES (3)")
	exec(t, rs, "INSERT INTO ah VALUES (4)")
	if err := resume(srv.url(), kept); err != nil {
		t.Fatalf("a resume from after SET (retain_history): %v", err)
	}
	if err := resume(srv.url(), before); err == nil {
		t.Fatal("a resume from before the history was kept succeeded")
	}
	srv.Stop()
	srv = startServer(t, dir)
	rs = connect(t, srv.url())
	exec(t, rs, "INSERT INTO ah VALUES (5)")
	if err := resume(srv.url(), kept); err != nil {
		t.Fatalf("after a restart, a resume from after SET (retain_history): %v", err)
	}
	exec(t, rs, "ALTER MATERIALIZED VIEW ah_v RESET (retain_history)")
	if _, err := rs.Exec(context.Background(), "ALTER TABLE ah SET (fillfactor = 10)"); err == nil {
		t.Fatal("ALTER TABLE ... SET (fillfactor) succeeded")
	}
}
