package shard

import (
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/runtime"
)

// A view can also fail while it is maintained, with an operating error
// that is the view's own and not the shard's: a WITH RECURSIVE fixpoint
// that does not converge within its iteration bound (RS-3503, UNION ALL
// over a cycle). Failing the epoch step would stop every view on the
// shard; instead that view, and every view reading it, goes to the same
// FAILED state as a view that cannot be built (failed.go): uninstalled,
// its state dropped (it misses epochs from here on, so it must be
// backfilled when it comes back), RS-1514 with the reason on reads, and
// retried at catalog sync (RECOMPILE or DROP).
//
//	maintained ──step fails (RS-3503)──► failed ──sync: install succeeds──► backfilled

// viewFault reports whether err, returned by a view's step, fails only
// that view (see above).
func viewFault(err error) bool {
	e, ok := errcode.As(err)
	return ok && e.Code == errcode.RecursionNotConverging
}

// failStep marks view v failed with err (a viewFault), and every
// installed view reading it, uninstalls them and drops their state. Reads
// of them name the view (RS-1514) and err says what diverged and the
// bound.
func (a *Actor) failStep(ctx runtime.Context, v *installedView, err error) error {
	failed := map[catalog.ID]bool{v.rel.ID: true}
	kept := a.views[:0]
	var dropped []*installedView
	// NB: views are in creation order, so a view reading a failed view
	// comes after it.
	for _, w := range a.views {
		reads := failed[w.rel.ID]
		for _, s := range w.sources {
			reads = reads || failed[s]
		}
		if !reads {
			kept = append(kept, w)
			continue
		}
		failed[w.rel.ID] = true
		a.fail(ctx, w.rel, err)
		dropped = append(dropped, w)
	}
	a.views = kept
	for _, w := range dropped {
		if err := a.dropState(w.rel.ID); err != nil {
			return err
		}
	}
	return nil
}
