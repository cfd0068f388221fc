package sim

import (
	"fmt"
	"strings"
	"time"

	"github.com/rockstream/rockstream/runtime"
)

// CPUModel is the simulator's cost model (Options.CPU): every process has
// Cores cores, and an actor's Receive occupies one of them for
// PerMessage plus PerUnit of each unit of work it reports
// (runtime.Report). A message waits in the inbox while every core of its
// process is busy, so a simulated cluster shows where it saturates:
//
//	process "embedded", Cores 2, shard/0 and shard/1 busy
//	  shard/2's next message waits until the first of them is done
//	  its Receive reports 1000 step rows at 2µs: that core is busy 2ms,
//	  and shard/2's sends and replies leave 2ms later
//
// Object-store latency is charged to the actor (its effects are late) but
// does not hold a core: the actor waits on I/O. Without a CPU model an
// actor's work takes no virtual time, as before.
type CPUModel struct {
	// Cores per process (at least 1).
	Cores int
	// PerMessage is the CPU time of every Receive.
	PerMessage time.Duration
	// PerUnit is the CPU time of one unit of each kind of work.
	PerUnit [runtime.WorkKinds]time.Duration
}

func (m *CPUModel) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cpu: cores=%d per_message=%v", m.Cores, m.PerMessage)
	for w := range runtime.WorkKinds {
		fmt.Fprintf(&b, " %s=%v", w, m.PerUnit[w])
	}
	return b.String()
}

// CPUStats is the CPU time the model charged, per process (Sim.CPUStats).
type CPUStats struct {
	// Busy is the CPU time charged on the process's cores.
	Busy time.Duration
	// Units counts the work reported, by kind.
	Units [runtime.WorkKinds]int64
	// Waits counts the messages that waited for a core.
	Waits int64
}

// cpuState is a process's cores: when each is free next.
type cpuState struct {
	freeAt []time.Duration
	stats  CPUStats
}

// freeCore is the core free first (the lowest index among equals).
func (c *cpuState) freeCore() int {
	best := 0
	for i, t := range c.freeAt {
		if t < c.freeAt[best] {
			best = i
		}
	}
	return best
}

// CPUStats reports the model's CPU accounting of process (zero without a
// CPU model).
func (s *Sim) CPUStats(process string) CPUStats {
	p, ok := s.processes[process]
	if !ok || p.cpu == nil {
		return CPUStats{}
	}
	return p.cpu.stats
}

// cpuOf is p's cores, created on first use (nil without a CPU model).
func (s *Sim) cpuOf(p *process) *cpuState {
	if s.cpu == nil {
		return nil
	}
	if p.cpu == nil {
		p.cpu = &cpuState{freeAt: make([]time.Duration, max(1, s.cpu.Cores))}
	}
	return p.cpu
}

// waitForCore reports whether a's next Receive must wait for a core of
// its process, and if so schedules it for when one is free.
func (s *Sim) waitForCore(a *simActor, e *event) bool {
	c := s.cpuOf(a.process)
	if c == nil {
		return false
	}
	free := c.freeAt[c.freeCore()]
	if free <= s.now {
		return false
	}
	c.stats.Waits++
	s.schedule(&event{at: free, kind: eventRun, to: e.to, instance: e.instance})
	return true
}

// ReportWork charges n units of w to the running Receive: its core is
// busy longer and its effects are later.
func (c *actorContext) ReportWork(w runtime.Work, n int) {
	c.check()
	s := c.sim
	if s.cpu == nil || w >= runtime.WorkKinds {
		return
	}
	d := s.cpu.PerUnit[w] * time.Duration(n)
	s.charged += d
	s.cpuCharged += d
	if cs := s.cpuOf(c.actor.process); cs != nil {
		cs.stats.Units[w] += int64(n)
	}
}

// occupyCore books the Receive that just ran (started at s.now) on its
// process's free core for its CPU time.
func (s *Sim) occupyCore(a *simActor) {
	c := s.cpuOf(a.process)
	if c == nil {
		return
	}
	d := s.cpu.PerMessage + s.cpuCharged
	c.freeAt[c.freeCore()] = s.now + d
	c.stats.Busy += d
}
