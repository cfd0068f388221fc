package engine

import (
	"context"
	"log/slog"
	"strings"
	"sync"
)

// recentLogLinesMax bounds the log lines kept for support bundles
// (/debug/logs): enough to cover the minutes before a problem at the
// server's usual rate of a few lines a second, at most a few hundred KiB.
const recentLogLinesMax = 2000

// recentLogs keeps the server's last log lines, oldest first, dropping
// the oldest when full.
type recentLogs struct {
	mu    sync.Mutex
	lines []string
	next  int // where the next line goes once lines is full
	full  bool
}

// Write implements io.Writer for a slog.TextHandler, which writes one
// record per call.
func (r *recentLogs) Write(p []byte) (int, error) {
	line := strings.TrimRight(string(p), "\n")
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.full {
		r.lines = append(r.lines, line)
		if len(r.lines) == recentLogLinesMax {
			r.full = true
		}
		return len(p), nil
	}
	r.lines[r.next] = line
	r.next = (r.next + 1) % recentLogLinesMax
	return len(p), nil
}

// Lines returns the kept lines, oldest first.
func (r *recentLogs) Lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.full {
		return append([]string(nil), r.lines...)
	}
	return append(append([]string(nil), r.lines[r.next:]...), r.lines[:r.next]...)
}

// teeHandler sends every record to two handlers: the server's own log and
// the recent-lines ring.
type teeHandler struct{ a, b slog.Handler }

func (t teeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return t.a.Enabled(ctx, l) || t.b.Enabled(ctx, l)
}

func (t teeHandler) Handle(ctx context.Context, r slog.Record) error {
	var errA error
	if t.a.Enabled(ctx, r.Level) {
		errA = t.a.Handle(ctx, r.Clone())
	}
	if t.b.Enabled(ctx, r.Level) {
		if err := t.b.Handle(ctx, r); err != nil && errA == nil {
			errA = err
		}
	}
	return errA
}

func (t teeHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return teeHandler{t.a.WithAttrs(attrs), t.b.WithAttrs(attrs)}
}

func (t teeHandler) WithGroup(name string) slog.Handler {
	return teeHandler{t.a.WithGroup(name), t.b.WithGroup(name)}
}

// withRecentLogs returns a logger that logs through l and keeps the last
// lines (at Info and above) in ring.
func withRecentLogs(l *slog.Logger, ring *recentLogs) *slog.Logger {
	return slog.New(teeHandler{l.Handler(), slog.NewTextHandler(ring, nil)})
}
