package lint

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestDeterministicPackages is the lint itself: every deterministic package
// in the module must obey STYLE.md rules 1–3.
func TestDeterministicPackages(t *testing.T) {
	root := moduleRoot(t)
	patterns := DeterministicPatterns(root)
	if len(patterns) == 0 {
		t.Fatal("no deterministic package directories found; is the module root right?")
	}
	findings, err := Check(root, patterns...)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		t.Errorf("%s", f)
	}
	if len(findings) > 0 {
		t.Logf("annotations: `//lint:maprange <why order cannot leak>` on or directly above the range; `//lint:immutable <why>` directly above the var")
	}
}

// TestRuntimeInterfaceLinksNoEdges: runtime/ is the contract every actor
// imports, so it is part of the core even though it sits outside the
// deterministic directories; only runtime/real, the goroutine runtime, is an
// edge. A forbidden import there would reach every actor.
func TestRuntimeInterfaceLinksNoEdges(t *testing.T) {
	root := moduleRoot(t)
	findings, err := Check(root, "./runtime")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		if f.Rule == RuleForbiddenImport {
			t.Errorf("%s", f)
		}
	}
}

var wantPattern = regexp.MustCompile(`// want ([a-z-]+)`)

// wantedFindings reads the `// want <rule>` comments of a fixture file.
func wantedFindings(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []string
	scanner := bufio.NewScanner(f)
	for line := 1; scanner.Scan(); line++ {
		if m := wantPattern.FindStringSubmatch(scanner.Text()); m != nil {
			want = append(want, fmt.Sprintf("%d:%s", line, m[1]))
		}
	}
	return want
}

func gotFindings(findings []Finding) []string {
	var got []string
	for _, f := range findings {
		got = append(got, fmt.Sprintf("%d:%s", f.Pos.Line, f.Rule))
	}
	sort.Strings(got)
	return got
}

// TestPlantedFixture checks the linter reports exactly the violations planted
// in testdata/fixture/planted (one of each rule) and nothing else.
func TestPlantedFixture(t *testing.T) {
	checkPlanted(t, "planted", 10)
}

// checkPlanted lints the fixture package testdata/fixture/<dir> and checks
// the findings are exactly its `// want <rule>` comments, of which there must
// be at least wantMin (so a fixture cannot lose its violations unnoticed).
func checkPlanted(t *testing.T, dir string, wantMin int) []Finding {
	t.Helper()
	findings, err := Check(moduleRoot(t), "./internal/lint/testdata/fixture/"+dir)
	if err != nil {
		t.Fatal(err)
	}
	want := wantedFindings(t, filepath.Join("testdata", "fixture", filepath.FromSlash(dir), filepath.Base(dir)+".go"))
	sort.Strings(want)
	got := gotFindings(findings)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("findings differ\ngot:\n%s\nwant:\n%s\nall findings:\n%v", strings.Join(got, "\n"), strings.Join(want, "\n"), findings)
	}
	if len(want) < wantMin {
		t.Fatalf("fixture %s lost its planted violations: only %d want comments", dir, len(want))
	}
	return findings
}

// TestPlantedTimeNowFails is the acceptance check of issue 2: a planted
// time.Now() in a deterministic package makes the lint fail.
func TestPlantedTimeNowFails(t *testing.T) {
	root := moduleRoot(t)
	findings, err := Check(root, "./internal/lint/testdata/fixture/planted")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		if f.Rule == RuleWallClock && strings.Contains(f.Message, "time.Now") {
			return
		}
	}
	t.Fatalf("planted time.Now() not reported; findings: %v", findings)
}

// TestCleanFixture checks that code following the rules (sorted map keys,
// seeded generators, sentinel errors, a passed-in time) is not reported.
func TestCleanFixture(t *testing.T) {
	root := moduleRoot(t)
	findings, err := Check(root, "./internal/lint/testdata/fixture/clean")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		t.Errorf("unexpected finding: %s", f)
	}
}

// TestPlantedImports checks the forbidden-import rule reports exactly the
// imports planted in testdata/fixture/imports/planted: direct imports of
// net, net/http, os/exec and the AWS SDK, and transitive links through
// net/smtp (to net) and a helper package (to crypto/tls), an AWS package that
// links no network package itself (the prefix rule), an import of an edge
// package (fsstore), while net/url and net/netip, which do no I/O, stay
// allowed.
func TestPlantedImports(t *testing.T) {
	findings := checkPlanted(t, "imports/planted", 8)
	// The transitive findings must name the chain, or nobody can fix them.
	for _, chain := range []string{
		"fixture/imports/relay -> crypto/tls",
		"net/smtp -> ",
		"imports github.com/rockstream/rockstream/slate/objstore/fsstore: an edge package",
		"imports github.com/aws/smithy-go/ptr: the AWS SDK",
	} {
		found := false
		for _, f := range findings {
			found = found || strings.Contains(f.Message, chain)
		}
		if !found {
			t.Errorf("no finding names the chain %q; findings: %v", chain, findings)
		}
	}
}

// TestEdgeDirs keeps the list of edges honest: every entry names an existing
// package under a deterministic directory and says why it is an edge.
func TestEdgeDirs(t *testing.T) {
	root := moduleRoot(t)
	for dir, why := range EdgeDirs {
		if strings.TrimSpace(why) == "" {
			t.Errorf("EdgeDirs[%q] gives no reason", dir)
		}
		underDeterministic := false
		for _, d := range DeterministicDirs {
			underDeterministic = underDeterministic || strings.HasPrefix(dir, d+"/")
		}
		if !underDeterministic {
			t.Errorf("EdgeDirs[%q] is not under a deterministic directory; it needs no entry", dir)
		}
		goFiles, _ := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if len(goFiles) == 0 {
			t.Errorf("EdgeDirs[%q] holds no Go package", dir)
		}
	}
}
