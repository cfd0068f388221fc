package slt

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/correctness/harness"
)

var (
	//lint:immutable set once by the flag package
	fullFlag = flag.Bool("slt.full", os.Getenv("ROCKSTREAM_CORRECTNESS_FULL") != "", "run every query of every corpus file (also ROCKSTREAM_CORRECTNESS_FULL=1)")
	//lint:immutable set once by the flag package
	updateFlag = flag.Bool("slt.update", false, "add newly passing sampled queries to testdata/expected-pass-*.txt")
	//lint:immutable set once by the flag package
	filesFlag = flag.String("slt.files", "", "only files whose path contains this substring")
	//lint:immutable set once by the flag package
	queriesFlag = flag.Int("slt.queries", ciQueries, "query records sampled per file (evenly spread) when not -slt.full")
	//lint:immutable set once by the flag package
	allFilesFlag = flag.Bool("slt.allfiles", false, "sample every corpus file, not only the CI set")
	//lint:immutable set once by the flag package
	skipFlag = flag.String("slt.skip", "", "skip files whose path contains this substring")
	//lint:immutable set once by the flag package
	reportFlag = flag.String("slt.report", "", "write every query outcome (TSV) to this file + .adhoc / .ivm")
)

// ciFiles is the bounded CI sample: every corpus file except the big
// index/view and index/delete ones (thousands of statements each), which
// run with -slt.full. ciQueries is the number of query records sampled per
// file (evenly spread). select5.test (10- to 64-way joins) is in: join
// reordering (opt.ReorderJoins) keeps its joins free of cross products.
const ciQueries = 30

func ciFile(path string) bool {
	return !strings.Contains(path, "index/view/") && !strings.Contains(path, "index/delete/") || strings.HasSuffix(path, "index/delete/10/slt_good_0.test")
}

func corpusFiles(t *testing.T, root string) []string {
	var files []string
	for _, corpus := range []string{"sqlite", "risingwave"} {
		f, err := os.Open(filepath.Join(root, corpus, "MANIFEST.tsv"))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		first := true
		for sc.Scan() {
			if first {
				first = false
				continue
			}
			p := strings.Split(sc.Text(), "\t")[0]
			if p != "" {
				files = append(files, p)
			}
		}
		f.Close()
	}
	return files
}

func expectedPath(mode Mode) string {
	return filepath.Join("testdata", "expected-pass-"+string(mode)+".txt")
}

func readExpected(t *testing.T, mode Mode) map[string]bool {
	out := map[string]bool{}
	b, err := os.ReadFile(expectedPath(mode))
	if err != nil {
		if os.IsNotExist(err) {
			return out
		}
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out[l] = true
		}
	}
	return out
}

func TestSQLLogicTestAdHoc(t *testing.T) { runCorpora(t, AdHoc) }

func TestSQLLogicTestIVM(t *testing.T) { runCorpora(t, IVM) }

func runCorpora(t *testing.T, mode Mode) {
	harness.LogShards(t)
	root := harness.CorpusDir(t)
	expected := readExpected(t, mode)
	passing := map[string]bool{}
	var report []string
	classes := map[string]int{}
	var tp, tf, ts int
	for _, path := range corpusFiles(t, root) {
		if *filesFlag != "" && !strings.Contains(path, *filesFlag) {
			continue
		}
		if *skipFlag != "" && strings.Contains(path, *skipFlag) {
			continue
		}
		if !*fullFlag && !*allFilesFlag && !ciFile(path) {
			continue
		}
		recs, d, err := ParseFile(filepath.Join(root, path))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		total := 0
		for _, r := range recs {
			if r.Kind == KQuery {
				total++
			}
		}
		opt := Options{Mode: mode}
		if n := *queriesFlag; !*fullFlag && total > n {
			stride := (total + n - 1) / n
			opt.Select = func(o int) bool { return o%stride == 0 }
		}
		srv, err := harness.Start("memory://")
		if err != nil {
			t.Fatal(err)
		}
		conn := harness.Dial(t, "rockstream", srv.URL)
		res := Run(conn, recs, d, opt)
		srv.Stop()
		p, f, s := res.Counts()
		tp, tf, ts = tp+p, tf+f, ts+s
		fmt.Fprintf(os.Stderr, "%-62s %s pass=%d fail=%d skip=%d\n", path, mode, p, f, s)
		t.Logf("%-62s %s pass=%d fail=%d skip=%d stmts=%d stmt-fail=%d adapted=%d %s", path, mode, p, f, s, res.Statements, len(res.StmtFailed), res.Adapted, res.Aborted)
		for _, q := range res.Queries {
			key := fmt.Sprintf("%s:%d", path, q.Line)
			if q.Class == Pass {
				passing[key] = true
			}
			if q.Class != Skipped || q.Detail != "sample" {
				report = append(report, fmt.Sprintf("%s\tquery\t%s\t%v\t%s", key, q.Class, q.Backfil, q.Detail))
			}
			if q.Class != Pass && q.Class != Skipped {
				classes[q.Class+" "+causeKey(q.Detail)]++
			}
			if expected[key] && q.Class != Pass && !(q.Class == Skipped && q.Detail == "sample") {
				t.Errorf("%s (%s): listed as passing in %s, now %s: %s", key, mode, expectedPath(mode), q.Class, q.Detail)
			}
		}
		for _, s := range res.StmtFailed {
			report = append(report, fmt.Sprintf("%s:%d\tstatement\t%s\t\t%s", path, s.Line, s.Class, s.Detail))
		}
	}
	runnable := tp + tf
	pct := 0.0
	if runnable > 0 {
		pct = 100 * float64(tp) / float64(runnable)
	}
	t.Logf("TOTAL %s: pass=%d fail=%d skip=%d (%.1f%% of runnable)", mode, tp, tf, ts, pct)
	keys := make([]string, 0, len(classes))
	//lint:maprange keys are sorted below
	for k := range classes {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		return classes[keys[a]] > classes[keys[b]] || classes[keys[a]] == classes[keys[b]] && keys[a] < keys[b]
	})
	for _, k := range keys {
		t.Logf("  %5d  %s", classes[k], k)
	}
	var newly []string
	//lint:maprange sorted below
	for k := range passing {
		if !expected[k] {
			newly = append(newly, k)
		}
	}
	sort.Strings(newly)
	if len(newly) > 0 {
		t.Logf("%d queries pass that are not in %s (run with -slt.update to add them)", len(newly), expectedPath(mode))
	}
	if *updateFlag && len(newly) > 0 {
		all := make([]string, 0, len(expected)+len(newly))
		//lint:maprange sorted below
		for k := range expected {
			all = append(all, k)
		}
		all = append(all, newly...)
		sort.Strings(all)
		hdr := "# Queries (corpus path:line) known to pass in " + string(mode) + " mode. This list may only grow:\n# the test fails when a listed query fails. Regenerate additions with\n# go test ./correctness/slt -run TestSQLLogicTest -slt.update\n"
		if err := os.WriteFile(expectedPath(mode), []byte(hdr+strings.Join(all, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if *reportFlag != "" {
		if err := os.WriteFile(*reportFlag+"."+string(mode), []byte(strings.Join(report, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// causeKey shortens an error detail to a grouping key.
func causeKey(d string) string {
	if i := strings.Index(d, " :: "); i >= 0 {
		d = d[:i]
	}
	if strings.HasPrefix(d, "got ") || strings.HasPrefix(d, "view rows differ") {
		return "(result differs)"
	}
	if len(d) > 110 {
		d = d[:110]
	}
	return d
}
