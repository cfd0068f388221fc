// Package seeds chooses which simulation seeds a test runs, prints every
// run's header, turns a failure into the exact command that replays it, and
// keeps failing seeds as regression tests (STYLE.md 4, 8).
//
// Flags (any test binary that imports this package has them):
//
//	go test ./sim -seed=123 -v      # replay one seed, printing SEED=, config and trace hash
//	go test ./sim -seeds=500        # 500 fresh random seeds (base printed)
//	go test ./sim                   # the default, fixed seeds 1..N (what CI runs)
//
// NB: go test hides the output of passing packages unless -v is given;
// a failure always prints the header and the replay command.
//
// Walkthrough of a simulation test:
//
//	func TestRegister(t *testing.T) {
//		seeds.Run(t, 500, func(seed uint64) seeds.Result {
//			s := sim.New(sim.Options{Seed: seed})
//			... // spawn, RunFor (safety), Heal, RunUntil (liveness), check
//			return seeds.Result{Header: s.Describe(), TraceHash: s.TraceHash(), Err: err}
//		})
//	}
package seeds

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

var (
	seedFlag  = flag.Uint64("seed", 0, "replay this one simulation seed (0: not set)")
	seedsFlag = flag.Int("seeds", 0, "run this many fresh random simulation seeds (0: the test's fixed default seeds)")
)

// Result is the outcome of one seeded run.
type Result struct {
	// Header is the run's description: SEED= and its configuration.
	Header string
	// TraceHash is the run's determinism hash.
	TraceHash uint64
	// Err is the failure, if any.
	Err error
	// Log is extra context printed on failure (e.g. the operation log).
	Log string
}

// Select returns the seeds to run: the -seed flag's one seed, -seeds fresh
// random seeds, or 1..defaultCount.
func Select(t testing.TB, defaultCount int) []uint64 {
	t.Helper()
	base := uint64(time.Now().UnixNano())
	if *seedsFlag > 0 && *seedFlag == 0 {
		t.Logf("fresh seeds: %d seeds from base %d", *seedsFlag, base)
	}
	return selectSeeds(*seedFlag, *seedsFlag, defaultCount, base)
}

func selectSeeds(seed uint64, fresh, defaultCount int, base uint64) []uint64 {
	if seed != 0 {
		return []uint64{seed}
	}
	if fresh > 0 {
		out := make([]uint64, fresh)
		for i := range out {
			out[i] = Mix(base + uint64(i))
		}
		return out
	}
	out := make([]uint64, defaultCount)
	for i := range out {
		out[i] = uint64(i + 1)
	}
	return out
}

// Mix is splitmix64's finaliser: fresh seeds that look unrelated. Never 0.
func Mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return (x ^ (x >> 31)) | 1
}

// Replaying reports whether -seed was given.
func Replaying() bool { return *seedFlag != 0 }

// Run runs run once per selected seed and fails t at the first failing seed
// with its header, error, log and the command that replays it. A panic
// inside run (a failed assertion) is a failure too.
func Run(t *testing.T, defaultCount int, run func(seed uint64) Result) {
	t.Helper()
	for _, seed := range Select(t, defaultCount) {
		res := RunOne(seed, run)
		if Replaying() || testing.Verbose() {
			fmt.Printf("%sTRACE=%016x\n", res.Header, res.TraceHash)
		}
		if res.Err != nil {
			t.Fatalf("%s\nFAILED: %v\n%s\nreplay: %s", res.Header, res.Err, res.Log, ReplayCommand(t, seed))
		}
	}
}

// RunOne runs one seed, turning a panic into Result.Err.
func RunOne(seed uint64, run func(seed uint64) Result) (res Result) {
	defer func() {
		if r := recover(); r != nil {
			res.Err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
			if res.Header == "" {
				res.Header = fmt.Sprintf("SEED=%d\n", seed)
			}
		}
	}()
	return run(seed)
}

// ReplayCommand is the command that replays seed for the running test.
func ReplayCommand(t testing.TB, seed uint64) string {
	name := t.Name()
	if i := strings.IndexByte(name, '/'); i >= 0 {
		name = name[:i]
	}
	return fmt.Sprintf("go test ./%s -run '^%s$' -seed=%d -v", packageDir(), name, seed)
}

// packageDir is the test's package directory relative to the module root.
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil {
				return "."
			}
			return filepath.ToSlash(rel)
		}
		if filepath.Dir(dir) == dir {
			return "."
		}
	}
}
