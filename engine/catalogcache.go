package engine

import (
	"context"
	"fmt"

	"github.com/rockstream/rockstream/actors/control"
)

// snapshot returns the current catalog. The control plane sends a
// catalog's contents as a value (control.SnapshotValue), once per version:
// the engine keeps the newest Snapshot built from one and asks with its
// version, so a statement whose catalog did not change pays one small
// round trip and no rebuild.
func (e *Engine) snapshot(ctx context.Context) (*control.Snapshot, error) {
	cached := e.catalog.Load()
	var known uint64
	if cached != nil {
		known = cached.Version
	}
	m, err := e.ask(ctx, control.ActorID, control.GetSnapshot{Known: known})
	if err != nil {
		return nil, err
	}
	switch r := m.(type) {
	case control.SnapshotUnchanged:
		// INVARIANT: control answers Unchanged only for the Known
		// version, and Known is never 0 then.
		if cached == nil || r.Version != cached.Version {
			return nil, fmt.Errorf("engine: control answered version %d unchanged, the engine holds %d", r.Version, known)
		}
		return cached, nil
	case control.SnapshotValue:
		snap := control.SnapshotOf(r)
		// NB: concurrent sessions race here; keep the newest, but a
		// session always uses the version it was answered.
		for {
			old := e.catalog.Load()
			if old != nil && old.Version >= snap.Version {
				break
			}
			if e.catalog.CompareAndSwap(old, snap) {
				break
			}
		}
		return snap, nil
	}
	return nil, fmt.Errorf("engine: control answered GetSnapshot with %T", m)
}
