// Command soak is the continuous simulation job: it runs fresh seeds of
// the simulation workloads until stopped (or -duration), and when one
// fails it minimises the failing configuration and saves the seed with its
// operation log to seeds/testdata as a regression test (STYLE.md 8).
//
//	go run ./soak                       # until Ctrl-C
//	go run ./soak -duration=10m -out=seeds/testdata
//	go run ./soak -variant=ack-before-durable -runs=200   # check the harness still finds a planted bug
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
)

func main() {
	duration := flag.Duration("duration", 0, "stop after this long (0: until interrupted)")
	runs := flag.Int("runs", 0, "stop after this many seeds (0: no limit)")
	out := flag.String("out", "seeds/testdata", "where failing seeds are saved")
	variantName := flag.String("variant", "correct", "register variant: correct, ack-before-durable, read-one-replica")
	base := flag.Uint64("base", uint64(time.Now().UnixNano()), "base of the fresh seeds (printed, to repeat a soak)")
	flag.Parse()

	variant, ok := variants()[*variantName]
	if !ok {
		fmt.Fprintf(os.Stderr, "soak: unknown variant %q\n", *variantName)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	fmt.Printf("soak: workload=register variant=%s base=%d\n", variant, *base)
	start := time.Now()
	i := 0
	for ; ctx.Err() == nil && (*runs == 0 || i < *runs); i++ {
		seed := seeds.Mix(*base + uint64(i))
		o := register.Run(register.Options{Seed: seed, Variant: variant})
		if o.Err == nil {
			if (i+1)%1000 == 0 {
				fmt.Printf("soak: %d seeds passed (%.0f/s)\n", i+1, float64(i+1)/time.Since(start).Seconds())
			}
			continue
		}
		fmt.Printf("%sFAILED: %v\n", o.Header, o.Err)
		cfg := minimise(seed, variant)
		// NB: the saved error and log are the minimised run's, so the
		// regression test can tell when the seed drifts.
		o = register.Run(register.Options{Seed: seed, Variant: variant, Config: &cfg})
		raw, err := json.Marshal(cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
			os.Exit(1)
		}
		path, err := seeds.Save(*out, seeds.Regression{
			Workload: "register", Variant: variant.String(), Seed: seed, Config: raw,
			ExpectFailure: variant != register.Correct, Error: o.Err.Error(), OpLog: o.History.String(),
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
			os.Exit(1)
		}
		fmt.Printf("soak: saved %s (minimised configuration); it now runs in: go test ./seeds -run TestRegressions -v\n", path)
		if variant == register.Correct {
			fmt.Printf("replay: go test ./sim/register -run '^TestCorrectRegisterIsLinearizable$' -seed=%d -v\n", seed)
		}
		if variant == register.Correct {
			os.Exit(1)
		}
		return
	}
	fmt.Printf("soak: stopped after %v and %d seeds, no failure\n", time.Since(start).Round(time.Second), i)
}

func variants() map[string]register.Variant {
	return map[string]register.Variant{
		register.Correct.String():          register.Correct,
		register.AckBeforeDurable.String(): register.AckBeforeDurable,
		register.ReadOneReplica.String():   register.ReadOneReplica,
	}
}

// minimise switches faults off one at a time while the seed still fails,
// so the saved configuration names only the faults the failure needs.
func minimise(seed uint64, variant register.Variant) sim.Config {
	cfg := sim.DrawConfig(sim.NewStream(seed, "sim/config"))
	knobs := []func(c *sim.Config){
		func(c *sim.Config) { c.NetDropProbability = 0 },
		func(c *sim.Config) { c.NetDuplicateProbability = 0 },
		func(c *sim.Config) { c.NetReorderProbability = 0 },
		func(c *sim.Config) { c.PartitionProbability = 0 },
		func(c *sim.Config) { c.CongestionProbability = 0 },
		func(c *sim.Config) { c.CrashProbability = 0 },
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
		if register.Run(register.Options{Seed: seed, Variant: variant, Config: &candidate}).Err != nil {
			cfg = candidate
		}
	}
	return cfg
}
