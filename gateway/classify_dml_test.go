package gateway

import "testing"

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
