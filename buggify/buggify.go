package buggify

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"

	"github.com/rockstream/rockstream/runtime"
)

// Activation levels (FoundationDB's two-level BUGGIFY).
const (
	// ActivationProbability is the chance a site is active for a whole run,
	// decided once at NewPlan from the seed. Simulation range: fixed; a
	// quarter keeps most sites quiet in any one run so that the active ones
	// can be reached deep into a scenario.
	ActivationProbability = 0.25
	// FireProbabilityMin and FireProbabilityMax bound the per-evaluation
	// chance that an active site fires; each active site draws its own
	// value from this range once per run (STYLE.md 5).
	FireProbabilityMin = 0.05
	FireProbabilityMax = 0.5
)

// Plan is one run's buggify decisions. A nil *Plan never fires: that is the
// path outside simulation (runtime/real has no plan).
type Plan struct {
	rnd *rand.Rand
	// sites holds per-site state in registry order.
	sites []siteState
}

type siteState struct {
	info      SiteInfo
	active    bool
	fireProb  float64
	evaluated int
	fired     int
}

// NewPlan decides, from rnd (a stream of the run's seed), which sites are
// active and how often each fires. The same stream gives the same plan.
func NewPlan(rnd *rand.Rand) *Plan {
	p := &Plan{rnd: rnd}
	// NB: each site draws from its own stream (the run's base and the
	// site's name), so registering a new site does not change any other
	// site's decisions: saved seeds keep their plans.
	base := rnd.Uint64()
	for _, info := range registry {
		h := fnv.New64a()
		h.Write([]byte(info.Site))
		srnd := rand.New(rand.NewPCG(base, h.Sum64()))
		s := siteState{info: info}
		s.active = srnd.Float64() < ActivationProbability
		s.fireProb = FireProbabilityMin + srnd.Float64()*(FireProbabilityMax-FireProbabilityMin)
		p.sites = append(p.sites, s)
	}
	return p
}

// Disable turns every site off for the rest of the run (the liveness phase
// heals injected faults).
func (p *Plan) Disable() {
	if p == nil {
		return
	}
	for i := range p.sites {
		p.sites[i].active = false
	}
}

// Fire reports whether site fires now. It panics on an unregistered site:
// sites are constants registered in this package.
func (p *Plan) Fire(site Site) bool {
	if p == nil {
		return false
	}
	for i := range p.sites {
		s := &p.sites[i]
		if s.info.Site != site {
			continue
		}
		s.evaluated++
		if !s.active || p.rnd.Float64() >= s.fireProb {
			return false
		}
		s.fired++
		return true
	}
	panic(fmt.Sprintf("buggify: site %q is not registered in buggify/sites.go", site))
}

// planHolder is implemented by the simulator's actor context.
type planHolder interface {
	Buggify() *Plan
}

// FromContext returns the plan of the run ctx belongs to, or nil outside
// simulation. Code that keeps state across messages (e.g. an open slate
// DB) can hold the plan.
func FromContext(ctx runtime.Context) *Plan {
	if h, ok := ctx.(planHolder); ok {
		return h.Buggify()
	}
	return nil
}

// Fire reports whether site fires now for the actor whose context is ctx;
// always false outside simulation.
func Fire(ctx runtime.Context, site Site) bool {
	return FromContext(ctx).Fire(site)
}

// SiteReport is one line of Report.
type SiteReport struct {
	Site      Site
	Fault     string
	Active    bool
	FireProb  float64
	Evaluated int
	Fired     int
}

// Report lists every site with its activation and counts, in registry order.
func (p *Plan) Report() []SiteReport {
	if p == nil {
		return nil
	}
	out := make([]SiteReport, 0, len(p.sites))
	for _, s := range p.sites {
		out = append(out, SiteReport{Site: s.info.Site, Fault: s.info.Fault, Active: s.active, FireProb: s.fireProb, Evaluated: s.evaluated, Fired: s.fired})
	}
	return out
}

// String renders Report, one site per line.
func (p *Plan) String() string {
	var b strings.Builder
	for _, r := range p.Report() {
		fmt.Fprintf(&b, "buggify %-40s active=%-5t p=%.2f evaluated=%d fired=%d (%s)\n", r.Site, r.Active, r.FireProb, r.Evaluated, r.Fired, r.Fault)
	}
	return b.String()
}
