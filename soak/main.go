// Command soak is the continuous simulation job: it runs fresh seeds of a
// simulation workload for a bounded time or count (or until stopped), and
// when one fails it minimises the failing configuration and saves the seed
// with its operation log to seeds/testdata as a regression test, which
// `go test ./seeds` (and so CI) replays (STYLE.md 8). At the end it prints
// seeds/hour and, for the system workload, the coverage report of fault
// entries and buggify sites.
//
//	go run ./soak -runs=10000                      # the whole system (default)
//	go run ./soak -duration=10m -out=seeds/testdata
//	go run ./soak -variant=torn-commit -runs=2000  # check the harness still finds a planted bug
//	go run ./soak -workload=register -variant=ack-before-durable -runs=200
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/rockstream/rockstream/seeds"
	"github.com/rockstream/rockstream/sim"
	"github.com/rockstream/rockstream/sim/register"
	"github.com/rockstream/rockstream/sim/system"
)

// workload is one simulation the soak can run.
type workload struct {
	name string
	// run runs a seed with an optional configuration override.
	run func(seed uint64, cfg *sim.Config) result
	// planted: the variant carries a bug, so a failure is expected.
	planted bool
	// replay is the command replaying a seed of the real (unplanted) code.
	replay string
}

type result struct {
	header string
	err    error
	log    string
	cover  *system.Coverage
}

func main() {
	duration := flag.Duration("duration", 0, "stop after this long (0: no time limit)")
	runs := flag.Int("runs", 0, "stop after this many seeds (0: no limit)")
	out := flag.String("out", "seeds/testdata", "where failing seeds are saved")
	workloadName := flag.String("workload", "system", "workload: system or register")
	variantName := flag.String("variant", "", "planted bug: system: none, ack-before-durable, torn-commit; register: correct, ack-before-durable, read-one-replica")
	base := flag.Uint64("base", uint64(time.Now().UnixNano()), "base of the fresh seeds (printed, to repeat a soak)")
	shards := flag.Bool("shards", false, "system: lay each seed's store out over 1 to 3 shards drawn per seed (replay with TestSystemShards)")
	keepGoing := flag.Bool("keep-going", false, "after saving a failure, continue with the next seed")
	only := flag.Uint64("only", 0, "run only this seed (shrink and save it if it fails)")
	record := flag.Uint64("record", 0, "save this seed as a regression (a fixed bug's seed: the real system must pass it; a planted variant's: it must fail) and exit")
	flag.Parse()

	w, variant, err := pick(*workloadName, *variantName, *shards)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	if *record != 0 {
		res := w.run(*record, nil)
		errText := ""
		if res.err != nil {
			errText = res.err.Error()
		}
		if (res.err != nil) != w.planted {
			fmt.Fprintf(os.Stderr, "soak: seed %d: failed=%t, a regression of variant %s needs failed=%t: %v\n", *record, res.err != nil, variant, w.planted, res.err)
			os.Exit(1)
		}
		path, err := seeds.Save(*out, seeds.Regression{Workload: w.name, Variant: variant, Seed: *record,
			ExpectFailure: w.planted, Error: errText, OpLog: res.log})
		if err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
			os.Exit(1)
		}
		fmt.Printf("soak: recorded %s\n", path)
		return
	}
	fmt.Printf("soak: workload=%s variant=%s base=%d\n", w.name, variant, *base)
	start := time.Now()
	var cover system.Coverage
	failures := 0
	i := 0
	for ; ctx.Err() == nil && (*runs == 0 || i < *runs); i++ {
		seed := seeds.Mix(*base + uint64(i))
		if *only != 0 {
			if i > 0 {
				break
			}
			seed = *only
		}
		res := w.run(seed, nil)
		if res.cover != nil {
			cover.Merge(*res.cover)
		}
		if (i+1)%500 == 0 {
			fmt.Printf("soak: %d seeds, %d failures (%.0f seeds/hour)\n", i+1, failures, perHour(i+1, start))
		}
		if res.err == nil {
			continue
		}
		failures++
		fmt.Printf("%sFAILED: %v\n", res.header, res.err)
		fmt.Printf("replay: %s -seed=%d -v\n", w.replay, seed)
		path, err := save(*out, w, variant, seed)
		if err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
			os.Exit(1)
		}
		fmt.Printf("soak: saved %s (minimised configuration and operation log); it now runs in: go test ./seeds -run TestRegressions -v\n", path)
		if !*keepGoing {
			i++
			break
		}
	}
	fmt.Printf("soak: %d seeds in %v, %d failures, %.0f seeds/hour (workload=%s variant=%s base=%d)\n",
		i, time.Since(start).Round(time.Second), failures, perHour(i, start), w.name, variant, *base)
	if cover.Runs > 0 {
		fmt.Print(cover.String())
		if un := cover.Uncovered(); len(un) > 0 {
			fmt.Printf("soak: never hit and no written reason: %v\n", un)
		}
	}
	if failures > 0 && !w.planted {
		os.Exit(1)
	}
}

func perHour(n int, start time.Time) float64 {
	return float64(n) / time.Since(start).Hours()
}

// pick resolves the workload and its variant.
func pick(name, variant string, shards bool) (workload, string, error) {
	switch name {
	case "system":
		if variant == "" {
			variant = system.NoBug.String()
		}
		for _, b := range []system.Bug{system.NoBug, system.AckBeforeDurable, system.TornCommit} {
			if b.String() != variant {
				continue
			}
			return workload{
				name:    name,
				planted: b != system.NoBug,
				replay:  replaySystem(shards),
				run: func(seed uint64, cfg *sim.Config) result {
					o := system.Run(system.Options{Seed: seed, Config: cfg, Plant: b, DrawShards: shards})
					return result{header: o.Header, err: o.Err, log: o.Log, cover: &o.Coverage}
				},
			}, variant, nil
		}
	case "register":
		if variant == "" {
			variant = register.Correct.String()
		}
		for _, v := range []register.Variant{register.Correct, register.AckBeforeDurable, register.ReadOneReplica} {
			if v.String() != variant {
				continue
			}
			return workload{
				name:    name,
				planted: v != register.Correct,
				replay:  "go test ./sim/register -run '^TestCorrectRegisterIsLinearizable$'",
				run: func(seed uint64, cfg *sim.Config) result {
					o := register.Run(register.Options{Seed: seed, Variant: v, Config: cfg})
					return result{header: o.Header, err: o.Err, log: o.History.String()}
				},
			}, variant, nil
		}
	default:
		return workload{}, "", fmt.Errorf("unknown workload %q", name)
	}
	return workload{}, "", fmt.Errorf("workload %s has no variant %q", name, variant)
}

// save minimises the failing seed's configuration and saves it with the
// minimised run's error and operation log (so the regression test can tell
// when the seed drifts).
func save(dir string, w workload, variant string, seed uint64) (string, error) {
	cfg := minimise(seed, w)
	res := w.run(seed, &cfg)
	raw, err := json.Marshal(cfg)
	if err != nil {
		return "", err
	}
	errText := "(the minimised configuration no longer fails)"
	if res.err != nil {
		errText = res.err.Error()
	}
	return seeds.Save(dir, seeds.Regression{
		Workload: w.name, Variant: variant, Seed: seed, Config: raw,
		ExpectFailure: w.planted, Error: errText, OpLog: res.log,
	})
}

// minimise switches faults off one at a time while the seed still fails,
// so the saved configuration names only the faults the failure needs.
func minimise(seed uint64, w workload) sim.Config {
	cfg := sim.DrawConfig(sim.NewStream(seed, "sim/config"))
	knobs := []func(c *sim.Config){
		func(c *sim.Config) { c.NetDropProbability = 0 },
		func(c *sim.Config) { c.NetDuplicateProbability = 0 },
		func(c *sim.Config) { c.NetReorderProbability = 0 },
		func(c *sim.Config) { c.PartitionProbability = 0 },
		func(c *sim.Config) { c.CongestionProbability = 0 },
		func(c *sim.Config) { c.CrashProbability = 0 },
		func(c *sim.Config) { c.SlowProbability = 0 },
		func(c *sim.Config) { c.ClockSkewMax, c.ClockDriftPPMMax = 0, 0 },
		func(c *sim.Config) { c.TimerJitterMax = 0 },
		func(c *sim.Config) { c.Buggify = false },
		func(c *sim.Config) { c.Store.TransientProbability = 0 },
		func(c *sim.Config) { c.Store.AmbiguousProbability = 0 },
		func(c *sim.Config) { c.Store.CrashAfterWriteProbability = 0 },
		func(c *sim.Config) { c.Store.StaleListProbability = 0 },
		func(c *sim.Config) { c.Store.LatencySpikeProbability = 0 },
	}
	for _, knob := range knobs {
		candidate := cfg
		knob(&candidate)
		if w.run(seed, &candidate).err != nil {
			cfg = candidate
		}
	}
	return cfg
}

// replaySystem is the test that replays a system seed.
func replaySystem(shards bool) string {
	if shards {
		return "go test ./sim/system -run '^TestSystemShards$'"
	}
	return "go test ./sim/system -run '^TestSystem$'"
}
