package seeds

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Regression is a failing seed kept as a regression test (STYLE.md 8),
// stored as JSON under seeds/testdata/. It records the configuration
// explicitly (when minimised) and the operation log, because a seed alone
// drifts when code changes: the log says what the seed used to exercise.
type Regression struct {
	// Workload names the runner, e.g. "register".
	Workload string `json:"workload"`
	// Variant is workload-specific, e.g. "ack-before-durable".
	Variant string `json:"variant"`
	Seed    uint64 `json:"seed"`
	// Config, when set, replaces the configuration drawn from the seed
	// (soak stores the minimised configuration here).
	// It is a JSON sim.Config (kept raw so this package does not import
	// sim, whose tests import this package).
	Config json.RawMessage `json:"config,omitempty"`
	// ExpectFailure: the run must fail (a planted bug stays caught) or
	// must pass (a fixed bug stays fixed).
	ExpectFailure bool `json:"expect_failure"`
	// Error is the failure as first seen.
	Error string `json:"error"`
	// OpLog is the operation log as first seen.
	OpLog string `json:"op_log"`
}

// Dir is the directory of regression files, relative to the seeds package.
const Dir = "testdata"

// Save writes r to dir as <workload>-<variant>-<seed>.json and returns the
// path.
func Save(dir string, r Regression) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%s-%d.json", r.Workload, r.Variant, r.Seed))
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, append(data, '\n'), 0o644)
}

// Load reads every regression file in dir, sorted by file name.
func Load(dir string) ([]Regression, []string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(paths)
	var out []Regression
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, nil, err
		}
		var r Regression
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, r)
	}
	return out, paths, nil
}
