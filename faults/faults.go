package faults

import (
	"fmt"
	"math/rand/v2"
	"sort"
)

// Param is one parameter of a fault and the range the simulator draws it
// from (STYLE.md 5): every seed draws a fresh value in [Min, Max].
type Param struct {
	Name string
	// Unit is the unit of Min and Max: "probability", "ms", "ppm", "count",
	// "factor", "fraction".
	Unit     string
	Min, Max float64
}

// Draw returns a value drawn uniformly from [Min, Max].
func (p Param) Draw(rnd *rand.Rand) float64 {
	if p.Max <= p.Min {
		return p.Min
	}
	return p.Min + rnd.Float64()*(p.Max-p.Min)
}

// Fault is one injectable fault of the written fault model.
type Fault struct {
	// Name is "<area>.<fault>", e.g. "objstore.ambiguous_write". Buggify
	// sites and simulator settings refer to faults by this name.
	Name string
	// Description says what happens when the fault is injected.
	Description string
	// Survives says what the system must still guarantee under the fault.
	Survives string
	Params   []Param
}

// Param returns the named parameter. It panics if the fault has none of that
// name: callers name parameters with constants, so a miss is a programmer
// error.
func (f Fault) Param(name string) Param {
	for _, p := range f.Params {
		if p.Name == name {
			return p
		}
	}
	panic(fmt.Sprintf("faults: %s has no parameter %q", f.Name, name))
}

// Fault names. Use these constants rather than string literals.
const (
	ObjstoreLatency         = "objstore.latency"
	ObjstoreTransient       = "objstore.transient"
	ObjstoreAmbiguousWrite  = "objstore.ambiguous_write"
	ObjstoreCrashAfterWrite = "objstore.crash_after_write"
	ObjstoreStaleList       = "objstore.stale_list"
	ObjstoreCorruptRead     = "objstore.corrupt_read"
	NetworkDelay            = "network.delay"
	NetworkDrop             = "network.drop"
	NetworkDuplicate        = "network.duplicate"
	NetworkReorder          = "network.reorder"
	NetworkPartition        = "network.partition"
	NetworkCongestion       = "network.congestion"
	ProcessCrash            = "process.crash"
	ProcessSlow             = "process.slow"
	ClockSkew               = "clock.skew"
	ClockDrift              = "clock.drift"
	MailboxOverflow         = "mailbox.overflow"
	TimerJitter             = "timer.jitter"
)

// catalog is the fault model. Each entry's parameters carry their
// simulation ranges beside their definition (STYLE.md 5).
//
//lint:immutable the fault model is a constant table; Catalog returns copies.
var catalog = []Fault{
	{
		Name:        ObjstoreLatency,
		Description: "every object-store call takes a sampled time, charged to the calling actor's virtual clock: a base, an exponential tail, and rare spikes",
		Survives:    "correctness never depends on timing; slow calls only delay progress",
		Params: []Param{
			{Name: "base", Unit: "ms", Min: 1, Max: 20},
			{Name: "tail_mean", Unit: "ms", Min: 0, Max: 30},
			{Name: "spike_probability", Unit: "probability", Min: 0, Max: 0.02},
			{Name: "spike", Unit: "ms", Min: 100, Max: 2000},
		},
	},
	{
		Name:        ObjstoreTransient,
		Description: "a call fails with objstore.ErrTransient without touching the store (throttling, 5xx, timeout before sending)",
		Survives:    "no acknowledged data is lost; callers retry or surface a retryable error",
		Params:      []Param{{Name: "probability", Unit: "probability", Min: 0, Max: 0.05}},
	},
	{
		Name:        ObjstoreAmbiguousWrite,
		Description: "a write reports objstore.ErrAmbiguous; with probability applied_fraction it was applied anyway (response lost), otherwise not (request lost)",
		Survives:    "callers read back before assuming either outcome; CAS protocols stay correct when their own write 'fails' but landed",
		Params: []Param{
			{Name: "probability", Unit: "probability", Min: 0, Max: 0.03},
			{Name: "applied_fraction", Unit: "fraction", Min: 0.5, Max: 1},
		},
	},
	{
		Name:        ObjstoreCrashAfterWrite,
		Description: "the write is applied, then the calling process crashes before it sees the result",
		Survives:    "recovery from durable state alone reaches a consistent state that includes or excludes the write",
		Params:      []Param{{Name: "probability", Unit: "probability", Min: 0, Max: 0.01}},
	},
	{
		Name:        ObjstoreStaleList,
		Description: "LIST reflects the store as it was up to window writes ago (recent creations missing, recent deletions still present)",
		Survives:    "nothing trusts a LIST for existence; GC never deletes what a stale LIST omits",
		Params: []Param{
			{Name: "probability", Unit: "probability", Min: 0, Max: 0.2},
			{Name: "window", Unit: "count", Min: 1, Max: 8},
		},
	},
	{
		Name:        ObjstoreCorruptRead,
		Description: "a read returns the object with one byte flipped (the stored object is intact); opt-in per test, since only checksummed formats can survive it",
		Survives:    "checksums detect it: the reader fails (or its process crashes and recovers); corrupted bytes are never interpreted as valid state",
		Params:      []Param{{Name: "probability", Unit: "probability", Min: 0, Max: 0.01}},
	},
	{
		Name:        NetworkDelay,
		Description: "a cross-process message is delivered after min plus an exponential delay",
		Survives:    "correctness never depends on delivery time",
		Params: []Param{
			{Name: "min", Unit: "ms", Min: 0, Max: 2},
			{Name: "mean", Unit: "ms", Min: 0.1, Max: 20},
		},
	},
	{
		Name:        NetworkDrop,
		Description: "a cross-process message is lost",
		Survives:    "protocols retry; at-most-once delivery never loses acknowledged state",
		Params:      []Param{{Name: "probability", Unit: "probability", Min: 0, Max: 0.1}},
	},
	{
		Name:        NetworkDuplicate,
		Description: "a cross-process message is delivered twice, with independent delays",
		Survives:    "receivers are idempotent (request ids, epochs)",
		Params:      []Param{{Name: "probability", Unit: "probability", Min: 0, Max: 0.05}},
	},
	{
		Name:        NetworkReorder,
		Description: "a cross-process message is held back by an extra delay so later messages overtake it",
		Survives:    "no protocol assumes FIFO between processes",
		Params: []Param{
			{Name: "probability", Unit: "probability", Min: 0, Max: 0.2},
			{Name: "extra", Unit: "ms", Min: 1, Max: 50},
		},
	},
	{
		Name:        NetworkPartition,
		Description: "the nemesis cuts links between two groups of processes, symmetric or one-way, and heals them later",
		Survives:    "safety always; liveness once healed",
		Params: []Param{
			{Name: "probability", Unit: "probability", Min: 0, Max: 0.3},
			{Name: "asymmetric_fraction", Unit: "fraction", Min: 0, Max: 1},
			{Name: "duration", Unit: "ms", Min: 20, Max: 1000},
		},
	},
	{
		Name:        NetworkCongestion,
		Description: "the nemesis multiplies the delay of one link for a while",
		Survives:    "timeouts and retries do not break safety",
		Params: []Param{
			{Name: "probability", Unit: "probability", Min: 0, Max: 0.3},
			{Name: "factor", Unit: "factor", Min: 2, Max: 50},
			{Name: "duration", Unit: "ms", Min: 20, Max: 1000},
		},
	},
	{
		Name:        ProcessCrash,
		Description: "the nemesis crashes a process: its actors' memory, queued messages and timers are discarded; it restarts after a delay from durable state (its object store) only",
		Survives:    "every acknowledged write; recovery reaches a state consistent with some prefix of acknowledged operations",
		Params: []Param{
			{Name: "probability", Unit: "probability", Min: 0, Max: 0.2},
			{Name: "restart_delay", Unit: "ms", Min: 1, Max: 500},
		},
	},
	{
		Name:        ProcessSlow,
		Description: "the nemesis makes a process slow for a while: each message it handles takes up to receive_delay longer (a slow worker, a GC pause)",
		Survives:    "correctness never depends on relative speed; timeouts and leases tolerate slow peers",
		Params: []Param{
			{Name: "probability", Unit: "probability", Min: 0, Max: 0.2},
			{Name: "receive_delay", Unit: "ms", Min: 1, Max: 50},
			{Name: "duration", Unit: "ms", Min: 20, Max: 1000},
		},
	},
	{
		Name:        ClockSkew,
		Description: "each process's clock starts offset from true time by up to max",
		Survives:    "no correctness decision compares clocks of different processes",
		Params:      []Param{{Name: "max", Unit: "ms", Min: 0, Max: 5000}},
	},
	{
		Name:        ClockDrift,
		Description: "each process's clock runs fast or slow by up to max parts per million (timers too)",
		Survives:    "leases and timeouts keep a margin for drift",
		Params:      []Param{{Name: "max", Unit: "ppm", Min: 0, Max: 500}},
	},
	{
		Name:        MailboxOverflow,
		Description: "an actor's mailbox is small, so sends from actors past its hard bound are dropped (as in runtime/real)",
		Survives:    "the same as network.drop: senders retry",
		Params:      []Param{{Name: "messages_max", Unit: "count", Min: 16, Max: 1024}},
	},
	{
		Name:        TimerJitter,
		Description: "a timer fires late by up to max",
		Survives:    "timers are hints for when to do work, never proofs of elapsed time elsewhere",
		Params:      []Param{{Name: "max", Unit: "ms", Min: 0, Max: 10}},
	},
}

// OutOfScope lists failures the system does not promise to survive, so that
// nobody builds (or tests) against them by accident.
//
//lint:immutable a constant list.
var outOfScope = []string{
	"losing every copy of an acknowledged durable object (the object store's durability is trusted)",
	"corruption persisted in the store's copy of an object (objstore.corrupt_read covers corruption in transit; a corrupt stored copy is detected, not repaired)",
	"partial objects visible after a crashed multipart upload (cold-tier sinks; v1 writes whole objects with single PUTs)",
	"a non-atomic PUT becoming visible partially (object stores publish whole objects)",
	"conditional writes (PutIfAbsent/PutIfMatch) that are not atomic",
	"Byzantine processes: a process sends only what its code computes",
	"a process clock going backwards (clocks are monotonic per process; skew and drift only)",
	"memory corruption and hardware faults inside a running process",
}

// Catalog returns the fault model sorted by name.
func Catalog() []Fault {
	out := make([]Fault, len(catalog))
	for i, f := range catalog {
		out[i] = f
		out[i].Params = append([]Param(nil), f.Params...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup returns the fault of that name.
func Lookup(name string) (Fault, bool) {
	for _, f := range catalog {
		if f.Name == name {
			f.Params = append([]Param(nil), f.Params...)
			return f, true
		}
	}
	return Fault{}, false
}

// MustLookup is Lookup for names known at compile time; it panics on a miss.
func MustLookup(name string) Fault {
	f, ok := Lookup(name)
	if !ok {
		panic("faults: unknown fault " + name)
	}
	return f
}

// OutOfScope returns the failures the fault model excludes.
func OutOfScope() []string { return append([]string(nil), outOfScope...) }
