package parse

import (
	"testing"

	"google.golang.org/protobuf/proto"
)

// TestParseReusing: given the tree PGParse made of a statement's text,
// ParseReusing answers exactly as Parse and takes that tree instead of
// parsing again; a tree of other text is ignored.
func TestParseReusing(t *testing.T) {
	for _, sql := range []string{
		"SELECT 1",
		"CREATE TABLE t (a int PRIMARY KEY, b text)",
		"WITH x AS (SELECT 1 AS a) SELECT a FROM x",
		"VALUES (1, 'a'), (2, 'b')",
		"EXPLAIN SELECT * FROM t WHERE a = $1",
		"SELECT 'é' || $1 -- trailing comment",
		"DROP TABLE t",
	} {
		tree, err := PGParse(sql)
		if err != nil {
			t.Fatalf("PGParse(%q): %v", sql, err)
		}
		want, err := Parse(sql)
		if err != nil {
			t.Fatalf("Parse(%q): %v", sql, err)
		}
		got, err := ParseReusing(sql, &Tree{Text: sql, Result: tree})
		if err != nil || len(got) != 1 || len(want) != 1 {
			t.Fatalf("ParseReusing(%q) = %d statements, %v", sql, len(got), err)
		}
		g, w := got[0].(*PG), want[0].(*PG)
		if g.Stmt != tree.Stmts[0].Stmt {
			t.Errorf("ParseReusing(%q) parsed again instead of taking the tree", sql)
		}
		if g.SQL != w.SQL || g.Offset != w.Offset || !proto.Equal(g.Stmt, w.Stmt) {
			t.Errorf("ParseReusing(%q) = %q@%d %v, Parse = %q@%d %v", sql, g.SQL, g.Offset, g.Stmt, w.SQL, w.Offset, w.Stmt)
		}
		// Another text's tree is not taken.
		other, _ := PGParse("SELECT 2")
		got, err = ParseReusing(sql, &Tree{Text: "SELECT 2", Result: other})
		if err != nil || !proto.Equal(got[0].(*PG).Stmt, w.Stmt) {
			t.Errorf("ParseReusing(%q) with another text's tree = %v, %v", sql, got, err)
		}
	}
	// The checks before pg_query still run: an error stays Parse's.
	bad := "SELECT 1\x00"
	tree, _ := PGParse("SELECT 1")
	if _, err := ParseReusing(bad, &Tree{Text: bad, Result: tree}); err == nil {
		t.Errorf("ParseReusing(%q) took the tree past the NUL check", bad)
	}
}
