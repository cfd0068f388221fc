package console_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestViewFreshnessShown: the overview and a view's page show a view's
// freshness target and whether it is met, and a view without a target
// its lag only.
func TestViewFreshnessShown(t *testing.T) {
	srv := serve(t)
	base := "http://" + srv.http
	_, answer := postSQL(t, base, "", "", "CREATE TABLE t (id int PRIMARY KEY); CREATE MATERIALIZED VIEW fresh WITH (freshness_target = '1s') AS SELECT count(*) FROM t; CREATE MATERIALIZED VIEW plain AS SELECT id FROM t")
	if answer.Error != nil {
		t.Fatalf("setting up: %+v", answer.Error)
	}
	if _, answer = postSQL(t, base, "", "", "SELECT * FROM fresh"); answer.Error != nil {
		t.Fatalf("reading the view: %+v", answer.Error)
	}
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", path, resp.StatusCode, body)
		}
		return string(body)
	}
	overview := get("/")
	for _, want := range []string{
		`<td class="freshness">target 00:00:01 met <span class="muted">(lag 00:00:00)</span></td>`,
		`<td class="freshness"><span class="muted">lag 00:00:00</span></td>`,
	} {
		if !strings.Contains(overview, want) {
			t.Fatalf("the overview lacks %q:\n%s", want, overview)
		}
	}
	if page := get("/console/view?name=fresh"); !strings.Contains(page, "target 00:00:01 met") {
		t.Fatalf("the view's page lacks its freshness:\n%s", page)
	}
}
