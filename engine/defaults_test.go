package engine_test

import "testing"

// TestGenRandomUUIDDefault: a volatile DEFAULT (gen_random_uuid()) is
// evaluated per inserted row.
func TestGenRandomUUIDDefault(t *testing.T) {
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	exec(t, rs, "CREATE TABLE u (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), v int)")
	exec(t, rs, "INSERT INTO u (v) VALUES (1), (2)")
	got := rowsText(t, rs, "SELECT count(DISTINCT id), count(*) FROM u")
	if got[0] != "2|2" {
		t.Fatalf("got %v", got)
	}
}
