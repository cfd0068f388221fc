package engine

import (
	"context"
	"sync"

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
	e.evalWorkers.run(func() {
		defer e.metrics.QueriesRunning.Add(-1)
		rows, err := run()
		done <- result{rows, err}
	})
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

// evalWorkers are the goroutines evaluate runs evaluations on. A worker
// that finished one waits for the next instead of exiting: a fresh
// goroutine starts with a small stack and grows it by copying, several
// times per ad-hoc query (about an eighth of a point SELECT's CPU), while a
// kept one has grown it already. At most evalWorkersIdleMax wait.
type evalWorkers struct {
	mu     sync.Mutex
	idle   []chan func()
	closed bool
}

const evalWorkersIdleMax = 32

// run runs job on an idle worker, or on a new one if none is idle.
func (w *evalWorkers) run(job func()) {
	w.mu.Lock()
	if n := len(w.idle); n > 0 {
		jobs := w.idle[n-1]
		w.idle = w.idle[:n-1]
		w.mu.Unlock()
		jobs <- job
		return
	}
	w.mu.Unlock()
	jobs := make(chan func(), 1)
	jobs <- job
	go w.work(jobs)
}

// work runs the jobs sent to it, waiting idle between them, until there
// are enough idle workers or the engine closed.
func (w *evalWorkers) work(jobs chan func()) {
	for job := range jobs {
		job()
		w.mu.Lock()
		if w.closed || len(w.idle) >= evalWorkersIdleMax {
			w.mu.Unlock()
			return
		}
		w.idle = append(w.idle, jobs)
		w.mu.Unlock()
	}
}

// close ends the idle workers; later evaluations run on goroutines that
// exit when done.
func (w *evalWorkers) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	for _, jobs := range w.idle {
		close(jobs)
	}
	w.idle = nil
}
