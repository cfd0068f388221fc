package expr

import (
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/types"
)

// Backends answers the server-signalling functions of an ad-hoc query:
// pg_backend_pid, pg_cancel_backend and pg_terminate_backend. The engine
// supplies it; views never call them (they are volatile, refused at DDL).
type Backends interface {
	// PID is the session's process id (BackendKeyData).
	PID() int64
	// Cancel cancels session pid's running statement; Terminate ends the
	// session. Both report whether such a session existed, and fail with
	// 42501 when the caller may not signal it.
	Cancel(pid int64) (bool, error)
	Terminate(pid int64) (bool, error)
}

func registerBackend(add adder) {
	i4, i8, b := types.TInt4, types.TInt8, types.TBool
	signal := func(name string, terminate bool) func(env *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
		return func(env *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
			if env == nil || env.Backends == nil {
				return nil, errcode.New(errcode.EvaluationError, "%s() is not available here", name).WithSQLState("0A000")
			}
			pid := a[0].(int64)
			if terminate {
				if len(a) > 1 && a[1].(int64) < 0 {
					return nil, errcode.New(errcode.EvaluationError, `"timeout" must not be negative`).WithSQLState("22023")
				}
				return env.Backends.Terminate(pid)
			}
			return env.Backends.Cancel(pid)
		}
	}
	add(&Func{Name: "pg_backend_pid", Result: i4, Volatility: Stable,
		Eval: func(env *Env, _ []types.Type, _ []types.Datum) (types.Datum, error) {
			if env == nil || env.Backends == nil {
				return int64(1), nil
			}
			return env.Backends.PID(), nil
		}},
		&Func{Name: "pg_cancel_backend", Args: []types.Type{i4}, Result: b, Strict: true, Volatility: Volatile, Eval: signal("pg_cancel_backend", false)},
		&Func{Name: "pg_terminate_backend", Args: []types.Type{i4}, Result: b, Strict: true, Volatility: Volatile, Eval: signal("pg_terminate_backend", true)},
		&Func{Name: "pg_terminate_backend", Args: []types.Type{i4, i8}, Result: b, Strict: true, Volatility: Volatile, Eval: signal("pg_terminate_backend", true)},
	)
}
