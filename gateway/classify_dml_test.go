package gateway

import (
	"reflect"
	"testing"
)

// TestPlainDMLFastPath: statements that skip the gateway's parse are
// exactly the ones the full classification sends to the engine unchanged.
func TestPlainDMLFastPath(t *testing.T) {
	for _, c := range []struct {
		sql  string
		fast bool
	}{
		{"INSERT INTO t VALUES (1)", true},
		{"  \n\tinsert into t values (1), (2)", true},
		{"UPDATE t SET a = 1", true},
		{"delete from t", true},
		{"SELECT 1; BEGIN", true},
		{"SELECT\n1", true},
		{"selectx", false},
		{"INSERT", false},
		{"BEGIN", false},
		{"COPY t FROM STDIN", false},
		{"/* c */ INSERT INTO t VALUES (1)", false},
		{"SET x = 1", false},
	} {
		if got := plainDML(c.sql); got != c.fast {
			t.Errorf("plainDML(%q) = %v, want %v", c.sql, got, c.fast)
		}
		if !c.fast {
			continue
		}
		// The full path (parse) must agree: an engine statement, unchanged.
		if st := classifyParsed(c.sql); st.kind != kindEngine || st.sql != c.sql {
			t.Errorf("classify(%q) = kind %v", c.sql, st.kind)
		}
	}
}

// TestClassifyHandsTreeToEngine: a statement classify parsed and sends to
// the engine carries its tree (so the engine does not parse it again);
// statements the gateway answers, and COPY of an extension (whose tree is
// of other text), carry none.
func TestClassifyHandsTreeToEngine(t *testing.T) {
	for _, c := range []struct {
		sql      string
		withTree bool
	}{
		{"CREATE TABLE t (a int PRIMARY KEY)", true},
		{"WITH x AS (SELECT 1) SELECT * FROM x", true},
		{"VALUES (1)", true},
		{"EXPLAIN SELECT 1", true},
		{"SHOW view_names_unknown_to_the_gateway", true},
		{"BEGIN", false},
		{"SET search_path = a", false},
		{"COPY t FROM STDIN", false},
		{"COPY (SUBSCRIBE v) TO STDOUT", false},
		{"SUBSCRIBE v", false}, // not PostgreSQL's grammar: the engine parses it
		{"SELECT 1", false},    // plain DML: not parsed here
	} {
		st := classify(c.sql)
		if got := st.tree != nil; got != c.withTree {
			t.Errorf("classify(%q): tree %v, want %v", c.sql, got, c.withTree)
			continue
		}
		if st.tree != nil && (st.kind != kindEngine || st.tree.Text != st.sql || len(st.tree.Result.Stmts) != 1) {
			t.Errorf("classify(%q): kind %v, tree of %q", c.sql, st.kind, st.tree.Text)
		}
	}
}

// TestTransactionKeywordsFastPath: BEGIN/COMMIT/ROLLBACK and their
// spellings are classified without a parse exactly as the parse would;
// anything else takes the parse.
func TestTransactionKeywordsFastPath(t *testing.T) {
	for _, sql := range []string{
		"BEGIN", "begin", "Begin Transaction", "BEGIN\n\tWORK", "START TRANSACTION", "COMMIT", "commit work",
		"END", "end transaction", "ROLLBACK", "rollback  work", "ABORT", "abort transaction",
	} {
		kind, fast := transactionKeywords(sql)
		parsed := classifyParsed(sql)
		if !fast {
			t.Errorf("%q: not on the fast path", sql)
		}
		if kind != parsed.kind || !reflect.DeepEqual(classify(sql), parsed) {
			t.Errorf("%q: fast %+v, parsed %+v", sql, classify(sql), parsed)
		}
	}
	for _, sql := range []string{
		"BEGIN ISOLATION LEVEL REPEATABLE READ", "BEGIN READ ONLY", "COMMIT AND CHAIN", "ROLLBACK TO s",
		"START", "BEGIN TRANSACTION WORK", "COMMIT WOR\u212a", "BEGIN\u00a0", "ROLLBACK PREPARED 'x'", "SAVEPOINT s",
	} {
		if _, fast := transactionKeywords(sql); fast {
			t.Errorf("%q: on the fast path", sql)
		}
	}
}
