package engine

import (
	"context"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/types"
)

// evaluate runs a statement's evaluation (CPU-bound: the ad-hoc circuit
// over a snapshot) so that a cancelled statement — CancelRequest,
// statement_timeout, a client that went away, a server shutting down —
// returns at once with 57014 instead of finishing first: the session (and
// a graceful shutdown waiting for it) is not held by abandoned work. The
// evaluation itself polls env.Interrupt between operators and stops at the
// next one; until then it runs on in the background, counted in
// Metrics.QueriesRunning.
func (e *Engine) evaluate(ctx context.Context, env *expr.Env, run func() ([]types.Row, error)) ([]types.Row, error) {
	env.Interrupt = func() error {
		if ctx.Err() != nil {
			return canceled(ctx)
		}
		return nil
	}
	// The same per-step memory bound as a view's (op.StepMemory): an
	// ad-hoc join that multiplies its inputs fails with 53200.
	env.StepBytesMax = e.cfg.StepBytesMax
	if e.queryMemory != nil {
		env.SharedMemory = e.queryMemory
	}
	type result struct {
		rows []types.Row
		err  error
	}
	done := make(chan result, 1)
	e.metrics.QueriesRunning.Add(1)
	go func() {
		defer e.metrics.QueriesRunning.Add(-1)
		rows, err := run()
		done <- result{rows, err}
	}()
	select {
	case r := <-done:
		return r.rows, r.err
	case <-ctx.Done():
		return nil, canceled(ctx)
	}
}

func canceled(ctx context.Context) error {
	return errcode.Wrap(errcode.QueryCanceled, context.Cause(ctx), "canceling statement due to user request")
}
