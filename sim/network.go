package sim

import (
	"time"

	"github.com/rockstream/rockstream/runtime"
)

// Link is one direction between two processes.
type Link struct{ From, To string }

// network is the state of the simulated network between processes:
// partitions (per direction, so asymmetric ones are possible) and congested
// links. Messages within one process never cross it.
type network struct {
	// blocked counts the partitions currently cutting each link.
	blocked map[Link]int
	// congestion counts the congestion episodes on each link and the
	// delay factor of the latest.
	congestion map[Link]int
	factor     map[Link]float64
	healed     bool
}

func newNetwork() network {
	return network{blocked: map[Link]int{}, congestion: map[Link]int{}, factor: map[Link]float64{}}
}

func (n *network) healAll() {
	n.healed = true
	n.blocked = map[Link]int{}
	n.congestion = map[Link]int{}
	n.factor = map[Link]float64{}
}

func (s *Sim) chance(stream string, p float64) bool {
	return p > 0 && s.stream(stream).Float64() < p
}

// transmit sends one message between processes, deciding its fate: lost to
// a partition or a drop, duplicated, delayed (more on a congested link, a
// lot more when reordered).
func (s *Sim) transmit(fromProcess, toProcess string, from, to runtime.ActorID, msg runtime.Message) {
	link := Link{fromProcess, toProcess}
	faulty := !s.net.healed
	if faulty && s.net.blocked[link] > 0 {
		s.drop("partition", to, from)
		return
	}
	if faulty && s.chance("network", s.cfg.NetDropProbability) {
		s.drop("network", to, from)
		return
	}
	copies := 1
	if faulty && s.chance("network", s.cfg.NetDuplicateProbability) {
		copies = 2
		s.stats.Duplicated++
	}
	rnd := s.stream("network")
	for range copies {
		delay := s.cfg.NetDelayMin + time.Duration(rnd.ExpFloat64()*float64(s.cfg.NetDelayMean))
		if f := s.net.factor[link]; faulty && f > 1 {
			delay = time.Duration(float64(delay) * f)
		}
		if faulty && s.chance("network", s.cfg.NetReorderProbability) {
			delay += time.Duration(rnd.Float64() * float64(s.cfg.NetReorderExtra))
		}
		s.schedule(&event{at: s.effectiveNow() + delay, kind: eventArrive, to: to, from: from, msg: msg})
	}
}

// Partition cuts the links from every process in side to every other
// process (and back, unless oneWay) until HealPartition or Heal.
func (s *Sim) Partition(side []string, oneWay bool) []Link {
	inSide := map[string]bool{}
	for _, p := range side {
		inSide[p] = true
	}
	var links []Link
	for _, a := range s.processOrder {
		if !inSide[a] {
			continue
		}
		for _, b := range s.processOrder {
			if inSide[b] {
				continue
			}
			links = append(links, Link{a, b})
			if !oneWay {
				links = append(links, Link{b, a})
			}
		}
	}
	for _, l := range links {
		s.net.blocked[l]++
	}
	s.stats.Partitions++
	s.trace.record("partition", s.now)
	for _, l := range links {
		s.trace.str(l.From + ">" + l.To)
	}
	s.logEvent("partition %v", links)
	return links
}

// HealPartition undoes one Partition.
func (s *Sim) HealPartition(links []Link) {
	s.trace.record("heal-partition", s.now)
	for _, l := range links {
		if s.net.blocked[l] > 0 {
			s.net.blocked[l]--
		}
	}
}

// nemesis is the safety phase's fault injector: every NemesisInterval it
// may start a partition, congest a link, slow a process down, or crash a
// crashable process, each undone after a drawn duration.
func (s *Sim) nemesis() {
	if !s.nemesisActive {
		return
	}
	rnd := s.stream("nemesis")
	names := s.processOrder
	if len(names) >= 2 && s.chance("nemesis", s.cfg.PartitionProbability) {
		var side []string
		for _, p := range names {
			if rnd.IntN(2) == 0 {
				side = append(side, p)
			}
		}
		if len(side) == 0 || len(side) == len(names) {
			side = []string{names[rnd.IntN(len(names))]}
		}
		links := s.Partition(side, rnd.Float64() < s.cfg.PartitionAsymmetricFraction)
		s.At(time.Millisecond+time.Duration(rnd.Float64()*float64(s.cfg.PartitionDuration)), func() { s.HealPartition(links) })
	}
	if len(names) >= 2 && s.chance("nemesis", s.cfg.CongestionProbability) {
		i := rnd.IntN(len(names))
		j := (i + 1 + rnd.IntN(len(names)-1)) % len(names)
		link := Link{names[i], names[j]}
		s.net.congestion[link]++
		s.net.factor[link] = s.cfg.CongestionFactor
		s.stats.Congestions++
		s.trace.record("congest", s.now)
		s.At(time.Millisecond+time.Duration(rnd.Float64()*float64(s.cfg.CongestionDuration)), func() {
			if s.net.congestion[link] > 0 {
				s.net.congestion[link]--
				if s.net.congestion[link] == 0 {
					delete(s.net.factor, link)
				}
			}
		})
	}
	if len(names) > 0 && s.chance("nemesis", s.cfg.SlowProbability) {
		p := s.processes[names[rnd.IntN(len(names))]]
		p.slowUntil = max(p.slowUntil, s.now+time.Millisecond+time.Duration(rnd.Float64()*float64(s.cfg.SlowDuration)))
		s.stats.Slowdowns++
		s.trace.record("slow", s.now)
		s.trace.str(p.name)
		s.logEvent("slow %s until %v", p.name, p.slowUntil)
	}
	if s.chance("nemesis", s.cfg.CrashProbability) {
		var candidates []string
		for _, name := range names {
			if p := s.processes[name]; p.opts.Crashable && p.up {
				candidates = append(candidates, name)
			}
		}
		if len(candidates) > 0 {
			s.crashAndRestartLater(candidates[rnd.IntN(len(candidates))])
		}
	}
	s.schedule(&event{at: s.now + max(s.cfg.NemesisInterval, time.Millisecond), kind: eventNemesis})
}
