package gateway

import (
	"reflect"
	"strings"
	"testing"
)

// TestSplitFastPaths: splitStatements and onlyComments answer without the
// scanner for texts with no ';' or comment; the answers must be exactly
// the scanner's.
func TestSplitFastPaths(t *testing.T) {
	corpus := []string{
		"", " ", "\n\t ", "\u00a0", " \u00a0 ", "\v", "\f",
		"SELECT 1", "  SELECT 1  ", "\n\tselect 1\n", "SELECT 1\v", "\vSELECT 1",
		"INSERT INTO kv VALUES (12, 'x')", "SELECT v FROM kv WHERE id = 42",
		"SELEC 1", "FOO", "  foo bar  ", "BEGIN", "COMMIT", "VALUES (1)",
		"SELECT 'unterminated", "SELECT \"unterminated", "SELECT $$x", "SELECT E'a\\'b'",
		"SELECT 123abc", "SELECT \"\"", "SELECT 'a''b'", "SELECT '\u00e9t\u00e9'",
		"SELECT\u00a01", "\u00a0SELECT 1", "SELECT 1\u00a0", "SELECT $1", "SELECT 1 /",
		"SELECT 1;", "SELECT 1; SELECT 2", "-- c\nSELECT 1", "/* c */ SELECT 1", "SELECT 1 -- c",
		";", ";;", " ; ", "\u00a0;", "SELECT ';'",
		// A ';' at the end.
		"SELECT 1;", "SELECT 1 ;  ", " SELECT 1;\n", "SELECT 1;\v", "SELECT 1;;", "SELECT 1; ;", "SELECT 1;\u00a0",
		"INSERT INTO kv VALUES (12, 'x');", "SELECT v FROM kv WHERE id = 42;", "UPDATE kv SET v = 'y' WHERE id = 7;",
		"SELECT 'unterminated;", "SELECT 'a''b';", "SELECT 'a'';", "SELECT \"x\";", "SELECT \"unterminated;",
		"SELECT $$x;", "SELECT $1;", "SELECT E'a\\'b';", "SELECT E'ab';", "SELECT 123abc;", "SELECT 0x1F;", "SELECT 1e5;",
		"SELECT 1.5;", "SELECT 1_000;", "SELECT 1..2;", "SELECT t.1abc;", "SELECT x1abc;", "SELECT \"\";",
		"SELECT B'101';", "SELECT X'zz';", "SELECT U&'d0061t';", "SELECT 'é';", "SELEC 1;", "FOO;", "BEGIN;", "  ;",
		"SELECT 1 -- c;", "SELECT 1; -- c", "SELECT 1 /* ; */;", "VALUES (1), (2);", "SELECT '--';",
	}
	for _, sql := range []string{"SELECT 1", "SELECT 1;", "INSERT INTO kv VALUES (12, 'x');", " UPDATE kv SET v = 'y' WHERE id = 7 ;\n"} {
		if _, ok := singleStatement(sql); !ok {
			t.Errorf("%q: not split on the fast path", sql)
		}
	}
	for _, sql := range corpus {
		if fast, ok := singleStatement(sql); ok {
			if slow := splitScanned(sql); len(fast) != len(slow) || len(fast) > 0 && !reflect.DeepEqual(fast, slow) {
				t.Errorf("split(%q): fast %#v, scanner %#v", sql, fast, slow)
			}
		}
		// (Text of white space alone is empty either way.)
		if fast, slow := onlyComments(sql), strings.TrimSpace(sql) == "" || onlyCommentsScanned(sql); fast != slow {
			t.Errorf("onlyComments(%q): fast %v, scanner %v", sql, fast, slow)
		}
	}
}
