package console_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/engine"
	"github.com/rockstream/rockstream/internal/enginetest"
)

// browserTimeout bounds the whole browser session of a test, and
// pollTimeout one wait for the page to show something.
const (
	browserTimeout = 3 * time.Minute
	pollTimeout    = 30 * time.Second
)

// TestConsoleInBrowser drives the console in a real headless Chromium: it
// loads /, creates a table and a view and inserts rows from the SQL box,
// checks an engine error is shown with its RS code, opens the view's page
// and sees the changes of later statements arrive live and its dataflow's
// numbers follow them, watches the bar of a view being filled on the
// overview and on the view's page until it ends, and takes screenshots
// ($ROCKSTREAM_SCREENSHOT, or files in the test's artifact directory).
func TestConsoleInBrowser(t *testing.T) {
	browser := chromium(t)
	srv := serve(t)
	ctx := browse(t, browser)

	base := "http://" + srv.http
	do(t, ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.ID("sql-input")))
	title := get(t, ctx, chromedp.Title())
	if !strings.Contains(title, "RockStream console") {
		t.Fatalf("/ has title %q, want the console", title)
	}
	do(t, ctx, chromedp.WaitVisible(chromedp.ID("no-views")))

	sql(t, ctx, "CREATE TABLE orders (id int PRIMARY KEY, customer text, amount int)", "ok", "CREATE TABLE")
	sql(t, ctx, "CREATE MATERIALIZED VIEW totals AS SELECT customer, sum(amount) AS total FROM orders GROUP BY customer", "ok", "CREATE MATERIALIZED VIEW")
	// The object lists are reloaded after every statement.
	do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`#views tr[data-name="totals"]`)), chromedp.WaitVisible(chromedp.CSS(`#tables tr[data-name="orders"]`)))

	sql(t, ctx, "INSERT INTO orders VALUES (1, 'alice', 30), (2, 'bob', 5), (3, 'alice', 12)", "ok", "INSERT 0 3")
	out := sql(t, ctx, "SELECT customer, total FROM totals ORDER BY customer", "ok", "SELECT 2")
	for _, want := range []string{"alice", "42", "bob", "5"} {
		if !strings.Contains(out, want) {
			t.Fatalf("the view's rows in the SQL box lack %q:\n%s", want, out)
		}
	}
	rows := textOf(t, ctx, `#tables tr[data-name="orders"] td.rows`)
	if strings.TrimSpace(rows) != "3" {
		t.Fatalf("the overview shows %q rows for orders, want 3", rows)
	}

	// The tab keeps its session: SET carries over to the next run.
	sql(t, ctx, "SET statement_timeout = '9s'", "ok", "SET")
	if out := sql(t, ctx, "SHOW statement_timeout", "ok", "SHOW"); !strings.Contains(out, "9s") {
		t.Fatalf("SET did not carry over to the next run of the SQL box:\n%s", out)
	}

	// A source is listed with its state.
	sql(t, ctx, "CREATE SOURCE clicks FROM GENERATE ROWS (id bigint GENERATED) RATE = 5 PER SECOND", "ok", "CREATE SOURCE")
	do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`#sources tr[data-name="clicks"]`)))
	if state := textOf(t, ctx, `#sources tr[data-name="clicks"] td.state`); state == "" || state == "(no element)" {
		t.Fatalf("the source clicks shows no state: %q", state)
	}

	// A view in the error state shows its error on the overview.
	sql(t, ctx, "CREATE TABLE divisors (d int PRIMARY KEY)", "ok", "CREATE TABLE")
	sql(t, ctx, "CREATE MATERIALIZED VIEW ratios AS SELECT 100 / d AS ratio FROM divisors", "ok", "CREATE MATERIALIZED VIEW")
	sql(t, ctx, "INSERT INTO divisors VALUES (0)", "ok", "INSERT 0 1")
	// NB: the view's state changes at its epoch step, after the commit
	// returned, so the page reloads its object lists until it shows it.
	waitFor(t, ctx, `(refreshObjects(), document.querySelector('#views tr[data-name="ratios"].state-error') !== null)`, "the view ratios in the error state", chromedp.WithPollingInterval(200*time.Millisecond))
	if msg := textOf(t, ctx, `#views tr[data-name="ratios"] td.error-text`); !strings.Contains(msg, "division by zero") {
		t.Fatalf("the view in the error state shows %q, want its division by zero", msg)
	}

	// An engine error is shown with its RS code and SQLSTATE.
	out = sql(t, ctx, "SELECT * FROM no_such_table", "error", "")
	if !strings.Contains(out, "RS-") || !strings.Contains(out, "no_such_table") || !strings.Contains(out, "42P01") {
		t.Fatalf("the error of a missing table lacks its RS code, SQLSTATE or name:\n%s", out)
	}
	// A syntax error points at where it is.
	out = sql(t, ctx, "SELECT 1 FROM orders WHERE", "error", "")
	if !strings.Contains(out, "42601") || !strings.Contains(out, "^") {
		t.Fatalf("a syntax error lacks its SQLSTATE or its caret:\n%s", out)
	}
	// A statement that cannot end is refused, not left hanging.
	out = sql(t, ctx, "SUBSCRIBE totals", "error", "")
	if !strings.Contains(out, "RS-2493") {
		t.Fatalf("SUBSCRIBE in the SQL box was not refused with RS-2493:\n%s", out)
	}

	screenshot(t, ctx, "overview")

	// The view's page: its dataflow, and its changes live. The snapshot
	// comes first, then each committed change.
	click(t, ctx, `#views tr[data-name="totals"] a`)
	do(t, ctx, chromedp.WaitVisible(chromedp.ID("plan")))
	plan := get(t, ctx, chromedp.Text(chromedp.ID("plan")))
	for _, want := range []string{"VIEW", "AGG", "SCAN", "orders"} {
		if !strings.Contains(plan, want) {
			t.Fatalf("the plan lacks %q:\n%s", want, plan)
		}
	}
	// The dataflow: the operators running, each with its numbers.
	dataflow := textOf(t, ctx, "#dataflow")
	for _, want := range []string{"aggregate", "source orders", " in → ", " out · ", "state"} {
		if !strings.Contains(dataflow, want) {
			t.Fatalf("the dataflow lacks %q:\n%s", want, dataflow)
		}
	}
	waitFor(t, ctx, `document.getElementById("live").dataset.state === "live"`, "the subscription to go live")
	waitFor(t, ctx, rowShown("contents", "alice", "42"), "the snapshot row (alice, 42)")
	sql(t, ctx, "INSERT INTO orders VALUES (4, 'carol', 7)", "ok", "INSERT 0 1")
	waitFor(t, ctx, rowShown("changes", "carol", "7", "+1"), "the change (carol, 7) +1")
	// The numbers are kept current: four rows have entered the view's
	// source operator (over every shard the view is spread over, added
	// up), and the aggregate has put out its groups.
	waitFor(t, ctx, operatorRows("source orders", "rows-in", "=== 4"), "4 rows into the dataflow's source orders")
	waitFor(t, ctx, operatorRows("aggregate", "rows-out", "> 0"), "rows out of the dataflow's aggregate")
	sql(t, ctx, "UPDATE orders SET amount = 40 WHERE id = 1", "ok", "UPDATE 1")
	waitFor(t, ctx, rowShown("changes", "alice", "42", "-1"), "the retraction (alice, 42) -1")
	waitFor(t, ctx, rowShown("contents", "alice", "52"), "the row now (alice, 52)")
	if got := textOf(t, ctx, "#contents-count"); got != "(3)" {
		t.Fatalf("the view page shows %s rows now, want (3)", got)
	}

	screenshot(t, ctx, "")

	// Long work shows a bar, on the overview and on the page of a view
	// being filled, until it ends. The fill runs in a session of its own,
	// over enough rows to be watched for a few seconds.
	// NB: not from the SQL box, whose statements are cancelled after 60
	// seconds: a slow machine may need longer.
	pgURL := "postgres://rockstream@" + srv.pg + "/default"
	bigRows := fillRows(srv.shards)
	if err := execute(pgURL, fmt.Sprintf("CREATE TABLE big (id int PRIMARY KEY, b int); INSERT INTO big SELECT g, g %% 97 FROM generate_series(1, %d) g", bigRows)); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.ID("sql-input")))
	if hidden := get(t, ctx, chromedp.Evaluate[bool](`document.getElementById("progress").hidden`)); !hidden {
		t.Fatalf("the overview shows progress with nothing running:\n%s", textOf(t, ctx, "#progress"))
	}
	type fill struct {
		err  error
		took time.Duration
	}
	filled := make(chan fill, 1)
	go func() {
		start := time.Now()
		err := execute(pgURL, "CREATE MATERIALIZED VIEW bigv AS SELECT b, count(*) AS n, max(id) AS top FROM big GROUP BY b")
		filled <- fill{err, time.Since(start).Round(time.Millisecond)}
	}()
	const bar = `#progress tr.progress-line[data-kind="backfill"][data-relation="bigv"] progress`
	waitFor(t, ctx, `!document.getElementById("progress").hidden && document.querySelector(`+strconv.Quote(bar)+`) !== null`, "the overview's bar of the fill of bigv", chromedp.WithPollingInterval(50*time.Millisecond))
	screenshot(t, ctx, "progress")
	if line := textOf(t, ctx, `#progress tr[data-relation="bigv"]`); !strings.Contains(line, "filling bigv") || !strings.Contains(line, "input rows") {
		t.Fatalf("the overview's progress line of the fill: %q", line)
	}
	click(t, ctx, `#progress tr[data-relation="bigv"] a`)
	do(t, ctx, chromedp.WaitReady(chromedp.ID("view-name")))
	// NB: rendered with the page, so seen at once if the fill still runs.
	if present := get(t, ctx, chromedp.Evaluate[bool](`document.querySelector(`+strconv.Quote(bar)+`) !== null`)); !present {
		select {
		case f := <-filled:
			t.Fatalf("the fill of bigv ended (after %s: %v) before its page showed it: make bigRows larger", f.took, f.err)
		default:
		}
		t.Fatalf("the page of bigv, being filled, shows no bar:\n%s", textOf(t, ctx, "main"))
	}
	screenshot(t, ctx, "view-progress")
	select {
	case f := <-filled:
		if f.err != nil {
			t.Fatalf("CREATE MATERIALIZED VIEW bigv: %v", f.err)
		}
		t.Logf("the fill of bigv took %s", f.took)
	case <-ctx.Done():
		t.Fatal("the fill of bigv did not end")
	}
	// Gone once the work ends, and the numbers count every row fed.
	waitFor(t, ctx, `document.getElementById("progress").hidden`, "the bar gone after the fill")
	waitFor(t, ctx, operatorRows("source big", "rows-in", fmt.Sprintf("=== %d", bigRows)), fmt.Sprintf("%d rows into the dataflow's source big", bigRows))
	waitFor(t, ctx, `document.querySelector("#view-status td.state")?.textContent === "running"`, "bigv running")
	// A view being filled cannot be subscribed to yet: its page subscribes
	// once the fill has ended.
	waitFor(t, ctx, `document.getElementById("live").dataset.state === "live"`, "the subscription to bigv to go live after its fill")
	screenshot(t, ctx, "view-filled")
}

// fillRows is the rows of the table the test fills a view from: enough
// for the fill to last the few seconds the test watches it. Over several
// shards the rows are first shipped to the view's shards, which takes far
// longer (500000 rows: 8 seconds on one shard, 96 over three, on two busy
// cores), so fewer do.
func fillRows(shards int) int {
	if shards > 1 {
		return 100000
	}
	return 500000
}

// execute runs statements in a session of their own.
func execute(url, statements string) error {
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(context.Background(), statements)
	return err
}

// operatorRows is a script that is true once the dataflow's operator
// named name has its count (class "rows-in" or "rows-out") satisfying
// condition ("=== 4", "> 0").
func operatorRows(name, class, condition string) string {
	return fmt.Sprintf(`[...document.querySelectorAll("#dataflow .op")].some((op) =>
		op.querySelector("b")?.textContent === %s && Number(op.querySelector(".%s")?.dataset.rows) %s)`, strconv.Quote(name), class, condition)
}

// rowShown is a script that is true once a row of table id has cells with
// every one of texts.
func rowShown(id string, texts ...string) string {
	quoted := make([]string, len(texts))
	for i, s := range texts {
		quoted[i] = strconv.Quote(s)
	}
	return fmt.Sprintf(`[...document.querySelectorAll("#%s tbody tr")].some((tr) => {
		const cells = [...tr.cells].map((td) => td.textContent);
		return [%s].every((want) => cells.includes(want));
	})`, id, strings.Join(quoted, ", "))
}

// textOf is the text of the element selector finds, read in one step of
// the page's script: the page may replace the element (its periodic and
// after-statement reloads) between a lookup and a read of the browser's
// node.
func textOf(t *testing.T, ctx context.Context, selector string) string {
	t.Helper()
	return get(t, ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%s)?.textContent ?? "(no element)"`, strconv.Quote(selector))))
}

// click clicks an element from the page's script rather than with the
// mouse: a reload above it can move it between the lookup of its position
// and the press.
func click(t *testing.T, ctx context.Context, selector string) {
	t.Helper()
	if !get(t, ctx, chromedp.Evaluate[bool](fmt.Sprintf(`(() => { const e = document.querySelector(%s); if (e) e.click(); return e !== null; })()`, strconv.Quote(selector)))) {
		t.Fatalf("no element %s to click", selector)
	}
}

// waitFor polls script in the page until it is true.
func waitFor(t *testing.T, ctx context.Context, script, what string, opts ...chromedp.PollOption) {
	t.Helper()
	waitCtx, cancel := context.WithTimeout(ctx, pollTimeout)
	defer cancel()
	if _, err := chromedp.Run(waitCtx, chromedp.Poll[bool](script, opts...)); err != nil {
		body, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main")))
		t.Fatalf("waiting for %s: %v\npage:\n%s", what, err, body)
	}
}

// server is a running RockStream server's addresses.
type server struct {
	pg, http string
	// shards is the shards of its store.
	shards int
}

// serve starts a server in-process with its HTTP listener on loopback,
// stopped when the test ends; opts may set authentication. A new store has
// ROCKSTREAM_TEST_SHARDS shards (default 1).
func serve(t *testing.T, opts ...func(*engine.ServerOptions)) server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan server, 1)
	done := make(chan error, 1)
	shards, err := enginetest.Shards()
	if err != nil {
		t.Fatal(err)
	}
	options := engine.ServerOptions{
		Storage: t.TempDir(), Listen: "127.0.0.1:0", HTTP: "127.0.0.1:0", Shards: shards,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Out: io.Discard,
		Ready: func(pg, h string) { ready <- server{pg, h, shards} },
	}
	for _, o := range opts {
		o(&options)
	}
	go func() { done <- engine.Serve(ctx, options) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case s := <-ready:
		return s
	case err := <-done:
		t.Fatalf("server did not start: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("server did not start")
	}
	return server{}
}

// chromium finds the browser, or fails the test saying how to install it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Fatal("the console's browser tests need Chromium: apt-get install -y chromium (or run bash .ci/install-deps)")
	return ""
}

// browse starts a headless browser for the test.
func browse(t *testing.T, path string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1000),
		// NB: the Chromium sandbox cannot start as root (CI runs as root).
		chromedp.NoSandbox,
		chromedp.DisableGPU,
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, browserTimeout)
	t.Cleanup(func() { cancelTimeout(); cancelBrowser(); cancelAlloc() })
	return ctx
}

// do runs browser steps, failing the test on an error.
func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// get runs one browser action and returns its value.
func get[T any](t *testing.T, ctx context.Context, action chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, action)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	return v
}

// sql types a statement into the SQL box, runs it and returns the text
// of the output once it is there; state is "ok" or "error", and the
// output must contain tag when it is not empty.
func sql(t *testing.T, ctx context.Context, statement, state, tag string) string {
	t.Helper()
	do(t, ctx,
		chromedp.Evaluate[chromedp.Void](`document.getElementById("sql-output").removeAttribute("data-state")`),
		chromedp.SetValue(chromedp.ID("sql-input"), statement),
	)
	click(t, ctx, "#sql-run")
	waitFor(t, ctx, `document.getElementById("sql-output").hasAttribute("data-state")`, "the result of "+statement)
	out := get(t, ctx, chromedp.Text(chromedp.ID("sql-output")))
	got := get(t, ctx, chromedp.AttributeValue(chromedp.ID("sql-output"), "data-state")).Value
	if got != state {
		t.Fatalf("%s: the SQL box says %s, want %s:\n%s", statement, got, state, out)
	}
	if tag != "" && !strings.Contains(out, tag) {
		t.Fatalf("%s: the output lacks %q:\n%s", statement, tag, out)
	}
	return out
}

// screenshot writes a full-page screenshot to $ROCKSTREAM_SCREENSHOT, or
// into the test's artifact directory (kept by go test -artifacts
// -outputdir=DIR), and logs where; a named one goes beside it
// (console-overview.png for console.png).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png := get(t, ctx, chromedp.FullScreenshot(100))
	path := os.Getenv("ROCKSTREAM_SCREENSHOT")
	if path == "" {
		// NB: kept with go test -artifacts (under -outputdir).
		path = filepath.Join(t.ArtifactDir(), "console.png")
	}
	if name != "" {
		ext := filepath.Ext(path)
		path = strings.TrimSuffix(path, ext) + "-" + name + ext
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatalf("writing the screenshot: %v", err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(png))
}
