package parse

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/rockstream/rockstream/errcode"
)

// describe renders a parse result for golden files.
func describe(stmts []Statement, err error) string {
	if err != nil {
		if e, ok := errcode.As(err); ok {
			return fmt.Sprintf("error %s (%s) position=%d: %s\n", e.State(), e.Code.ID, e.Position, e.Message)
		}
		return "untyped error: " + err.Error() + "\n"
	}
	var b strings.Builder
	for _, s := range stmts {
		switch s := s.(type) {
		case *PG:
			fmt.Fprintf(&b, "pg %T offset=%d: %s\n", s.Stmt.Node, s.Offset, s.SQL)
		case *CreateSource:
			fmt.Fprintf(&b, "create source %s rate=%d\n", s.Name, s.RatePerSecond)
			for _, c := range s.Columns {
				fmt.Fprintf(&b, "  %s type=%q gen=%d args=%v\n", c.Name, c.TypeSQL, c.Generator, c.Args)
			}
			for _, o := range s.Postgres {
				fmt.Fprintf(&b, "  postgres %s=%q\n", o.Key, o.Value.Text)
			}
		case *Subscribe:
			fmt.Fprintf(&b, "subscribe %s snapshot=%v asof=%d\n", s.Name, s.Snapshot, s.AsOfEpoch)
		case *ExplainIncremental:
			if s.Query != nil {
				fmt.Fprintf(&b, "explain incremental verbose=%v query offset=%d: %s\n", s.Verbose, s.Query.Offset, s.Query.SQL)
			} else {
				fmt.Fprintf(&b, "explain incremental verbose=%v name=%s\n", s.Verbose, s.Name)
			}
		case *ShowViewStatus:
			fmt.Fprintf(&b, "show view status name=%q\n", s.Name.String())
		}
	}
	return b.String()
}

func TestParse(t *testing.T) {
	datadriven.RunTest(t, "testdata/parse", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "parse":
			return describe(Parse(d.Input))
		}
		t.Fatalf("unknown command %s", d.Cmd)
		return ""
	})
}

// seedCorpus is shared by the fuzz target and TestFrontParserSeeds.
var seedCorpus = []string{
	"CREATE SOURCE demo.orders FROM GENERATE ROWS AS (order_id BIGINT GENERATED, product_id INT UNIFORM(1, 1000), price DECIMAL(10,2) UNIFORM(1.00, 500.00), region TEXT PICK('us-east', 'eu')) RATE = 100 PER SECOND",
	"SUBSCRIBE TO v WITH (SNAPSHOT)",
	"SUBSCRIBE v AS OF EPOCH 7",
	"EXPLAIN INCREMENTAL VERBOSE v",
	"EXPLAIN INCREMENTAL SELECT a, count(*) FROM t GROUP BY a",
	"SHOW VIEW STATUS",
	"SHOW VIEW STATUS x.y",
	"select 1; select 'a;b'; select $$;$$",
	"create source",
	"subscribe",
	"explain incremental",
	"SELECT 'unterminated",
	"/* unterminated",
	"CREATE SOURCE s FROM GENERATE ROWS (a INT PICK(",
	"CREATE SOURCE s FROM POSTGRES (connection = 'x', publication",
	"SUBSCRIBE \"V\" WITH (SNAPSHOT = false)",
	"select e'\\'' ; show view status",
}

func TestFrontParserSeeds(t *testing.T) {
	for _, s := range seedCorpus {
		checkNoPanicAndTyped(t, s)
	}
}

// checkNoPanicAndTyped asserts that Parse returns either statements or a
// coded error with a position inside the input.
func checkNoPanicAndTyped(t *testing.T, s string) {
	stmts, err := Parse(s)
	if err != nil {
		e, ok := errcode.As(err)
		if !ok {
			t.Fatalf("%q: untyped error %v", s, err)
		}
		if e.Position < 0 || e.Position > len([]rune(s))+1 {
			t.Fatalf("%q: position %d outside input", s, e.Position)
		}
		return
	}
	for _, st := range stmts {
		if pg, ok := st.(*PG); ok {
			if pg.Offset < 0 || pg.Offset+len(pg.SQL) > len(s) || s[pg.Offset:pg.Offset+len(pg.SQL)] != pg.SQL {
				t.Fatalf("%q: statement text %q does not sit at offset %d", s, pg.SQL, pg.Offset)
			}
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range seedCorpus {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkNoPanicAndTyped(t, s)
	})
}
