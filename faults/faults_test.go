package faults

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestCatalog(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range Catalog() {
		if seen[f.Name] {
			t.Errorf("duplicate fault %s", f.Name)
		}
		seen[f.Name] = true
		if !strings.Contains(f.Name, ".") || f.Description == "" || f.Survives == "" || len(f.Params) == 0 {
			t.Errorf("fault %s is incomplete: %+v", f.Name, f)
		}
		for _, p := range f.Params {
			if p.Min > p.Max || p.Unit == "" {
				t.Errorf("fault %s param %s: bad range or unit: %+v", f.Name, p.Name, p)
			}
			if p.Unit == "probability" || p.Unit == "fraction" {
				if p.Min < 0 || p.Max > 1 {
					t.Errorf("fault %s param %s: probability outside [0,1]", f.Name, p.Name)
				}
			}
			rnd := rand.New(rand.NewPCG(1, 2))
			for range 100 {
				if v := p.Draw(rnd); v < p.Min || v > p.Max {
					t.Fatalf("%s.%s drew %v outside [%v,%v]", f.Name, p.Name, v, p.Min, p.Max)
				}
			}
		}
	}
	for _, name := range []string{ObjstoreLatency, ObjstoreTransient, ObjstoreAmbiguousWrite, ObjstoreCrashAfterWrite,
		ObjstoreStaleList, ObjstoreCorruptRead, NetworkDelay, NetworkDrop, NetworkDuplicate, NetworkReorder, NetworkPartition,
		NetworkCongestion, ProcessCrash, ProcessSlow, ClockSkew, ClockDrift, MailboxOverflow, TimerJitter} {
		if !seen[name] {
			t.Errorf("constant %s has no catalog entry", name)
		}
	}
	if len(OutOfScope()) == 0 {
		t.Error("the fault model must say what is out of scope")
	}
	if _, ok := Lookup("no.such"); ok {
		t.Error("Lookup found a fault that does not exist")
	}
}
