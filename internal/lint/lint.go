package lint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// DeterministicDirs are the module-relative directories whose packages must
// obey STYLE.md rules 1–3 (ARCHITECTURE.md §3). A directory that does not
// exist yet is skipped, so the list can name packages before they land.
//
//lint:immutable a constant list; never assigned after init.
var DeterministicDirs = []string{"actors", "ivm", "slate", "sim", "faults", "buggify"}

// EdgeDirs are module-relative package directories inside DeterministicDirs
// that are edges by definition: they do real I/O or real concurrency on
// purpose, the deterministic core reaches them only through an interface,
// and only the binary's wiring and tests import them. The linter skips them
// (both the determinism rules and the forbidden-import rule). Each entry
// says why it is an edge; adding one is a design decision, not a way to
// silence a finding.
//
//lint:immutable a constant table; never assigned after init.
var EdgeDirs = map[string]string{
	"slate/objstore/fsstore":      "the filesystem backend: real files, fsync, flock(2) and cross-process races",
	"slate/objstore/s3store":      "the S3 backend: links the AWS SDK, net/http and crypto/tls",
	"slate/objstore/objstoretest": "the backend conformance suite: races real goroutines against real backends, imported only by tests",
}

// Rule names one determinism rule. Findings carry it so tests (and people)
// can tell violations apart.
type Rule string

// The rules this linter enforces.
const (
	RuleGoStatement     Rule = "go-statement"
	RuleSelect          Rule = "select"
	RuleWallClock       Rule = "wall-clock"
	RuleGlobalRand      Rule = "global-math-rand"
	RuleCryptoRand      Rule = "crypto-rand"
	RuleMutableGlobal   Rule = "package-level-var"
	RuleMapRange        Rule = "map-range"
	RuleBadAnnotation   Rule = "annotation-without-reason"
	RuleForbiddenImport Rule = "forbidden-import"
	annotationMapRange       = "//lint:maprange"
	annotationImmutable      = "//lint:immutable"
)

// Finding is one violation at one position.
type Finding struct {
	Pos     token.Position
	Rule    Rule
	Message string
}

func (f Finding) String() string {
	return fmt.Sprintf("%s:%d:%d: [%s] %s", f.Pos.Filename, f.Pos.Line, f.Pos.Column, f.Rule, f.Message)
}

// wallClockFuncs are the functions of package time that read or wait on the
// wall clock. Time comes from runtime.Context.Now and timers from
// runtime.Context.After.
//
//lint:immutable a constant set; never assigned after init.
var wallClockFuncs = map[string]bool{
	"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
	"AfterFunc": true, "Tick": true, "NewTimer": true, "NewTicker": true,
}

// randConstructors are the math/rand functions that build an explicitly
// seeded generator; every other package-level function uses the global
// source and is banned.
//
//lint:immutable a constant set; never assigned after init.
var randConstructors = map[string]bool{
	"New": true, "NewSource": true, "NewPCG": true, "NewChaCha8": true, "NewZipf": true,
}

// mapOrderFuncs are iterator functions of package maps that yield in map
// order; using one is a map range in disguise.
//
//lint:immutable a constant set; never assigned after init.
var mapOrderFuncs = map[string]bool{"Keys": true, "Values": true, "All": true}

// sentinelConstructors are calls whose result may initialise a package-level
// var without an annotation: error sentinels and registered error codes are
// never reassigned by convention.
//
//lint:immutable a constant set; never assigned after init.
var sentinelConstructors = map[string]bool{
	"errors.New": true,
	"fmt.Errorf": true,
	"github.com/rockstream/rockstream/errcode.Register": true,
}

// forbiddenImport is a package (or, with prefix set, a family of packages)
// the deterministic core must not link, even through another package.
type forbiddenImport struct {
	path   string
	prefix bool
	why    string
}

// forbiddenImports are what a deterministic package must never reach,
// directly or transitively. A package linked into the core can be called
// from it, so the only way to keep real I/O out of a simulation is to keep
// it out of the import graph; the edges (object-store backends, pgwire, the
// real runtime) reach the core through interfaces instead.
//
// NB: "net" is exact, not a prefix: net/url and net/netip parse and compare
// values without any I/O and stay allowed, while every net/... package that
// does talk to the network (net/http, net/rpc, net/smtp, net/textproto)
// imports net itself and is caught through it. net/http and crypto/tls are
// listed as well so that the finding names the nearest culprit.
//
//lint:immutable a constant table; never assigned after init.
var forbiddenImports = []forbiddenImport{
	{path: "net", why: "sockets and DNS: real network I/O the simulator cannot schedule or fault"},
	{path: "net/http", why: "an HTTP client or server: real network I/O"},
	{path: "crypto/tls", why: "TLS: real network I/O and crypto/rand handshakes"},
	{path: "os/exec", why: "spawning processes: effects outside the simulated world"},
	{path: "github.com/aws/", prefix: true, why: "the AWS SDK: network I/O, wall-clock retries and credential chains that read the environment and spawn processes"},
}

// forbidden returns why path may not be linked into a deterministic
// package, or "" if it may: it is one of forbiddenImports, or one of the
// EdgeDirs packages, which only the wiring and tests may import.
func (g *importGraph) forbidden(path string) string {
	if why, ok := g.edges[path]; ok {
		return "an edge package (" + why + "), for the wiring and tests only"
	}
	for _, f := range forbiddenImports {
		if path == f.path || (f.prefix && strings.HasPrefix(path, f.path)) {
			return f.why
		}
	}
	return ""
}

// importGraph maps each listed package to its direct (non-test) imports and
// memoises, per package, the shortest chain to a forbidden package.
type importGraph struct {
	imports map[string][]string
	chains  map[string][]string
	// edges maps the import path of each listed EdgeDirs package to why it
	// is an edge.
	edges map[string]string
}

// forbiddenChain returns the shortest import chain from path to a forbidden
// package (path first, the forbidden package last), or nil if none is
// reachable. Breadth-first over the import graph, visiting imports in their
// sorted order, so the chain reported is deterministic.
func (g *importGraph) forbiddenChain(path string) []string {
	if chain, ok := g.chains[path]; ok {
		return chain
	}
	parent := map[string]string{path: ""}
	queue := []string{path}
	var chain []string
	for len(queue) > 0 && chain == nil {
		next := queue[0]
		queue = queue[1:]
		if g.forbidden(next) != "" {
			for at := next; at != ""; at = parent[at] {
				chain = append([]string{at}, chain...)
			}
			break
		}
		for _, imp := range g.imports[next] {
			if _, seen := parent[imp]; !seen {
				parent[imp] = next
				queue = append(queue, imp)
			}
		}
	}
	g.chains[path] = chain
	return chain
}

// listedPackage is the part of `go list -json` output the linter reads.
type listedPackage struct {
	ImportPath string
	Dir        string
	Export     string
	GoFiles    []string
	CgoFiles   []string
	Imports    []string
	DepOnly    bool
	Error      *struct{ Err string }
}

// ModuleRoot returns the directory of the main module, found with `go env
// GOMOD` from dir.
func ModuleRoot(dir string) (string, error) {
	cmd := exec.Command("go", "env", "GOMOD")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("lint: not inside a Go module")
	}
	return filepath.Dir(gomod), nil
}

// DeterministicPatterns returns the `go list` patterns for the deterministic
// directories that exist under root.
func DeterministicPatterns(root string) []string {
	var patterns []string
	for _, dir := range DeterministicDirs {
		if st, err := os.Stat(filepath.Join(root, dir)); err == nil && st.IsDir() {
			patterns = append(patterns, "./"+dir+"/...")
		}
	}
	return patterns
}

// Check type-checks the packages matched by patterns (run from root) and
// returns every violation of the determinism rules in their non-test Go
// files, sorted by position. Test files are exempt: they never run inside a
// simulation.
func Check(root string, patterns ...string) ([]Finding, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	args := append([]string{"list", "-e", "-export", "-deps", "-json=ImportPath,Dir,Export,GoFiles,CgoFiles,Imports,DepOnly,Error"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w: %s", err, stderr.String())
	}
	exports := map[string]string{}
	graph := &importGraph{imports: map[string][]string{}, chains: map[string][]string{}, edges: map[string]string{}}
	var targets []listedPackage
	decoder := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := decoder.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decoding go list output: %w", err)
		}
		if p.Export != "" {
			exports[p.ImportPath] = p.Export
		}
		graph.imports[p.ImportPath] = p.Imports
		if why, ok := edgeReason(root, p.Dir); ok {
			graph.edges[p.ImportPath] = why
		}
		if !p.DepOnly {
			if _, ok := edgeReason(root, p.Dir); ok {
				continue
			}
			if p.Error != nil {
				return nil, fmt.Errorf("package %s: %s", p.ImportPath, p.Error.Err)
			}
			targets = append(targets, p)
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	var findings []Finding
	for _, p := range targets {
		fs, err := checkPackage(fset, imp, graph, p)
		if err != nil {
			return nil, err
		}
		findings = append(findings, fs...)
	}
	sort.SliceStable(findings, func(i, j int) bool {
		a, b := findings[i].Pos, findings[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	return findings, nil
}

// edgeReason reports whether the package in dir is one of EdgeDirs, and why.
func edgeReason(root, dir string) (string, bool) {
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return "", false
	}
	why, ok := EdgeDirs[filepath.ToSlash(rel)]
	return why, ok
}

func checkPackage(fset *token.FileSet, imp types.Importer, graph *importGraph, p listedPackage) ([]Finding, error) {
	var files []*ast.File
	for _, name := range append(append([]string(nil), p.GoFiles...), p.CgoFiles...) {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("parsing %s: %w", name, err)
		}
		files = append(files, f)
	}
	info := &types.Info{
		Types: map[ast.Expr]types.TypeAndValue{},
		Uses:  map[*ast.Ident]types.Object{},
	}
	// NB: type errors do not stop the lint (the build reports them); the
	// checker still records the types it could determine.
	conf := types.Config{Importer: imp, Error: func(error) {}, FakeImportC: true}
	_, _ = conf.Check(p.ImportPath, fset, files, info)
	var findings []Finding
	for _, f := range files {
		findings = append(findings, checkFile(fset, f, info)...)
	}
	findings = append(findings, checkImports(fset, graph, files)...)
	return findings, nil
}

// checkImports reports every import of a package's files that links a
// forbidden package, directly or transitively. Each imported path is
// reported once per package, at its first import spec, with the chain that
// leads to the forbidden package so the fix (an interface, or moving the
// dependency to an edge) is obvious.
func checkImports(fset *token.FileSet, graph *importGraph, files []*ast.File) []Finding {
	var findings []Finding
	reported := map[string]bool{}
	for _, f := range files {
		for _, spec := range f.Imports {
			path := strings.Trim(spec.Path.Value, `"`)
			if reported[path] {
				continue
			}
			chain := graph.forbiddenChain(path)
			if chain == nil {
				continue
			}
			reported[path] = true
			culprit := chain[len(chain)-1]
			what := "imports " + culprit
			if len(chain) > 1 {
				what = fmt.Sprintf("import of %s links %s (%s)", path, culprit, strings.Join(chain, " -> "))
			}
			message := fmt.Sprintf("%s: %s; a deterministic package must not link it, even transitively (reach it through an interface implemented at an edge)", what, graph.forbidden(culprit))
			findings = append(findings, Finding{Pos: fset.Position(spec.Pos()), Rule: RuleForbiddenImport, Message: message})
		}
	}
	return findings
}

// fileChecker holds the state of linting one file.
type fileChecker struct {
	fset     *token.FileSet
	file     *ast.File
	info     *types.Info
	comments map[int]string // line -> text of the //lint: comment on it
	findings []Finding
}

func checkFile(fset *token.FileSet, file *ast.File, info *types.Info) []Finding {
	c := &fileChecker{fset: fset, file: file, info: info, comments: map[int]string{}}
	for _, group := range file.Comments {
		for _, comment := range group.List {
			if strings.HasPrefix(comment.Text, "//lint:") {
				c.comments[fset.Position(comment.Slash).Line] = comment.Text
			}
		}
	}
	for _, spec := range file.Imports {
		if strings.Trim(spec.Path.Value, `"`) == "crypto/rand" {
			c.report(spec.Pos(), RuleCryptoRand, "crypto/rand is not reproducible; use ctx.Rand(name) or a seeded *rand.Rand")
		}
	}
	for _, decl := range file.Decls {
		if gen, ok := decl.(*ast.GenDecl); ok && gen.Tok == token.VAR {
			c.checkPackageVar(gen)
		}
	}
	ast.Inspect(file, c.visit)
	return c.findings
}

func (c *fileChecker) report(pos token.Pos, rule Rule, message string) {
	c.findings = append(c.findings, Finding{Pos: c.fset.Position(pos), Rule: rule, Message: message})
}

// annotation returns the reason given by annotation kind on the line of pos
// (a trailing comment) or on the line directly above it, and whether the
// annotation is present at all.
func (c *fileChecker) annotation(pos token.Pos, kind string) (reason string, present bool) {
	line := c.fset.Position(pos).Line
	for _, l := range []int{line, line - 1} {
		text, ok := c.comments[l]
		if !ok {
			continue
		}
		if text == kind || strings.HasPrefix(text, kind+" ") || strings.HasPrefix(text, kind+"\t") {
			return strings.TrimSpace(strings.TrimPrefix(text, kind)), true
		}
	}
	return "", false
}

// requireAnnotation reports rule at pos unless the annotation kind with a
// non-empty reason is present.
func (c *fileChecker) requireAnnotation(pos token.Pos, kind string, rule Rule, message string) {
	reason, present := c.annotation(pos, kind)
	switch {
	case !present:
		c.report(pos, rule, message)
	case reason == "":
		c.report(pos, RuleBadAnnotation, kind+" needs a reason after it")
	}
}

func (c *fileChecker) checkPackageVar(gen *ast.GenDecl) {
	for _, spec := range gen.Specs {
		vs := spec.(*ast.ValueSpec)
		if allBlank(vs.Names) || c.allSentinels(vs) {
			continue
		}
		// The annotation may sit above the spec or, for a grouped
		// declaration, above the `var (` that encloses it.
		pos := vs.Pos()
		if !c.hasAnnotation(pos, annotationImmutable) && gen.Lparen.IsValid() && c.hasAnnotation(gen.Pos(), annotationImmutable) {
			pos = gen.Pos()
		}
		if c.hasAnnotation(pos, annotationImmutable) {
			c.requireAnnotation(pos, annotationImmutable, RuleMutableGlobal, "")
			continue
		}
		names := make([]string, len(vs.Names))
		for i, n := range vs.Names {
			names[i] = n.Name
		}
		c.report(vs.Pos(), RuleMutableGlobal, fmt.Sprintf("package-level var %s is shared mutable state; pass it explicitly, or mark it `%s <why it is never mutated>`", strings.Join(names, ", "), annotationImmutable))
	}
}

func (c *fileChecker) hasAnnotation(pos token.Pos, kind string) bool {
	_, ok := c.annotation(pos, kind)
	return ok
}

func allBlank(names []*ast.Ident) bool {
	for _, n := range names {
		if n.Name != "_" {
			return false
		}
	}
	return true
}

// allSentinels reports whether every initialiser of vs is a call to an
// allowed sentinel constructor (errors.New, fmt.Errorf, errcode.Register).
func (c *fileChecker) allSentinels(vs *ast.ValueSpec) bool {
	if len(vs.Values) == 0 || len(vs.Values) != len(vs.Names) {
		return false
	}
	for _, v := range vs.Values {
		call, ok := ast.Unparen(v).(*ast.CallExpr)
		if !ok {
			return false
		}
		if c.isErrorValue(call) {
			continue // an error sentinel, however it is built
		}
		fn := c.calledFunc(call.Fun)
		if fn == nil || fn.Pkg() == nil || !sentinelConstructors[fn.Pkg().Path()+"."+fn.Name()] {
			return false
		}
	}
	return true
}

// isErrorValue reports whether expr's type implements error: error sentinels
// (e.g. errcode.New(...).WithSQLState(...)) are never reassigned by
// convention.
func (c *fileChecker) isErrorValue(expr ast.Expr) bool {
	t := c.info.Types[expr].Type
	if t == nil {
		return false
	}
	errorType := types.Universe.Lookup("error").Type().Underlying().(*types.Interface)
	return types.Implements(t, errorType)
}

// calledFunc returns the package-level function an expression names, or nil.
func (c *fileChecker) calledFunc(expr ast.Expr) *types.Func {
	var id *ast.Ident
	switch e := ast.Unparen(expr).(type) {
	case *ast.Ident:
		id = e
	case *ast.SelectorExpr:
		id = e.Sel
	default:
		return nil
	}
	fn, _ := c.info.Uses[id].(*types.Func)
	return fn
}

func (c *fileChecker) visit(node ast.Node) bool {
	switch n := node.(type) {
	case *ast.GoStmt:
		c.report(n.Pos(), RuleGoStatement, "go statement in a deterministic package; background work is a timer message (docs/architecture.md, the runtime contract)")
	case *ast.SelectStmt:
		c.report(n.Pos(), RuleSelect, "select in a deterministic package; actors receive one message at a time")
	case *ast.RangeStmt:
		if t := c.info.Types[n.X].Type; t != nil {
			if _, isMap := t.Underlying().(*types.Map); isMap {
				c.requireAnnotation(n.Pos(), annotationMapRange, RuleMapRange,
					fmt.Sprintf("range over a map; sort the keys, or mark the line above `%s <why order cannot leak>`", annotationMapRange))
			}
		}
	case *ast.Ident:
		// NB: identifiers, not selectors, so `time.Now` and a dot-imported
		// `Now` are both caught (a selector's Sel is an identifier too).
		c.checkFuncUse(n)
	}
	return true
}

func (c *fileChecker) checkFuncUse(sel *ast.Ident) {
	fn, ok := c.info.Uses[sel].(*types.Func)
	if !ok || fn.Pkg() == nil {
		return
	}
	if sig, ok := fn.Type().(*types.Signature); !ok || sig.Recv() != nil {
		return // a method, e.g. (*rand.Rand).IntN, is fine
	}
	switch fn.Pkg().Path() {
	case "time":
		if wallClockFuncs[fn.Name()] {
			c.report(sel.Pos(), RuleWallClock, fmt.Sprintf("time.%s reads the wall clock; use ctx.Now() / ctx.After()", fn.Name()))
		}
	case "math/rand", "math/rand/v2":
		if !randConstructors[fn.Name()] {
			c.report(sel.Pos(), RuleGlobalRand, fmt.Sprintf("rand.%s uses the global source; use ctx.Rand(name) or a seeded *rand.Rand", fn.Name()))
		}
	case "maps":
		if mapOrderFuncs[fn.Name()] {
			c.requireAnnotation(sel.Pos(), annotationMapRange, RuleMapRange,
				fmt.Sprintf("maps.%s yields in map order; sort, or mark the line above `%s <why order cannot leak>`", fn.Name(), annotationMapRange))
		}
	}
}
