package buggify

import (
	"math/rand/v2"
	"testing"

	"github.com/rockstream/rockstream/faults"
)

func TestRegistryNamesFaults(t *testing.T) {
	seen := map[Site]bool{}
	for _, s := range Sites() {
		if seen[s.Site] {
			t.Errorf("site %s registered twice", s.Site)
		}
		seen[s.Site] = true
		if _, ok := faults.Lookup(s.Fault); !ok {
			t.Errorf("site %s names unknown fault %q", s.Site, s.Fault)
		}
		if s.Survives == "" {
			t.Errorf("site %s does not say what must survive it", s.Site)
		}
	}
}

func TestNilPlanNeverFires(t *testing.T) {
	var p *Plan
	if p.Fire(RegisterReplicaDropReply) || p.Report() != nil {
		t.Fatal("a nil plan (outside simulation) fired")
	}
	if FromContext(nil) != nil {
		t.Fatal("FromContext found a plan without a simulator context")
	}
}

func TestPlanIsDecidedBySeedAndReported(t *testing.T) {
	fires := func(seed uint64) []bool {
		p := NewPlan(rand.New(rand.NewPCG(seed, 0)))
		var out []bool
		for range 200 {
			out = append(out, p.Fire(RegisterReplicaDropReply), p.Fire(RegisterClientEarlyRetry))
		}
		return out
	}
	a, b := fires(5), fires(5)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different firing at %d", i)
		}
	}
	// Over many seeds both levels show: some runs have a site inactive
	// (never fires), some active (fires sometimes, not always).
	inactive, partial := 0, 0
	for seed := range uint64(100) {
		p := NewPlan(rand.New(rand.NewPCG(seed, 0)))
		for range 100 {
			p.Fire(RegisterReplicaDropReply)
		}
		var r SiteReport
		for _, x := range p.Report() {
			if x.Site == RegisterReplicaDropReply {
				r = x
			}
		}
		if r.Site != RegisterReplicaDropReply || r.Evaluated != 100 {
			t.Fatalf("report wrong: %+v", r)
		}
		switch {
		case !r.Active && r.Fired == 0:
			inactive++
		case r.Active && r.Fired > 0 && r.Fired < 100:
			partial++
		case !r.Active && r.Fired > 0:
			t.Fatalf("inactive site fired: %+v", r)
		}
	}
	if inactive == 0 || partial == 0 {
		t.Fatalf("activation is not two-level: inactive=%d partial=%d", inactive, partial)
	}
	p := NewPlan(rand.New(rand.NewPCG(1, 0)))
	p.Disable()
	for range 100 {
		if p.Fire(RegisterReplicaDropReply) {
			t.Fatal("disabled plan fired")
		}
	}
}

func TestUnregisteredSitePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("an unregistered site did not panic")
		}
	}()
	NewPlan(rand.New(rand.NewPCG(1, 0))).Fire("no/such.site")
}
