package register

import (
	"context"
	"fmt"
	"time"

	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/sim"
)

// Run sizes. Small on purpose: each seed must stay cheap (milliseconds)
// so hundreds of seeds fit in CI.
const (
	replicaCount = 3
	clientCount  = 3
	// safetyDuration is the virtual time of the safety phase.
	safetyDuration = 1500 * time.Millisecond
	// livenessLimit bounds the liveness phase: after Heal every client
	// must complete operations within it.
	livenessLimit = 5 * time.Second
	// livenessOpsMin is how many operations must complete after Heal.
	livenessOpsMin = 2 * clientCount
)

// Options configure one run.
type Options struct {
	Seed    uint64
	Variant Variant
	// Config overrides the configuration drawn from the seed.
	Config *sim.Config
}

// Outcome is the result of one run.
type Outcome struct {
	// Header is SEED=, the configuration and the variant.
	Header    string
	TraceHash uint64
	Err       error
	// History is the operation log.
	History *History
	Stats   sim.Stats
}

// Run simulates the register: replicas on crashable processes, clients on
// their own processes, a safety phase under faults, a liveness phase after
// Heal, then porcupine's linearizability check of the client history.
func Run(opts Options) Outcome {
	// The register's messages cross the wire codec too, so the network
	// path (drops, duplicates, reordering) carries encoded messages.
	s := sim.New(sim.Options{Seed: opts.Seed, Config: opts.Config, Codec: codec})
	out := Outcome{Header: s.Describe() + fmt.Sprintf("register: variant=%s replicas=%d clients=%d\n", opts.Variant, replicaCount, clientCount)}
	history := &History{}
	out.History = history
	clock := func() int64 { return int64(s.Now()) }

	var replicas []runtime.ActorID
	for i := range replicaCount {
		name := fmt.Sprintf("replica/%d", i)
		if err := s.AddProcess(name, sim.ProcessOptions{Crashable: true}); err != nil {
			out.Err = err
			return out
		}
		replicas = append(replicas, runtime.ActorID(name))
		if err := s.Spawn(name, runtime.ActorID(name), NewReplica(opts.Variant)); err != nil {
			out.Err = err
			return out
		}
	}
	for i := range clientCount {
		name := fmt.Sprintf("client/%d", i)
		factory := NewClient(ClientOptions{Name: name, Index: i, Replicas: replicas, Variant: opts.Variant, History: history, Clock: clock})
		if err := s.Spawn(name, runtime.ActorID(name), factory); err != nil {
			out.Err = err
			return out
		}
	}

	err := s.RunFor(safetyDuration)
	if err == nil {
		s.Heal()
		healedAt := int64(s.Now())
		err = s.RunUntil(func() bool { return history.CompletedSince(healedAt) >= livenessOpsMin }, livenessLimit)
	}
	if err == nil {
		// Every replica answers again after healing (Ask runs the loop).
		for _, r := range replicas {
			if _, askErr := s.Ask(context.Background(), r, getState{}); askErr != nil {
				err = fmt.Errorf("replica %s after heal: %w", r, askErr)
				break
			}
		}
	}
	if err == nil {
		err = history.Check()
	}
	out.Err = err
	out.TraceHash = s.TraceHash()
	out.Stats = s.Stats()
	return out
}
