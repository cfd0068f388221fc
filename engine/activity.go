package engine

import (
	"context"

	"github.com/rockstream/rockstream/actors/control"
	sessionactor "github.com/rockstream/rockstream/actors/session"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/syscat"
)

// Sessions as pg_stat_activity shows them, and signalling them
// (pg_cancel_backend, pg_terminate_backend): the gateway knows each
// connection's state and statement; a session actor knows whether the
// session waits for a row lock (wait_event_type Lock).

// activityRows lists the server's sessions.
func (s *session) activityRows(ctx context.Context, snap *control.Snapshot) []syscat.Activity {
	gw := s.e.gateway.Load()
	if gw == nil {
		return nil
	}
	rows := gw.Activity()
	out := make([]syscat.Activity, 0, len(rows))
	for _, a := range rows {
		row := syscat.Activity{PID: int64(a.PID), User: a.User, Database: a.Database, ApplicationName: a.ApplicationName,
			ClientAddr: a.ClientAddr, ClientPort: int64(a.ClientPort), BackendStart: a.BackendStart, XactStart: a.XactStart,
			QueryStart: a.QueryStart, StateChange: a.StateChange, State: a.State, Query: a.Query}
		if cp := a.Copy; cp != nil {
			row.Copy = &syscat.CopyProgress{Command: cp.Command, Type: cp.Type, Relation: cp.Table, Started: cp.Started,
				BytesDone: cp.BytesProcessed, TuplesDone: cp.TuplesProcessed}
			name := []string{cp.Table}
			if cp.Schema != "" {
				name = []string{cp.Schema, cp.Table}
			}
			if rel, ok := snap.LookupRelation(name); ok && cp.Table != "" {
				row.Copy.RelationOID = int64(syscat.RelationOID(rel.ID))
			}
		}
		if a.State == "active" && a.PID != s.info.ProcessID {
			if other := s.e.sessionByPID(a.PID); other != nil {
				if m, err := s.e.ask(ctx, other.actor, sessionactor.GetState{}); err == nil && m.(sessionactor.State).WaitingForLock {
					row.WaitEventType, row.WaitEvent = "Lock", "transactionid"
				}
			}
		}
		if s.info.Unprivileged && a.User != s.info.User {
			// As PostgreSQL: other roles' statements are not shown to
			// roles that may not see them.
			row.Query = "<insufficient privilege>"
		}
		out = append(out, row)
	}
	return out
}

func (e *Engine) sessionByPID(pid uint32) *session {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.byPID[pid]
}

// PID implements expr.Backends.
func (s *session) PID() int64 {
	if s.info.ProcessID == 0 {
		return 1
	}
	return int64(s.info.ProcessID)
}

// Cancel implements expr.Backends (pg_cancel_backend).
func (s *session) Cancel(pid int64) (bool, error) {
	gw, err := s.mayAct(pid, "cancel")
	if gw == nil || err != nil {
		return false, err
	}
	return gw.CancelBackend(uint32(pid)), nil
}

// Terminate implements expr.Backends (pg_terminate_backend).
func (s *session) Terminate(pid int64) (bool, error) {
	gw, err := s.mayAct(pid, "terminate")
	if gw == nil || err != nil {
		return false, err
	}
	return gw.TerminateBackend(uint32(pid)), nil
}

// mayAct checks the session may signal session pid, as PostgreSQL
// allows: superusers any, other roles sessions of their own role. It
// returns nil when there is no such session.
func (s *session) mayAct(pid int64, verb string) (*gateway.Server, error) {
	gw := s.e.gateway.Load()
	if gw == nil || pid <= 0 || pid > 1<<32-1 {
		return nil, nil
	}
	target := s.e.sessionByPID(uint32(pid))
	if target == nil {
		return nil, nil
	}
	if s.info.Unprivileged && target.info.User != s.info.User {
		// PostgreSQL 15's messages (pg_signal_backend).
		what, whose := "query", "query is being canceled"
		if verb == "terminate" {
			what, whose = "process", "process is being terminated"
		}
		if !target.info.Unprivileged {
			return nil, errcode.New(errcode.SignalBackendDenied, "must be a superuser to %s superuser %s", verb, what)
		}
		return nil, errcode.New(errcode.SignalBackendDenied, "must be a member of the role whose %s or member of pg_signal_backend", whose)
	}
	return gw, nil
}
