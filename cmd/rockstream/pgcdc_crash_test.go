package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// cdcCrashCycles is how many times the POSTGRES source's crash test kills
// the server (issue X2 asks for at least 10).
const cdcCrashCycles = 10

// cdcAccounts is the number of upstream accounts the writer updates.
const cdcAccounts = 200

// TestPostgresSourceCrashKill9 mirrors an upstream PostgreSQL while a
// writer keeps committing there and the RockStream server is killed with
// SIGKILL cdcCrashCycles times and restarted. Each upstream transaction
// inserts or deletes an event and moves its account's balance by the same
// amount, and bumps the account's version. Checked:
//
//   - after every restart, no transaction is half applied: the view of
//     accounts whose balance differs from the sum of their events is empty;
//   - at the end, the mirrors and the views equal the upstream exactly;
//   - the view's whole change history (replayed with SUBSCRIBE ... AS OF
//     EPOCH) never moves the accounts' version sum backwards: no
//     transaction was applied twice, and no restart re-copied the
//     snapshot (either would take mirrored rows back to older versions).
func TestPostgresSourceCrashKill9(t *testing.T) {
	url, pg := pgtest.Database(t)
	execPG(t, pg, `CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL, version bigint NOT NULL)`)
	execPG(t, pg, `CREATE TABLE events (id bigint PRIMARY KEY, account_id int NOT NULL, amount int NOT NULL)`)
	execPG(t, pg, fmt.Sprintf(`INSERT INTO accounts SELECT i, 0, 1 FROM generate_series(1, %d) i`, cdcAccounts))
	execPG(t, pg, `CREATE PUBLICATION p FOR TABLE accounts, events`)

	bin := buildBinary(t)
	storage := t.TempDir()
	p := startProcess(t, bin, storage)
	defer func() { p.kill9() }()
	ctx := context.Background()
	rs, err := pgx.Connect(ctx, p.url)
	if err != nil {
		t.Fatal(err)
	}
	views := map[string]string{
		"totals":   `SELECT count(*) AS n, sum(balance) AS balance, sum(version) AS version FROM accounts`,
		"mismatch": `SELECT a.id, a.balance, e.s FROM accounts a JOIN (SELECT account_id, sum(amount) AS s FROM events GROUP BY account_id) e ON e.account_id = a.id WHERE a.balance <> e.s`,
	}
	for _, s := range []string{
		fmt.Sprintf(`CREATE SOURCE pg FROM POSTGRES (connection = '%s', publication = 'p')`, url),
		`CREATE MATERIALIZED VIEW totals WITH (retain_history = '1 hour') AS ` + views["totals"],
		`CREATE MATERIALIZED VIEW mismatch AS ` + views["mismatch"],
	} {
		if _, err := rs.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	firstEpoch := subscribeEpoch(t, p.url)
	rs.Close(ctx)

	// The writer commits upstream for the whole test, crashes or not.
	var written atomic.Int64
	stop := make(chan struct{})
	writerDone := make(chan error, 1)
	go func() { writerDone <- cdcWriter(url, stop, &written) }()

	rnd := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))
	start := time.Now()
	for cycle := 0; cycle < cdcCrashCycles; cycle++ {
		time.Sleep(time.Duration(300+rnd.IntN(1200)) * time.Millisecond)
		p.kill9()
		p = startProcess(t, bin, storage)
		conn, err := pgx.Connect(ctx, p.url)
		if err != nil {
			t.Fatalf("cycle %d: reconnect: %v", cycle, err)
		}
		if rows := queryText(t, conn, "SELECT * FROM mismatch"); len(rows) != 0 {
			t.Fatalf("cycle %d: accounts whose balance is not the sum of their events (a transaction half applied): %v", cycle, rows)
		}
		conn.Close(ctx)
	}
	close(stop)
	if err := <-writerDone; err != nil {
		t.Fatalf("upstream writer: %v", err)
	}
	elapsed := time.Since(start)

	conn, err := pgx.Connect(ctx, p.url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	deadline := time.Now().Add(60 * time.Second)
	for {
		diff := ""
		for _, q := range []string{"SELECT * FROM accounts", "SELECT * FROM events"} {
			if got, want := joinRows(queryText(t, conn, q)), joinRows(queryText(t, pg, q)); got != want {
				diff = fmt.Sprintf("%s: %d rows mirrored, %d upstream", q, len(strings.Split(got, "\n")), len(strings.Split(want, "\n")))
			}
		}
		for name, q := range views {
			if got, want := joinRows(queryText(t, conn, "SELECT * FROM "+name)), joinRows(queryText(t, pg, q)); diff == "" && got != want {
				diff = fmt.Sprintf("view %s\n got: %s\nwant: %s", name, got, want)
			}
		}
		if diff == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %d crashes the mirrors differ from the upstream: %s", cdcCrashCycles, diff)
		}
		time.Sleep(100 * time.Millisecond)
	}
	checkVersionHistory(t, p.url, firstEpoch)
	if written.Load() < cdcCrashCycles {
		t.Fatalf("only %d upstream transactions over %d cycles: the writer did not run", written.Load(), cdcCrashCycles)
	}
	t.Logf("%d SIGKILLs; %d upstream transactions (%d row changes) in %v mirrored exactly once",
		cdcCrashCycles, written.Load(), 2*written.Load(), elapsed.Round(time.Millisecond))
}

// cdcWriter commits transactions upstream until stop: each inserts an
// event (or deletes an earlier one) and moves its account's balance by
// its amount. It counts the transactions that committed.
func cdcWriter(url string, stop <-chan struct{}, written *atomic.Int64) error {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	rnd := rand.New(rand.NewPCG(1, 2))
	type event struct {
		id      int64
		account int
		amount  int
	}
	var live []event
	for id := int64(1); ; id++ {
		select {
		case <-stop:
			return nil
		default:
		}
		var sql string
		if len(live) > 0 && rnd.IntN(4) == 0 {
			i := rnd.IntN(len(live))
			e := live[i]
			live[i] = live[len(live)-1]
			live = live[:len(live)-1]
			sql = fmt.Sprintf("BEGIN; DELETE FROM events WHERE id = %d; UPDATE accounts SET balance = balance - %d, version = version + 1 WHERE id = %d; COMMIT",
				e.id, e.amount, e.account)
		} else {
			e := event{id: id, account: 1 + rnd.IntN(cdcAccounts), amount: 1 + rnd.IntN(100)}
			live = append(live, e)
			sql = fmt.Sprintf("BEGIN; INSERT INTO events VALUES (%d, %d, %d); UPDATE accounts SET balance = balance + %d, version = version + 1 WHERE id = %d; COMMIT",
				e.id, e.account, e.amount, e.amount, e.account)
		}
		if _, err := conn.PgConn().Exec(ctx, sql).ReadAll(); err != nil {
			return err
		}
		written.Add(1)
	}
}

// subscribeEpoch is the epoch of the first progress row of SUBSCRIBE
// totals WITH (SNAPSHOT): the view's state is complete up to it.
func subscribeEpoch(t *testing.T, url string) uint64 {
	t.Helper()
	var epoch uint64
	err := subscribeRows(url, "COPY (SUBSCRIBE totals WITH (SNAPSHOT)) TO STDOUT", func(f []string) bool {
		if f[1] == "t" {
			epoch, _ = strconv.ParseUint(f[0], 10, 64)
			return false
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return epoch
}

// checkVersionHistory replays the totals view's change history from
// epoch after to now and fails if the version sum ever went down.
func checkVersionHistory(t *testing.T, url string, after uint64) {
	t.Helper()
	end := subscribeEpoch(t, url)
	var last int64 = -1
	var steps int
	var regress string
	err := subscribeRows(url, fmt.Sprintf("COPY (SUBSCRIBE totals AS OF EPOCH %d) TO STDOUT", after), func(f []string) bool {
		if f[1] == "t" {
			e, _ := strconv.ParseUint(f[0], 10, 64)
			return e < end
		}
		if f[2] != "1" || f[5] == `\N` {
			return true
		}
		v, _ := strconv.ParseInt(f[5], 10, 64)
		if v < last && regress == "" {
			regress = fmt.Sprintf("epoch %s: the accounts' version sum went from %d back to %d", f[0], last, v)
		}
		last = v
		steps++
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if regress != "" {
		t.Fatalf("the view's history went backwards (a transaction applied twice or the snapshot re-copied): %s", regress)
	}
	if steps < cdcCrashCycles {
		t.Fatalf("the view's history holds only %d changes", steps)
	}
	t.Logf("view history: %d changes from epoch %d to %d, version sum never decreasing", steps, after, end)
}

// subscribeRows runs a COPY (SUBSCRIBE ...) TO STDOUT and calls each with
// every row's tab-separated fields until it returns false.
func subscribeRows(url, sql string, each func([]string) bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	r, w := io.Pipe()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, err := conn.PgConn().CopyTo(ctx, w, sql)
		_ = w.CloseWithError(err)
	}()
	var buf []byte
	chunk := make([]byte, 64<<10)
	for done := false; !done; {
		n, rerr := r.Read(chunk)
		buf = append(buf, chunk[:n]...)
		for {
			i := strings.IndexByte(string(buf), '\n')
			if i < 0 {
				break
			}
			line := string(buf[:i])
			buf = buf[i+1:]
			if !each(strings.Split(line, "\t")) {
				done = true
				break
			}
		}
		if rerr != nil && !done {
			err = rerr
			break
		}
	}
	// NB: ending a SUBSCRIBE early means cancelling the COPY, which
	// breaks the connection: each subscription has its own.
	cancel()
	_ = conn.Close(context.Background())
	_ = r.Close()
	wg.Wait()
	return err
}
