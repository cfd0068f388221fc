package console_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/engine"
)

// apiTimeout bounds one HTTP exchange of these tests.
const apiTimeout = 30 * time.Second

// sqlAnswer is the JSON of POST /console/api/sql, as a client reads it.
type sqlAnswer struct {
	Results []struct {
		Columns []string    `json:"columns"`
		Rows    [][]*string `json:"rows"`
		Tag     string      `json:"tag"`
	} `json:"results"`
	Error *struct {
		Code, SQLState, Message string
	} `json:"error"`
	Session     string `json:"session"`
	NewSession  bool   `json:"new_session"`
	Transaction string `json:"transaction"`
}

// value is the first value of the first result.
func (a sqlAnswer) value() string {
	if a.Error != nil || len(a.Results) == 0 || len(a.Results[0].Rows) == 0 || a.Results[0].Rows[0][0] == nil {
		return fmt.Sprintf("(no value: %+v)", a)
	}
	return *a.Results[0].Rows[0][0]
}

// postSQL runs statement through the console's SQL endpoint, with basic
// credentials when user is not empty, in a new session.
func postSQL(t *testing.T, base, user, password, statement string) (int, sqlAnswer) {
	t.Helper()
	return postSQLIn(t, base, user, password, "", statement)
}

// postSQLIn runs statement in the session of token ("new": in a new
// session kept for later statements, as the page asks).
func postSQLIn(t *testing.T, base, user, password, token, statement string) (int, sqlAnswer) {
	t.Helper()
	request := map[string]any{"sql": statement, "session": token}
	if token == "new" {
		request = map[string]any{"sql": statement, "keep_session": true}
	}
	body, _ := json.Marshal(request)
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", base+"/console/api/sql", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", statement, err)
	}
	defer resp.Body.Close()
	var answer sqlAnswer
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
			t.Fatalf("POST %s: reading the answer: %v", statement, err)
		}
	}
	return resp.StatusCode, answer
}

// TestConsoleWithPasswords checks that under --auth=password every page
// asks for a role's credentials and statements run as that role.
func TestConsoleWithPasswords(t *testing.T) {
	srv := serve(t, func(o *engine.ServerOptions) { o.Auth, o.BootstrapPassword = engine.AuthPassword, "bootstrap-secret" })
	base := "http://" + srv.http
	for _, tc := range []struct {
		user, password string
		status         int
	}{{"", "", 401}, {"rockstream", "wrong", 401}, {"nosuchrole", "bootstrap-secret", 401}, {"rockstream", "bootstrap-secret", 200}} {
		req, _ := http.NewRequest("GET", base+"/", nil)
		if tc.user != "" {
			req.SetBasicAuth(tc.user, tc.password)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Fatalf("GET / as %q/%q: status %d, want %d", tc.user, tc.password, resp.StatusCode, tc.status)
		}
		if tc.status == 200 && !strings.Contains(string(page), "RockStream console") {
			t.Fatalf("GET / as %s is not the console:\n%s", tc.user, page)
		}
	}
	if status, _ := postSQL(t, base, "", "", "SELECT 1"); status != 401 {
		t.Fatalf("the SQL endpoint without credentials answered %d, want 401", status)
	}
	_, answer := postSQL(t, base, "rockstream", "bootstrap-secret", "CREATE ROLE reader LOGIN PASSWORD 'reader-secret'; CREATE TABLE secrets (id int PRIMARY KEY)")
	if answer.Error != nil {
		t.Fatalf("as the superuser: %+v", answer.Error)
	}
	_, answer = postSQL(t, base, "reader", "reader-secret", "SELECT current_user")
	if answer.Error != nil || len(answer.Results) != 1 || *answer.Results[0].Rows[0][0] != "reader" {
		t.Fatalf("SELECT current_user as reader: %+v", answer)
	}
	// A session is its role's: another role's token opens a new one.
	_, superuser := postSQLIn(t, base, "rockstream", "bootstrap-secret", "new", "SELECT 1")
	_, answer = postSQLIn(t, base, "reader", "reader-secret", superuser.Session, "SELECT current_user")
	if !answer.NewSession || answer.Session == superuser.Session || answer.value() != "reader" {
		t.Fatalf("reader with the superuser's session token: %+v", answer)
	}
	// The role's privileges apply: reader has no grant on secrets.
	_, answer = postSQL(t, base, "reader", "reader-secret", "SELECT * FROM secrets")
	if answer.Error == nil || answer.Error.SQLState != "42501" || !strings.HasPrefix(answer.Error.Code, "RS-") {
		t.Fatalf("reading a table without a grant: %+v, want 42501 with an RS code", answer.Error)
	}
}

// TestSubscribeStream reads the server-sent events of a view's changes
// with a plain HTTP client: the columns, the snapshot, a progress event,
// then the changes of a later commit; on one shard and on three (the view
// then reads tables of other shards).
func TestSubscribeStream(t *testing.T) {
	for _, shards := range []int{1, 3} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			srv := serve(t, func(o *engine.ServerOptions) { o.Shards = shards })
			testSubscribeStream(t, "http://"+srv.http)
		})
	}
}

func testSubscribeStream(t *testing.T, base string) {
	if _, answer := postSQL(t, base, "", "", `CREATE TABLE t (id int PRIMARY KEY, "Name" text);
		INSERT INTO t VALUES (1, 'one');
		CREATE MATERIALIZED VIEW "Odd View" AS SELECT "Name", id * 10 AS tens FROM t`); answer.Error != nil {
		t.Fatalf("setup: %+v", answer.Error)
	}
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	streamCtx, closeStream := context.WithCancel(ctx)
	defer closeStream()
	req, _ := http.NewRequestWithContext(streamCtx, "GET", base+"/console/api/subscribe?view=Odd+View", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("the stream's type is %q", ct)
	}
	events := bufio.NewScanner(resp.Body)
	next := func() (string, string) {
		t.Helper()
		var event, data string
		for events.Scan() {
			line := events.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = strings.TrimPrefix(line, "data: ")
			case line == "" && event != "":
				return event, data
			}
		}
		t.Fatalf("the stream ended: %v", events.Err())
		return "", ""
	}
	expect := func(wantEvent, wantData string) {
		t.Helper()
		event, data := next()
		if event != wantEvent || (wantData != "" && !strings.Contains(data, wantData)) {
			t.Fatalf("event %s %s, want %s containing %s", event, data, wantEvent, wantData)
		}
	}
	expect("columns", `{"columns":["Name","tens"]}`)
	expect("change", `"diff":1,"row":["one","10"]`)
	expect("progress", `"epoch"`)
	if _, answer := postSQL(t, base, "", "", "UPDATE t SET id = 2 WHERE id = 1"); answer.Error != nil {
		t.Fatalf("update: %+v", answer.Error)
	}
	// The update is a retraction and an insertion in one epoch (in
	// either order), then that epoch's progress.
	seen := map[string]bool{}
	for len(seen) < 2 {
		event, data := next()
		switch {
		case event == "change" && strings.Contains(data, `"diff":-1,"row":["one","10"]`):
			seen["-"] = true
		case event == "change" && strings.Contains(data, `"diff":1,"row":["one","20"]`):
			seen["+"] = true
		case event == "progress":
		default:
			t.Fatalf("unexpected event %s %s", event, data)
		}
	}

	// The stream is a session of its own while it is open, and closing
	// the page's end of it ends that session.
	if n := subscribeSessions(t, base); n != "1" {
		t.Fatalf("%s console sessions run SUBSCRIBE while one stream is open", n)
	}
	closeStream()
	for deadline := time.Now().Add(apiTimeout); subscribeSessions(t, base) != "0"; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the SUBSCRIBE session is still there %s after the stream was closed", apiTimeout)
		}
	}

	// A view that does not exist ends the stream with a failure event
	// carrying the engine's error.
	req, _ = http.NewRequestWithContext(ctx, "GET", base+"/console/api/subscribe?view=nope", nil)
	resp2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	events = bufio.NewScanner(resp2.Body)
	expect("failure", `"code":"RS-`)
}

// subscribeSessions counts the console's sessions running SUBSCRIBE.
func subscribeSessions(t *testing.T, base string) string {
	t.Helper()
	_, answer := postSQL(t, base, "", "", "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'rockstream console' AND query LIKE 'SUBSCRIBE%'")
	if answer.Error != nil || len(answer.Results) != 1 {
		t.Fatalf("reading pg_stat_activity: %+v", answer)
	}
	return *answer.Results[0].Rows[0][0]
}

// TestTabSession checks that the SQL box of a tab keeps its session: SET
// and an open transaction carry over to the next statement, and other
// sessions do not see the transaction's writes until it commits.
func TestTabSession(t *testing.T) {
	srv := serve(t)
	base := "http://" + srv.http
	// Without a token nor keep_session a statement's session ends with it.
	if _, once := postSQL(t, base, "", "", "SELECT 1"); once.Session != "" {
		t.Fatalf("a one-off statement kept its session: %+v", once)
	}
	_, first := postSQLIn(t, base, "", "", "new", "CREATE TABLE kv (k int PRIMARY KEY, v text); SET statement_timeout = '7s'")
	if first.Error != nil || first.Session == "" || !first.NewSession || first.Transaction != "idle" {
		t.Fatalf("first statement: %+v", first)
	}
	token := first.Session
	in := func(statement string) sqlAnswer {
		t.Helper()
		_, answer := postSQLIn(t, base, "", "", token, statement)
		if answer.Error != nil || answer.Session != token || answer.NewSession {
			t.Fatalf("%s in the tab's session: %+v", statement, answer)
		}
		return answer
	}
	if got := in("SHOW statement_timeout").value(); got != "7s" {
		t.Fatalf("SET did not carry over: statement_timeout is %s", got)
	}
	if tx := in("BEGIN; INSERT INTO kv VALUES (1, 'pending')").Transaction; tx != "in transaction" {
		t.Fatalf("after BEGIN the session is %q", tx)
	}
	if got := in("SELECT count(*) FROM kv").value(); got != "1" {
		t.Fatalf("the transaction does not see its own insert: %s", got)
	}
	if _, other := postSQL(t, base, "", "", "SELECT count(*) FROM kv"); other.value() != "0" {
		t.Fatalf("another session sees the uncommitted insert: %+v", other)
	}
	if tx := in("COMMIT").Transaction; tx != "idle" {
		t.Fatalf("after COMMIT the session is %q", tx)
	}
	if _, other := postSQL(t, base, "", "", "SELECT count(*) FROM kv"); other.value() != "1" {
		t.Fatalf("another session does not see the committed insert: %+v", other)
	}
	// The sessions kept are bounded: opening eight more closes the least
	// recently used, this one.
	for i := 0; i < 8; i++ {
		if _, answer := postSQLIn(t, base, "", "", "new", "SELECT 1"); !answer.NewSession {
			t.Fatalf("a new session: %+v", answer)
		}
	}
	if _, answer := postSQLIn(t, base, "", "", token, "SHOW statement_timeout"); !answer.NewSession || answer.value() == "7s" {
		t.Fatalf("the least recently used session was kept past the bound: %+v", answer)
	}
	// An unknown token opens a new session.
	if _, answer := postSQLIn(t, base, "", "", "feedface", "SHOW statement_timeout"); !answer.NewSession || answer.value() == "7s" {
		t.Fatalf("an unknown token: %+v", answer)
	}
}
