package gateway

import (
	"errors"
	"net"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/rockstream/rockstream/errcode"
)

// Activity is one client session as pg_stat_activity shows it. Zero times
// are NULL.
type Activity struct {
	PID             uint32
	User            string
	Database        string
	ApplicationName string
	ClientAddr      string
	ClientPort      int32
	BackendStart    time.Time
	XactStart       time.Time
	QueryStart      time.Time
	StateChange     time.Time
	// State is PostgreSQL's: active, idle, idle in transaction, idle in
	// transaction (aborted).
	State string
	// Query is the running statement, or the last one of an idle session.
	Query string
	// Copy is the running COPY's progress (nil: none).
	Copy *CopyProgress
}

// CopyProgress is a running COPY as pg_stat_progress_copy shows it.
type CopyProgress struct {
	// Command is "COPY FROM" or "COPY TO"; Type "PIPE" (STDIN/STDOUT).
	Command, Type string
	// Schema and Table name the relation.
	Schema, Table string
	Started       time.Time
	// BytesProcessed counts the COPY data bytes received (FROM) or sent
	// (TO); TuplesProcessed the rows handed to the engine or sent.
	BytesProcessed, TuplesProcessed int64
}

// activity is a conn's pg_stat_activity row, written by the conn
// goroutine and read by any session's query of pg_stat_activity.
type activity struct {
	mu  sync.Mutex
	row Activity
}

// errTerminated is the cancel cause of pg_terminate_backend.
var errTerminated = errors.New("terminated by administrator command") //lint:immutable sentinel error

// startActivity fills in who the session is, after startup.
func (c *conn) startActivity(info SessionInfo) {
	host, port, _ := net.SplitHostPort(info.RemoteAddr)
	p, _ := strconv.ParseInt(port, 10, 32)
	c.activity.mu.Lock()
	defer c.activity.mu.Unlock()
	r := &c.activity.row
	r.PID, r.User, r.Database, r.ApplicationName = info.ProcessID, info.User, info.Database, info.ApplicationName
	r.ClientAddr, r.ClientPort = host, int32(p)
	r.State, r.StateChange = "idle", time.Now()
}

// activeActivity marks the session running query.
func (c *conn) activeActivity(query string) {
	now := time.Now()
	c.activity.mu.Lock()
	defer c.activity.mu.Unlock()
	r := &c.activity.row
	r.State, r.Query, r.QueryStart, r.StateChange = "active", query, now, now
	if r.XactStart.IsZero() {
		r.XactStart = now
	}
}

// idleActivity marks the session waiting for its client (ReadyForQuery).
func (c *conn) idleActivity() {
	c.activity.mu.Lock()
	defer c.activity.mu.Unlock()
	r := &c.activity.row
	switch c.state {
	case txInBlock:
		r.State = "idle in transaction"
	case txFailed:
		r.State = "idle in transaction (aborted)"
	default:
		r.State, r.XactStart = "idle", time.Time{}
	}
	r.StateChange = time.Now()
}

// Activity lists the sessions past startup, by pid.
func (s *Server) Activity() []Activity {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns { //lint:maprange sorted below
		conns = append(conns, c)
	}
	s.mu.Unlock()
	out := make([]Activity, 0, len(conns))
	for _, c := range conns {
		c.activity.mu.Lock()
		row := c.activity.row
		if row.Copy != nil {
			cp := *row.Copy
			row.Copy = &cp
		}
		c.activity.mu.Unlock()
		if row.State != "" {
			out = append(out, row)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out
}

// CancelBackend cancels the running statement of session pid
// (pg_cancel_backend), as a CancelRequest would; false when there is no
// such session.
func (s *Server) CancelBackend(pid uint32) bool {
	c := s.lookupConn(pid)
	if c == nil {
		return false
	}
	c.cancelRunning()
	return true
}

// TerminateBackend ends session pid (pg_terminate_backend): its running
// statement is canceled and the client gets FATAL 57P01 before the
// connection closes; false when there is no such session.
func (s *Server) TerminateBackend(pid uint32) bool {
	c := s.lookupConn(pid)
	if c == nil {
		return false
	}
	c.terminated.Store(true)
	c.cancelMu.Lock()
	if c.cancelFunc != nil {
		c.cancelFunc(errTerminated)
	}
	c.cancelMu.Unlock()
	// An idle session is blocked reading its client: say why and close
	// the connection under ioMu, which the conn goroutine gives up only
	// while it waits for the client (a busy one ends itself: loop).
	go func() {
		c.notify.ioMu.Lock()
		defer c.notify.ioMu.Unlock()
		c.sendTerminated()
		_ = c.netConn.Close()
	}()
	return true
}

// sendTerminated tells the client its session was terminated (once).
func (c *conn) sendTerminated() {
	c.terminateOnce.Do(func() {
		resp := errorResponse(errcode.New(errcode.AdminShutdown, "terminating connection due to administrator command"))
		resp.Severity, resp.SeverityUnlocalized = "FATAL", "FATAL"
		c.backend.Send(resp)
		_ = c.backend.Flush()
	})
}

func (s *Server) lookupConn(pid uint32) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns[pid]
}

// copyProgressLogInterval is how often a running COPY logs its progress.
const copyProgressLogInterval = 5 * time.Second

// copyProgress tracks a running COPY for pg_stat_progress_copy and the
// log: a line at its start, every copyProgressLogInterval, and its end. A
// COPY FROM adds to it from two goroutines (the bytes read, the rows
// written), under c.activity.mu.
type copyProgress struct {
	c       *conn
	lastLog time.Time
}

func (c *conn) startCopyProgress(command string, spec *copySpec) *copyProgress {
	now := time.Now()
	c.activity.mu.Lock()
	c.activity.row.Copy = &CopyProgress{Command: command, Type: "PIPE", Schema: spec.schema, Table: spec.table, Started: now}
	c.activity.mu.Unlock()
	c.log.Info("COPY started", "command", command, "table", spec.table)
	return &copyProgress{c: c, lastLog: now}
}

// add counts bytes and tuples processed.
func (p *copyProgress) add(bytes, tuples int64) {
	c := p.c
	c.activity.mu.Lock()
	cp := c.activity.row.Copy
	cp.BytesProcessed += bytes
	cp.TuplesProcessed += tuples
	snapshot := *cp
	now := time.Now()
	logNow := now.Sub(p.lastLog) >= copyProgressLogInterval
	if logNow {
		p.lastLog = now
	}
	c.activity.mu.Unlock()
	if logNow {
		c.log.Info("COPY progress", "command", snapshot.Command, "table", snapshot.Table, "rows", snapshot.TuplesProcessed,
			"bytes", snapshot.BytesProcessed, "rows_per_second", rate(snapshot.TuplesProcessed, now.Sub(snapshot.Started)))
	}
}

// end logs the COPY's end and removes it from pg_stat_progress_copy.
func (p *copyProgress) end(err error) {
	c := p.c
	c.activity.mu.Lock()
	cp := *c.activity.row.Copy
	c.activity.row.Copy = nil
	c.activity.mu.Unlock()
	elapsed := time.Since(cp.Started)
	args := []any{"command", cp.Command, "table", cp.Table, "rows", cp.TuplesProcessed, "bytes", cp.BytesProcessed,
		"seconds", elapsed.Seconds(), "rows_per_second", rate(cp.TuplesProcessed, elapsed)}
	if err != nil {
		c.log.Info("COPY failed", append(args, "err", err)...)
		return
	}
	c.log.Info("COPY finished", args...)
}

func rate(n int64, d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(float64(n) / d.Seconds())
}
