package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rockstream/rockstream/faults"
	"github.com/rockstream/rockstream/slate/objstore"
)

// FaultConfig configures a FaultyStore. The zero value injects nothing and
// charges no latency. DrawFaultConfig draws every field from its faults/
// entry.
type FaultConfig struct {
	LatencyBase             time.Duration // faults.ObjstoreLatency "base"
	LatencyTailMean         time.Duration // faults.ObjstoreLatency "tail_mean" (exponential)
	LatencySpikeProbability float64       // faults.ObjstoreLatency "spike_probability"
	LatencySpike            time.Duration // faults.ObjstoreLatency "spike" (uniform up to)

	TransientProbability     float64 // faults.ObjstoreTransient
	AmbiguousProbability     float64 // faults.ObjstoreAmbiguousWrite "probability"
	AmbiguousAppliedFraction float64 // faults.ObjstoreAmbiguousWrite "applied_fraction"
	// CrashAfterWriteProbability needs a crash hook (SetCrashHook); without
	// one the fault is not injected.
	CrashAfterWriteProbability float64 // faults.ObjstoreCrashAfterWrite
	StaleListProbability       float64 // faults.ObjstoreStaleList "probability"
	StaleListWindow            int     // faults.ObjstoreStaleList "window" (writes)
	// CorruptReadProbability flips one byte of a read's result. Opt-in:
	// DrawFaultConfig leaves it 0, because only checksummed formats can
	// survive it; tests of such formats set it.
	CorruptReadProbability float64 // faults.ObjstoreCorruptRead
}

// DrawFaultConfig draws a fault configuration from the faults/ ranges.
func DrawFaultConfig(rnd *rand.Rand) FaultConfig {
	return FaultConfig{
		LatencyBase:                drawMillis(rnd, faults.ObjstoreLatency, "base"),
		LatencyTailMean:            drawMillis(rnd, faults.ObjstoreLatency, "tail_mean"),
		LatencySpikeProbability:    draw(rnd, faults.ObjstoreLatency, "spike_probability"),
		LatencySpike:               drawMillis(rnd, faults.ObjstoreLatency, "spike"),
		TransientProbability:       draw(rnd, faults.ObjstoreTransient, "probability"),
		AmbiguousProbability:       draw(rnd, faults.ObjstoreAmbiguousWrite, "probability"),
		AmbiguousAppliedFraction:   draw(rnd, faults.ObjstoreAmbiguousWrite, "applied_fraction"),
		CrashAfterWriteProbability: draw(rnd, faults.ObjstoreCrashAfterWrite, "probability"),
		StaleListProbability:       draw(rnd, faults.ObjstoreStaleList, "probability"),
		StaleListWindow:            int(draw(rnd, faults.ObjstoreStaleList, "window")),
	}
}

func (c FaultConfig) String() string {
	return fmt.Sprintf("latency=%v+exp(%v) spike=%.3f(up to %v) transient=%.3f ambiguous=%.3f(applied %.2f) crash-after-write=%.3f stale-list=%.3f(window %d) corrupt-read=%.4f",
		c.LatencyBase, c.LatencyTailMean, c.LatencySpikeProbability, c.LatencySpike, c.TransientProbability,
		c.AmbiguousProbability, c.AmbiguousAppliedFraction, c.CrashAfterWriteProbability, c.StaleListProbability, c.StaleListWindow, c.CorruptReadProbability)
}

// staleListWindowMax bounds the mutation history kept for stale LISTs; it is
// the top of faults.ObjstoreStaleList's "window" range.
const staleListWindowMax = 8

// FaultStats counts the faults a FaultyStore injected.
type FaultStats struct {
	Calls, Transient, AmbiguousApplied, AmbiguousLost, CrashAfterWrite, StaleList, CorruptRead int
	Latency                                                                                    time.Duration
}

// mutation remembers what one applied write replaced, so a stale LIST can
// undo it.
type mutation struct {
	key     string
	existed bool
	before  objstore.ObjectInfo
}

// FaultyStore wraps an objstore.Store and injects the object-store faults of
// the fault model (faults.Objstore*): sampled latency reported to a latency
// sink (the simulator charges it to the calling actor's virtual clock),
// transient errors, ambiguous writes (reported as objstore.ErrAmbiguous,
// applied or not), crash-after-write (via a crash hook) and stale LISTs.
//
// It is usable on its own, e.g. in slate's tests:
//
//	store := sim.NewFaultyStore(objstore.NewMemory(), sim.NewStream(seed, "objstore"), sim.DrawFaultConfig(rnd))
//
// Safe for concurrent use; deterministic when used from one goroutine.
type FaultyStore struct {
	inner objstore.Store

	mu       sync.Mutex
	rnd      *rand.Rand
	cfg      FaultConfig
	disabled bool
	latency  func(time.Duration)
	crash    func()
	history  []mutation // the last staleListWindowMax applied writes, oldest first
	stats    FaultStats
}

var _ objstore.Store = (*FaultyStore)(nil)

// NewFaultyStore wraps inner. rnd drives every fault decision.
func NewFaultyStore(inner objstore.Store, rnd *rand.Rand, cfg FaultConfig) *FaultyStore {
	return &FaultyStore{inner: inner, rnd: rnd, cfg: cfg}
}

// SetLatencySink sets the function each call's sampled latency is reported
// to. Without one, latency is only counted in Stats.
func (f *FaultyStore) SetLatencySink(sink func(time.Duration)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.latency = sink
}

// SetCrashHook sets the function called after a write to inject
// crash-after-write. It is expected not to return (the simulator panics to
// unwind the crashed actor); if it returns, the write reports success.
func (f *FaultyStore) SetCrashHook(crash func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.crash = crash
}

// SetFaultsEnabled turns fault injection (not latency) off or on; the
// liveness phase turns it off.
func (f *FaultyStore) SetFaultsEnabled(enabled bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.disabled = !enabled
}

// Stats returns the counts of injected faults.
func (f *FaultyStore) Stats() FaultStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

// Inner returns the wrapped store (the durable truth, for checkers).
func (f *FaultyStore) Inner() objstore.Store { return f.inner }

func (f *FaultyStore) chance(p float64) bool {
	return !f.disabled && p > 0 && f.rnd.Float64() < p
}

// begin charges one call's latency and decides whether it fails
// transiently. Called with f.mu held.
func (f *FaultyStore) begin() (transient bool) {
	f.stats.Calls++
	d := f.cfg.LatencyBase
	if f.cfg.LatencyTailMean > 0 {
		d += time.Duration(f.rnd.ExpFloat64() * float64(f.cfg.LatencyTailMean))
	}
	if f.cfg.LatencySpikeProbability > 0 && f.rnd.Float64() < f.cfg.LatencySpikeProbability {
		d += time.Duration(f.rnd.Float64() * float64(f.cfg.LatencySpike))
	}
	f.stats.Latency += d
	if f.latency != nil && d > 0 {
		f.latency(d)
	}
	if f.chance(f.cfg.TransientProbability) {
		f.stats.Transient++
		return true
	}
	return false
}

func transientError(op, key string) error {
	return fmt.Errorf("sim objstore: %s %q: %w", op, key, objstore.ErrTransient)
}

// Get implements objstore.Store.
func (f *FaultyStore) Get(ctx context.Context, key string) (objstore.Object, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.begin() {
		return objstore.Object{}, transientError("get", key)
	}
	obj, err := f.inner.Get(ctx, key)
	if err == nil {
		obj.Data = f.maybeCorrupt(obj.Data)
	}
	return obj, err
}

// maybeCorrupt returns data, or a copy with one byte flipped
// (faults.ObjstoreCorruptRead). The stored object is never touched.
// Called with f.mu held.
func (f *FaultyStore) maybeCorrupt(data []byte) []byte {
	if len(data) == 0 || !f.chance(f.cfg.CorruptReadProbability) {
		return data
	}
	f.stats.CorruptRead++
	out := append([]byte(nil), data...)
	i := f.rnd.IntN(len(out))
	out[i] ^= byte(1 + f.rnd.IntN(255))
	return out
}

// GetRange implements objstore.Store.
func (f *FaultyStore) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.begin() {
		return nil, transientError("get range", key)
	}
	data, err := f.inner.GetRange(ctx, key, offset, length)
	if err == nil {
		data = f.maybeCorrupt(data)
	}
	return data, err
}

// write runs one write with the write faults. apply performs it on inner.
// Called with f.mu held.
func (f *FaultyStore) write(ctx context.Context, op, key string, apply func() (objstore.Version, error)) (objstore.Version, error) {
	if f.begin() {
		return "", transientError(op, key)
	}
	if f.chance(f.cfg.AmbiguousProbability) {
		if f.rnd.Float64() < f.cfg.AmbiguousAppliedFraction {
			f.stats.AmbiguousApplied++
			_, _ = f.applyRecorded(ctx, key, apply) // NB: the caller never learns the outcome.
		} else {
			f.stats.AmbiguousLost++
		}
		return "", fmt.Errorf("sim objstore: %s %q: %w", op, key, objstore.ErrAmbiguous)
	}
	v, err := f.applyRecorded(ctx, key, apply)
	if f.crash != nil && f.chance(f.cfg.CrashAfterWriteProbability) {
		f.stats.CrashAfterWrite++
		crash := f.crash
		f.mu.Unlock()
		// NB: the hook normally does not return (it unwinds the crashed
		// actor); re-lock so the deferred unlock stays balanced if it does.
		defer f.mu.Lock()
		crash()
	}
	return v, err
}

// applyRecorded applies a write and remembers what it replaced for stale
// LISTs.
func (f *FaultyStore) applyRecorded(ctx context.Context, key string, apply func() (objstore.Version, error)) (objstore.Version, error) {
	var m mutation
	record := f.cfg.StaleListProbability > 0
	if record {
		m = f.snapshotKey(ctx, key)
	}
	v, err := apply()
	if err == nil && record {
		f.history = append(f.history, m)
		if len(f.history) > staleListWindowMax {
			f.history = f.history[1:]
		}
	}
	return v, err
}

func (f *FaultyStore) snapshotKey(ctx context.Context, key string) mutation {
	m := mutation{key: key}
	if obj, err := f.inner.Get(ctx, key); err == nil {
		m.existed = true
		m.before = objstore.ObjectInfo{Key: key, Size: int64(len(obj.Data)), Version: obj.Version}
	}
	return m
}

// Put implements objstore.Store.
func (f *FaultyStore) Put(ctx context.Context, key string, data []byte) (objstore.Version, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.write(ctx, "put", key, func() (objstore.Version, error) { return f.inner.Put(ctx, key, data) })
}

// PutIfAbsent implements objstore.Store.
func (f *FaultyStore) PutIfAbsent(ctx context.Context, key string, data []byte) (objstore.Version, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.write(ctx, "put-if-absent", key, func() (objstore.Version, error) { return f.inner.PutIfAbsent(ctx, key, data) })
}

// PutIfMatch implements objstore.Store.
func (f *FaultyStore) PutIfMatch(ctx context.Context, key string, data []byte, match objstore.Version) (objstore.Version, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.write(ctx, "put-if-match", key, func() (objstore.Version, error) { return f.inner.PutIfMatch(ctx, key, data, match) })
}

// Delete implements objstore.Store.
func (f *FaultyStore) Delete(ctx context.Context, key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, err := f.write(ctx, "delete", key, func() (objstore.Version, error) { return "", f.inner.Delete(ctx, key) })
	return err
}

// List implements objstore.Store. A stale LIST undoes the last k applied
// writes (1 <= k <= StaleListWindow) before answering.
func (f *FaultyStore) List(ctx context.Context, prefix string) ([]objstore.ObjectInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.begin() {
		return nil, transientError("list", prefix)
	}
	infos, err := f.inner.List(ctx, prefix)
	if err != nil || len(f.history) == 0 || !f.chance(f.cfg.StaleListProbability) {
		return infos, err
	}
	window := min(max(f.cfg.StaleListWindow, 1), len(f.history))
	undo := 1 + f.rnd.IntN(window)
	f.stats.StaleList++
	byKey := make(map[string]objstore.ObjectInfo, len(infos))
	for _, info := range infos {
		byKey[info.Key] = info
	}
	for i := len(f.history) - 1; i >= len(f.history)-undo; i-- {
		m := f.history[i]
		if !strings.HasPrefix(m.key, prefix) {
			continue
		}
		if m.existed {
			byKey[m.key] = m.before
		} else {
			delete(byKey, m.key)
		}
	}
	out := make([]objstore.ObjectInfo, 0, len(byKey))
	//lint:maprange the listing is sorted below, as the Store contract requires.
	for _, info := range byKey {
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// IsInjected reports whether err is one of the errors a FaultyStore injects
// (transient or ambiguous), as opposed to a real answer of the store.
func IsInjected(err error) bool {
	return errors.Is(err, objstore.ErrTransient) || errors.Is(err, objstore.ErrAmbiguous)
}
