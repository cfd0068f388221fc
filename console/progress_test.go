package console_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// copiedRows is the rows the test's COPY sends before it waits: one
// chunk of the server's.
const copiedRows = 10000

// TestProgressPartShowsCopy: a COPY FROM STDIN held open shows in the
// progress part (the overview's "Running now") with its table and rows,
// not in a view page's part, and the part is hidden again once the COPY
// ends. The COPY waits on the test, so nothing here depends on timing.
func TestProgressPartShowsCopy(t *testing.T) {
	srv := serve(t)
	base := "http://" + srv.http
	if _, answer := postSQL(t, base, "", "", "CREATE TABLE loaded (id int PRIMARY KEY)"); answer.Error != nil {
		t.Fatalf("creating the table: %+v", answer.Error)
	}
	part := func(query string) string {
		t.Helper()
		resp, err := http.Get(base + "/console/part/progress?" + query)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET the progress part: %d\n%s", resp.StatusCode, body)
		}
		return string(body)
	}
	if got := part("db=default"); !strings.Contains(got, `data-lines="0" hidden`) {
		t.Fatalf("the progress part with nothing running is not hidden:\n%s", got)
	}

	conn, err := pgx.Connect(context.Background(), "postgres://rockstream@"+srv.pg+"/default")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	reader, writer := io.Pipe()
	copied := make(chan error, 1)
	go func() {
		_, err := conn.PgConn().CopyFrom(context.Background(), reader, "COPY loaded FROM STDIN")
		copied <- err
	}()
	// NB: the server counts a COPY's rows as it hands them on, 10000 at
	// a time.
	var rows strings.Builder
	for id := 1; id <= copiedRows; id++ {
		fmt.Fprintf(&rows, "%d\n", id)
	}
	if _, err := io.WriteString(writer, rows.String()); err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?s)<tr class="progress-line" data-kind="copy" data-relation="loaded">.*?</tr>`)
	deadline := time.Now().Add(apiTimeout)
	var got string
	for {
		got = part("db=default")
		if m := line.FindString(got); strings.Contains(m, fmt.Sprintf(">%d rows", copiedRows)) {
			if !strings.Contains(m, "copy from") || !strings.Contains(m, "<progress></progress>") {
				t.Fatalf("the COPY's progress line lacks its direction or its open-ended bar:\n%s", m)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the progress part never showed the COPY's %d rows:\n%s", copiedRows, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if strings.Contains(got, " hidden") {
		t.Fatalf("the progress part showing a COPY is hidden:\n%s", got)
	}
	if other := part("db=default&view=loaded"); strings.Contains(other, "progress-line") {
		t.Fatalf("a view page's progress part shows a COPY:\n%s", other)
	}
	writer.Close()
	if err := <-copied; err != nil {
		t.Fatalf("COPY: %v", err)
	}
	if got := part("db=default"); !strings.Contains(got, `data-lines="0" hidden`) {
		t.Fatalf("the progress part is not hidden after the COPY ended:\n%s", got)
	}
}
