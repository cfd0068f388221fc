package wire

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"unsafe"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/runtime"
)

// The message lint (issue 16): messages are values. Two halves:
//   - every registered type passes CheckValueType (no func, chan,
//     unsafe.Pointer, hidden fields, or pointers to shared state);
//   - every type a non-test file sends, asks or replies as a literal is
//     registered (a go/ast scan), so no message escapes the registry.

// notYetValues are message types known to carry behaviour, with the
// change that turns them into values. Empty it, don't grow it.
//
//lint:immutable a fixed list read by the test.
var notYetValues = map[string]string{}

// TestMessagesAreValues: every registered message type is a value.
func TestMessagesAreValues(t *testing.T) {
	for _, m := range Messages() {
		if v := CheckValueType(reflect.TypeOf(m)); len(v) > 0 {
			t.Errorf("%T is not a value:\n  %s", m, strings.Join(v, "\n  "))
		}
	}
	if _, err := NewCodec(Messages()...); err != nil {
		t.Fatal(err)
	}
}

// Planted fixtures: each must fail the check.
type (
	plantedFunc      struct{ Done func(error) }
	plantedChan      struct{ Replies []chan int }
	plantedUnsafe    struct{ P unsafe.Pointer }
	plantedShared    struct{ Catalog *control.Snapshot }
	plantedHidden    struct{ n int }
	plantedNestedFun struct {
		Inner struct{ Callbacks map[string]func() }
	}
)

// TestPlantedNonValuesFail: the lint rejects a func, a chan, an
// unsafe.Pointer, a pointer to shared state and a hidden field, also when
// nested, and such a type cannot be registered.
func TestPlantedNonValuesFail(t *testing.T) {
	for _, m := range []runtime.Message{plantedFunc{}, plantedChan{}, plantedUnsafe{}, plantedShared{}, plantedHidden{}, plantedNestedFun{}} {
		v := CheckValueType(reflect.TypeOf(m))
		if len(v) == 0 {
			t.Errorf("%T passed the message lint", m)
			continue
		}
		t.Logf("%T: %s", m, v[0])
		if _, err := NewCodec(append(Messages(), m)...); err == nil {
			t.Errorf("%T was registered", m)
		}
	}
}

// TestEverySentTypeIsRegistered scans the non-test Go files of the packages
// whose actors exchange messages for literals sent, asked or replied, and
// checks each type is registered.
func TestEverySentTypeIsRegistered(t *testing.T) {
	root := repoRoot(t)
	c := Standard()
	var dirs []string
	for _, d := range []string{"actors", "engine", "sim/system", "runtime"} {
		dirs = append(dirs, filepath.Join(root, d))
	}
	sent := scanSent(t, dirs, false)
	if len(sent) < 10 {
		t.Fatalf("the scan found only %d sent types: it no longer recognises the call sites", len(sent))
	}
	for _, s := range sent {
		if _, ok := c.Type(s.name); ok {
			continue
		}
		if why, ok := notYetValues[s.name]; ok {
			t.Logf("%s: not yet a value (%s)", s.where, why)
			continue
		}
		t.Errorf("%s: %s is sent but not registered in wire.Messages", s.where, s.name)
	}
}

// TestScanFindsPlantedUnregistered: a planted file sending an unregistered
// type is reported (testdata/planted).
func TestScanFindsPlantedUnregistered(t *testing.T) {
	sent := scanSent(t, []string{filepath.Join("testdata", "planted")}, true)
	c := Standard()
	var unregistered []string
	for _, s := range sent {
		if _, ok := c.Type(s.name); !ok {
			unregistered = append(unregistered, s.name)
		}
	}
	sort.Strings(unregistered)
	want := "planted.Bogus planted.Hidden shard.NotAMessage"
	if got := strings.Join(unregistered, " "); got != want {
		t.Fatalf("unregistered types found in the planted file: %q, want %q", got, want)
	}
}

type sentType struct{ name, where string }

// sendCalls are the methods and functions that move a message: their
// composite-literal arguments are messages.
//
//lint:immutable a fixed set read by the test.
var sendCalls = map[string]bool{"Send": true, "Reply": true, "Ask": true, "AskAsync": true, "ask": true, "askAsync": true, "control": true, "req": true, "askDetached": true}

func scanSent(t *testing.T, dirs []string, testdata bool) []sentType {
	t.Helper()
	var out []sentType
	fset := token.NewFileSet()
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" && !testdata {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			pkg := f.Name.Name
			// Registered names use package names: an import renamed in
			// this file (sessionactor "…/actors/session") maps back.
			aliases := map[string]string{}
			for _, imp := range f.Imports {
				if imp.Name != nil {
					p := strings.Trim(imp.Path.Value, `"`)
					aliases[imp.Name.Name] = p[strings.LastIndex(p, "/")+1:]
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || !sendCalls[calledName(call.Fun)] {
					return true
				}
				if len(call.Args) > 0 {
					if self, ok := call.Args[0].(*ast.CallExpr); ok && calledName(self.Fun) == "Self" {
						return true // to itself: the message stays in the actor's memory
					}
				}
				for _, arg := range call.Args {
					// ctx.Reply(a.replyOf(X{...}, err)) sends X.
					if inner, ok := arg.(*ast.CallExpr); ok && calledName(inner.Fun) == "replyOf" && len(inner.Args) > 0 {
						arg = inner.Args[0]
					}
					if name, ok := literalType(arg, pkg); ok {
						if q, typ, found := strings.Cut(name, "."); found && aliases[q] != "" {
							name = aliases[q] + "." + typ
						}
						out = append(out, sentType{name: name, where: fset.Position(arg.Pos()).String()})
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func calledName(fun ast.Expr) string {
	switch f := fun.(type) {
	case *ast.SelectorExpr:
		return f.Sel.Name
	case *ast.Ident:
		return f.Name
	}
	return ""
}

// literalType names the type of a composite literal ("pkg.Type"; a local
// type gets the file's package name), or of &literal.
func literalType(e ast.Expr, pkg string) (string, bool) {
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = u.X
	}
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return "", false
	}
	switch ty := lit.Type.(type) {
	case *ast.Ident:
		return pkg + "." + ty.Name, true
	case *ast.SelectorExpr:
		if x, ok := ty.X.(*ast.Ident); ok {
			return x.Name + "." + ty.Sel.Name, true
		}
	case *ast.StructType:
		if ty.Fields == nil || len(ty.Fields.List) == 0 {
			return "struct {}", true
		}
	}
	return "", false
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
}
