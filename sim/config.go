package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/rockstream/rockstream/faults"
)

// Config is one run's randomized configuration. DrawConfig draws every field
// from the range its faults/ entry (or the comment beside it) declares
// (STYLE.md 5), so no default is the only value ever tested. Every run
// prints it after SEED=.
type Config struct {
	// Network, for messages between processes (faults.Network*).
	NetDelayMin             time.Duration // faults.NetworkDelay "min"
	NetDelayMean            time.Duration // faults.NetworkDelay "mean" (exponential)
	NetDropProbability      float64       // faults.NetworkDrop
	NetDuplicateProbability float64       // faults.NetworkDuplicate
	NetReorderProbability   float64       // faults.NetworkReorder "probability"
	NetReorderExtra         time.Duration // faults.NetworkReorder "extra" (uniform up to)

	// Nemesis: every NemesisInterval of the safety phase it may partition,
	// congest, or crash.
	//
	// NemesisInterval: simulation range [5ms, 100ms]; how often the nemesis
	// considers a new fault.
	NemesisInterval             time.Duration
	PartitionProbability        float64       // faults.NetworkPartition "probability"
	PartitionAsymmetricFraction float64       // faults.NetworkPartition "asymmetric_fraction"
	PartitionDuration           time.Duration // faults.NetworkPartition "duration" (uniform up to)
	CongestionProbability       float64       // faults.NetworkCongestion "probability"
	CongestionFactor            float64       // faults.NetworkCongestion "factor"
	CongestionDuration          time.Duration // faults.NetworkCongestion "duration" (uniform up to)
	CrashProbability            float64       // faults.ProcessCrash "probability", per nemesis tick
	RestartDelay                time.Duration // faults.ProcessCrash "restart_delay" (uniform up to)
	SlowProbability             float64       // faults.ProcessSlow "probability", per nemesis tick
	SlowReceiveDelay            time.Duration // faults.ProcessSlow "receive_delay" (uniform up to, per message)
	SlowDuration                time.Duration // faults.ProcessSlow "duration" (uniform up to)

	// Clocks.
	ClockSkewMax     time.Duration // faults.ClockSkew
	ClockDriftPPMMax float64       // faults.ClockDrift
	TimerJitterMax   time.Duration // faults.TimerJitter

	// MailboxMessagesMax bounds each simulated actor's inbox; actor sends
	// past it are dropped (faults.MailboxOverflow, as runtime/real's hard
	// bound).
	MailboxMessagesMax int

	// Store is the object-store fault configuration of every process.
	Store FaultConfig

	// Buggify turns the run's buggify plan on. Simulation range: on in
	// three runs of four, so the plain fault model is also tested alone.
	Buggify bool
}

func drawMillis(rnd *rand.Rand, fault, param string) time.Duration {
	ms := faults.MustLookup(fault).Param(param).Draw(rnd)
	return time.Duration(ms * float64(time.Millisecond))
}

func draw(rnd *rand.Rand, fault, param string) float64 {
	return faults.MustLookup(fault).Param(param).Draw(rnd)
}

// DrawConfig draws a configuration. Each fault is also switched off entirely
// in about one run of three, so runs without a given fault are common too.
func DrawConfig(rnd *rand.Rand) Config {
	maybe := func(p float64) float64 {
		if rnd.IntN(3) == 0 {
			return 0
		}
		return p
	}
	c := Config{
		NetDelayMin:                 drawMillis(rnd, faults.NetworkDelay, "min"),
		NetDelayMean:                drawMillis(rnd, faults.NetworkDelay, "mean"),
		NetDropProbability:          maybe(draw(rnd, faults.NetworkDrop, "probability")),
		NetDuplicateProbability:     maybe(draw(rnd, faults.NetworkDuplicate, "probability")),
		NetReorderProbability:       maybe(draw(rnd, faults.NetworkReorder, "probability")),
		NetReorderExtra:             drawMillis(rnd, faults.NetworkReorder, "extra"),
		NemesisInterval:             time.Duration(5+rnd.IntN(96)) * time.Millisecond,
		PartitionProbability:        maybe(draw(rnd, faults.NetworkPartition, "probability")),
		PartitionAsymmetricFraction: draw(rnd, faults.NetworkPartition, "asymmetric_fraction"),
		PartitionDuration:           drawMillis(rnd, faults.NetworkPartition, "duration"),
		CongestionProbability:       maybe(draw(rnd, faults.NetworkCongestion, "probability")),
		CongestionFactor:            draw(rnd, faults.NetworkCongestion, "factor"),
		CongestionDuration:          drawMillis(rnd, faults.NetworkCongestion, "duration"),
		CrashProbability:            maybe(draw(rnd, faults.ProcessCrash, "probability")),
		RestartDelay:                drawMillis(rnd, faults.ProcessCrash, "restart_delay"),
		SlowProbability:             maybe(draw(rnd, faults.ProcessSlow, "probability")),
		SlowReceiveDelay:            drawMillis(rnd, faults.ProcessSlow, "receive_delay"),
		SlowDuration:                drawMillis(rnd, faults.ProcessSlow, "duration"),
		ClockSkewMax:                drawMillis(rnd, faults.ClockSkew, "max"),
		ClockDriftPPMMax:            draw(rnd, faults.ClockDrift, "max"),
		TimerJitterMax:              drawMillis(rnd, faults.TimerJitter, "max"),
		MailboxMessagesMax:          int(draw(rnd, faults.MailboxOverflow, "messages_max")),
		Store:                       DrawFaultConfig(rnd),
		Buggify:                     rnd.IntN(4) != 0,
	}
	if rnd.IntN(3) == 0 {
		c.Store.TransientProbability = 0
	}
	if rnd.IntN(3) == 0 {
		c.Store.AmbiguousProbability = 0
	}
	if rnd.IntN(3) == 0 {
		c.Store.CrashAfterWriteProbability = 0
	}
	if rnd.IntN(3) == 0 {
		c.Store.StaleListProbability = 0
	}
	return c
}

// QuietConfig has no faults at all: instant-ish network, no nemesis, no
// store faults. Tests of the simulator itself start from it.
func QuietConfig() Config {
	return Config{
		NetDelayMin:        time.Millisecond,
		NetDelayMean:       time.Millisecond,
		NemesisInterval:    50 * time.Millisecond,
		MailboxMessagesMax: 1024,
		Store:              FaultConfig{LatencyBase: time.Millisecond},
	}
}

// String renders the configuration on one line per group, in a fixed order,
// for the start of every run's output.
func (c Config) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "net: delay=%v+exp(%v) drop=%.3f dup=%.3f reorder=%.3f(+%v)\n",
		c.NetDelayMin, c.NetDelayMean, c.NetDropProbability, c.NetDuplicateProbability, c.NetReorderProbability, c.NetReorderExtra)
	fmt.Fprintf(&b, "nemesis: every %v partition=%.3f(asym %.2f, up to %v) congestion=%.3f(x%.1f, up to %v) crash=%.3f(restart up to %v) slow=%.3f(+%v/msg, up to %v)\n",
		c.NemesisInterval, c.PartitionProbability, c.PartitionAsymmetricFraction, c.PartitionDuration,
		c.CongestionProbability, c.CongestionFactor, c.CongestionDuration, c.CrashProbability, c.RestartDelay,
		c.SlowProbability, c.SlowReceiveDelay, c.SlowDuration)
	fmt.Fprintf(&b, "clock: skew<=%v drift<=%.0fppm timer-jitter<=%v mailbox=%d buggify=%t\n",
		c.ClockSkewMax, c.ClockDriftPPMMax, c.TimerJitterMax, c.MailboxMessagesMax, c.Buggify)
	fmt.Fprintf(&b, "store: %s\n", c.Store)
	return b.String()
}
