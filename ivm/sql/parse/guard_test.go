package parse_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/ivm/sql/parse"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// deepStatements are statements around the depth guard: the issue's
// reproducers (each killed the process with SIGSEGV inside pg_query) and
// statements of the same shapes that PostgreSQL 15 accepts.
func deepStatements() []struct {
	name string
	sql  string
} {
	return []struct {
		name string
		sql  string
	}{
		{"plus x25000", "SELECT " + strings.Repeat("1 + ", 25000) + "1"},
		{"plus x15000", "SELECT " + strings.Repeat("1 + ", 15000) + "1"},
		{"concat x100000", "SELECT " + strings.Repeat("'a' || ", 100000) + "'a'"},
		{"union x100000", strings.Repeat("SELECT 1 UNION ALL ", 100000) + "SELECT 1"},
		{"cast x30000", "SELECT 1" + strings.Repeat("::int", 30000)},
		{"plus x1000", "SELECT " + strings.Repeat("1 + ", 1000) + "1"},
		{"nested plus x1000", "SELECT " + strings.Repeat("(1+", 1000) + "1" + strings.Repeat(")", 1000)},
		{"and x10000", "SELECT 1 WHERE " + strings.Repeat("1 = 1 AND ", 10000) + "true"},
		{"values x10000", "SELECT count(*) FROM (VALUES " + strings.Repeat("(1, -1, 'a' || 'b'), ", 10000) + "(1, -1, 'a')) v"},
		{"in x50000", "SELECT 1 IN (" + strings.Repeat("1, ", 50000) + "1)"},
		{"case x500", "SELECT " + strings.Repeat("CASE WHEN true THEN ", 500) + "1" + strings.Repeat(" END", 500)},
		{"plus in a string", "SELECT '" + strings.Repeat("+ ", 50000) + "'"},
	}
}

// TestNestingGuardMatchesPostgres checks that every statement PostgreSQL
// 15 refuses with 54001 (stack depth limit exceeded) gets 54001 here too,
// before it reaches the C parser, and that the statements PostgreSQL
// accepts still parse.
func TestNestingGuardMatchesPostgres(t *testing.T) {
	ctx := context.Background()
	pg, err := pgx.Connect(ctx, pgtest.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(ctx)
	for _, c := range deepStatements() {
		t.Run(c.name, func(t *testing.T) {
			_, _, pgState, _ := pgtest.QueryText(ctx, pg, c.sql)
			if pgState != "" && pgState != "54001" {
				t.Fatalf("PostgreSQL answered %s; the case must be valid SQL or too deep", pgState)
			}
			_, err := parse.Parse(c.sql)
			got := ""
			if err != nil {
				e, ok := errcode.As(err)
				if !ok {
					t.Fatalf("untyped error %v", err)
				}
				got = e.State()
				if got == "54001" && (e.Code != errcode.SQLStatementTooComplex || e.Message != "stack depth limit exceeded") {
					t.Fatalf("54001 with %s %q", e.Code.ID, e.Message)
				}
			}
			if got != pgState {
				t.Fatalf("SQLSTATE %q, PostgreSQL %q (err %v)", got, pgState, err)
			}
		})
	}
}

// TestPGParseGuardsDirectCallers checks the entry the gateway uses.
func TestPGParseGuardsDirectCallers(t *testing.T) {
	_, err := parse.PGParse("SELECT " + strings.Repeat("1 + ", 25000) + "1")
	if e, ok := errcode.As(err); !ok || e.State() != "54001" {
		t.Fatalf("PGParse: %v, want 54001", err)
	}
	if _, err := parse.PGParse("SELECT " + strings.Repeat("1 + ", 1000) + "1"); err != nil {
		t.Fatal(err)
	}
}

// pgQueryParsers are pg_query's functions that run its C parser on text.
//
//lint:immutable a constant list.
var pgQueryParsers = []string{"Parse", "ParseToJSON", "ParseToProtobuf", "Normalize", "NormalizeUtility", "Fingerprint", "FingerprintToUInt64", "SplitWithParser", "ParsePlPgSqlToJSON"}

// TestPGParseIsTheOnlyEntry keeps the depth guard in one place: no
// package but this one's guard.go may call pg_query's parser on text.
func TestPGParseIsTheOnlyEntry(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	parsers := map[string]bool{}
	for _, p := range pgQueryParsers {
		parsers[p] = true
	}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if rel == filepath.Join("ivm", "sql", "parse", "guard.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		aliases := map[string]bool{}
		for _, imp := range f.Imports {
			if strings.HasPrefix(strings.Trim(imp.Path.Value, `"`), "github.com/pganalyze/pg_query_go") {
				name := "pg_query"
				if imp.Name != nil {
					name = imp.Name.Name
				}
				aliases[name] = true
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && aliases[id.Name] && parsers[sel.Sel.Name] {
				t.Errorf("%s: %s.%s bypasses the depth guard; call parse.PGParse", fset.Position(call.Pos()), id.Name, sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
