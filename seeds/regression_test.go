package seeds_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/rockstream/rockstream/seeds"
	"github.com/rockstream/rockstream/sim"
	"github.com/rockstream/rockstream/sim/register"
	"github.com/rockstream/rockstream/sim/system"
)

func systemBug(name string) (system.Bug, error) {
	for _, b := range []system.Bug{system.NoBug, system.AckBeforeDurable, system.TornCommit} {
		if b.String() == name {
			return b, nil
		}
	}
	return 0, fmt.Errorf("unknown system variant %q", name)
}

// replaySystem replays a saved whole-system seed: a planted bug stays
// caught, and the real system passes the same seed and configuration.
func replaySystem(t *testing.T, r seeds.Regression, cfg *sim.Config) {
	bug, err := systemBug(r.Variant)
	if err != nil {
		t.Fatal(err)
	}
	o := system.Run(system.Options{Seed: r.Seed, Plant: bug, Config: cfg})
	if failed := o.Err != nil; failed != r.ExpectFailure {
		t.Fatalf("seed %d variant %s: failed=%t (%v), want failed=%t\n%s\nfirst seen: %s\nreplay: go test ./seeds -run 'TestRegressions' -v", r.Seed, r.Variant, failed, o.Err, r.ExpectFailure, o.Header, r.Error)
	}
	if o.Log != r.OpLog {
		t.Logf("operation log drifted from when the seed was saved; it may no longer exercise the same path")
	}
	if bug != system.NoBug {
		if fixed := system.Run(system.Options{Seed: r.Seed, Config: cfg}); fixed.Err != nil {
			t.Fatalf("the real system fails the same seed: %v\n%s", fixed.Err, fixed.Header)
		}
	}
}

func registerVariant(name string) (register.Variant, error) {
	for _, v := range []register.Variant{register.Correct, register.AckBeforeDurable, register.ReadOneReplica} {
		if v.String() == name {
			return v, nil
		}
	}
	return 0, fmt.Errorf("unknown register variant %q", name)
}

// TestRegressions replays every saved failing seed: a planted bug must stay
// caught by its seed, and the correct variant must pass the same seed and
// configuration. A changed operation log is reported: the seed may no
// longer exercise what it first found.
func TestRegressions(t *testing.T) {
	regressions, paths, err := seeds.Load(seeds.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(regressions) == 0 {
		t.Fatalf("no regression seeds in %s", seeds.Dir)
	}
	for i, r := range regressions {
		t.Run(paths[i], func(t *testing.T) {
			var cfg *sim.Config
			if len(r.Config) > 0 {
				cfg = &sim.Config{}
				if err := json.Unmarshal(r.Config, cfg); err != nil {
					t.Fatal(err)
				}
			}
			switch r.Workload {
			case "register":
			case "system":
				replaySystem(t, r, cfg)
				return
			default:
				t.Fatalf("unknown workload %q", r.Workload)
			}
			variant, err := registerVariant(r.Variant)
			if err != nil {
				t.Fatal(err)
			}
			o := register.Run(register.Options{Seed: r.Seed, Variant: variant, Config: cfg})
			if failed := o.Err != nil; failed != r.ExpectFailure {
				t.Fatalf("seed %d variant %s: failed=%t (%v), want failed=%t\n%s", r.Seed, r.Variant, failed, o.Err, r.ExpectFailure, o.Header)
			}
			if o.History.String() != r.OpLog {
				t.Logf("operation log drifted from when the seed was saved; it may no longer exercise the same path")
			}
			if variant != register.Correct {
				fixed := register.Run(register.Options{Seed: r.Seed, Variant: register.Correct, Config: cfg})
				if fixed.Err != nil {
					t.Fatalf("the correct register fails the same seed: %v\n%s", fixed.Err, fixed.Header)
				}
			}
		})
	}
}
