//go:build plantbug

package differential

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/correctness/harness"
)

// TestPlantedBugIsCaught shows that the differential tester catches a
// planted operator bug and shrinks it to a small script. It builds the
// differential test with a Go build overlay (go help build: -overlay) that
// replaces ivm/op/counting.go — the shared core of DISTINCT, UNION and
// INTERSECT/EXCEPT — with a copy where a retraction of multiplicity > 1 in
// one step is applied as a retraction of 1. The source tree is not touched.
//
//	go test -tags plantbug -run TestPlantedBugIsCaught -v ./correctness/differential
func TestPlantedBugIsCaught(t *testing.T) {
	root := harness.ModuleRoot()
	src := filepath.Join(root, "ivm", "op", "counting.go")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	const good = "\t\twLeft += d.dLeft\n"
	const bad = "\t\tif d.dLeft < -1 { // PLANTED BUG: a multi-row retraction counts once\n\t\t\td.dLeft = -1\n\t\t}\n\t\twLeft += d.dLeft\n"
	if strings.Count(string(b), good) != 1 {
		t.Fatalf("%s changed: cannot find %q to plant the bug; update this test", src, good)
	}
	dir := t.TempDir()
	buggy := filepath.Join(dir, "counting.go")
	if err := os.WriteFile(buggy, []byte(strings.Replace(string(b), good, bad, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ov, _ := json.Marshal(map[string]map[string]string{"Replace": {src: buggy}})
	ovPath := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ovPath, ov, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "test", "-overlay="+ovPath, "-count=1", "-run", "^TestDifferential$", "./correctness/differential", "-rapid.checks=1000")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	text := string(out)
	if err == nil {
		t.Fatalf("the differential tester did not catch the planted bug:\n%s", text)
	}
	i := strings.Index(text, "mismatch; self-contained reproduction")
	if i < 0 {
		t.Fatalf("the planted-bug run failed without a mismatch report:\n%s", text)
	}
	if k := strings.Index(text, "-rapid.failfile=\""); k >= 0 {
		rest := text[k+len("-rapid.failfile=\""):]
		if e := strings.Index(rest, "\""); e > 0 {
			_ = os.Remove(filepath.Join(root, "correctness", "differential", rest[:e]))
		}
	}
	report := text[i:]
	if j := strings.Index(report, "diff_test.go"); j > 0 {
		report = report[:j]
	}
	var stmts int
	for _, l := range strings.Split(report, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "--") && strings.HasSuffix(strings.SplitN(l, " -- ", 2)[0], ";") {
			stmts++
		}
	}
	t.Logf("caught and shrunk to %d statements:\n%s", stmts, report)
	if stmts > 12 {
		t.Errorf("the shrunk script has %d statements; expected a small script", stmts)
	}
}
