package pgcdc

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// Sink is how a source reaches the shard that stores its mirrors.
type Sink interface {
	// Offset is the LSN durably committed with the source's rows (0: none
	// yet, the snapshot has not completed).
	Offset(ctx context.Context) (uint64, error)
	// Commit applies writes atomically; lsn, when non-zero, is stored as
	// the source's offset in the same batch.
	Commit(ctx context.Context, writes []shard.RowWrite, lsn uint64) error
	// Lookup returns a mirror's current row under key (nil: none).
	Lookup(ctx context.Context, table catalog.ID, key types.Row) (types.Row, error)
	// Rows returns every current row of a mirror.
	Rows(ctx context.Context, table catalog.ID) ([]types.Row, error)
}

// Mirror is one mirrored table: the relation RockStream keeps and the
// upstream table it copies.
type Mirror struct {
	Relation *catalog.Relation
}

// Config configures a source.
type Config struct {
	// Name is the source's name (logs).
	Name        string
	Connection  string
	Publication string
	Slot        string
	Mirrors     []Mirror
	Sink        Sink
	Logger      *slog.Logger
}

// States of a source (Status.State).
const (
	StateConnecting   = "CONNECTING"
	StateSnapshotting = "SNAPSHOTTING"
	StateRunning      = "RUNNING"
	// StateRetrying: the last attempt failed (Status.LastError says why);
	// the source tries again after a backoff.
	StateRetrying = "RETRYING"
	// StateBlocked: an incompatible upstream change or an unreadable value
	// stopped the source for good (until it is re-created).
	StateBlocked = "BLOCKED"
	StateStopped = "STOPPED"
)

// Status is what rockstream_catalog.sources and /metrics show of a source.
type Status struct {
	State string
	Slot  string
	// UpstreamLSN is the newest upstream WAL position the server reported;
	// CommittedLSN the position durably committed with the mirrors'
	// rows. Their difference is the lag in bytes of WAL.
	UpstreamLSN, CommittedLSN uint64
	// Rows counts row changes committed since the process started.
	Rows uint64
	// Errors counts failed attempts (each followed by a retry).
	Errors    uint64
	LastError string
}

// Limits (STYLE.md 10).
const (
	// batchRowsMax bounds the row changes of one shard commit: whole
	// upstream transactions are grouped until it is reached.
	batchRowsMax = 10_000
	// txnRowsMax bounds one upstream transaction, which commits whole
	// (its end is the only position a restart can resume from): a larger
	// one blocks the source with RS-1014 rather than growing memory.
	txnRowsMax = 1_000_000
	// flushInterval is how long complete transactions wait for more to
	// join their commit: the latency a commit adds to a quiet stream.
	flushInterval = 20 * time.Millisecond
	// statusInterval is how often the slot's flush position is reported
	// upstream when nothing else does (well inside wal_sender_timeout).
	statusInterval = 5 * time.Second
	// retryBackoffMin and retryBackoffMax bound the wait before a failed
	// source tries again (doubling in between).
	retryBackoffMin = 200 * time.Millisecond
	retryBackoffMax = 10 * time.Second
)

// Source is a running change-data-capture source.
type Source struct {
	cfg    Config
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	status Status
}

// Start runs the source on its own goroutine until Stop.
func Start(cfg Config) *Source {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Source{cfg: cfg, cancel: cancel, done: make(chan struct{}), status: Status{State: StateConnecting, Slot: cfg.Slot}}
	go s.run(ctx)
	return s
}

// Stop ends the source and waits for its goroutine.
func (s *Source) Stop() {
	s.cancel()
	<-s.done
}

// Status returns a copy of the source's status.
func (s *Source) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

func (s *Source) update(f func(*Status)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.status)
}

// blockedError marks an error that stops the source for good.
type blockedError struct{ err error }

func (b blockedError) Error() string { return b.err.Error() }
func (b blockedError) Unwrap() error { return b.err }

func blocked(err error) error { return blockedError{err} }

func (s *Source) run(ctx context.Context) {
	defer close(s.done)
	backoff := retryBackoffMin
	for ctx.Err() == nil {
		err := s.session(ctx)
		if ctx.Err() != nil {
			break
		}
		var b blockedError
		if errors.As(err, &b) {
			s.cfg.Logger.Error("POSTGRES source is BLOCKED and consumes nothing more", "source", s.cfg.Name, "err", b.err)
			s.update(func(st *Status) { st.State, st.LastError = StateBlocked, b.err.Error() })
			<-ctx.Done()
			break
		}
		if s.Status().State == StateRunning {
			// It streamed before failing: a new failure, not a repeated one.
			backoff = retryBackoffMin
		}
		s.cfg.Logger.Warn("POSTGRES source failed; retrying", "source", s.cfg.Name, "err", err, "backoff", backoff)
		s.update(func(st *Status) { st.State, st.LastError = StateRetrying, err.Error(); st.Errors++ })
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, retryBackoffMax)
	}
	s.update(func(st *Status) { st.State = StateStopped })
}

// session runs one connection to the upstream: the snapshot if the
// source has none yet, then the stream, until an error.
func (s *Source) session(ctx context.Context) error {
	s.update(func(st *Status) { st.State = StateConnecting })
	lsn, err := s.cfg.Sink.Offset(ctx)
	if err != nil {
		return err
	}
	repl, err := connect(ctx, s.cfg.Connection, true)
	if err != nil {
		return err
	}
	defer repl.Close(context.Background())
	if lsn == 0 {
		s.update(func(st *Status) { st.State = StateSnapshotting })
		if lsn, err = s.snapshot(ctx, repl); err != nil {
			return err
		}
	}
	s.update(func(st *Status) { st.CommittedLSN = lsn })
	err = pglogrepl.StartReplication(ctx, repl, s.cfg.Slot, pglogrepl.LSN(lsn), pglogrepl.StartReplicationOptions{
		PluginArgs: []string{"proto_version '1'", "publication_names " + quoteLiteral(s.cfg.Publication)},
	})
	if err != nil {
		return replicationError(err, s.cfg.Slot)
	}
	s.update(func(st *Status) { st.State, st.LastError = StateRunning, "" })
	st := newStream(s, repl, lsn)
	return st.run(ctx)
}

// replicationError names why the upstream refused to replicate.
func replicationError(err error, slot string) error {
	return errcode.Wrap(errcode.ConnectorReplicationRefused, err, "the upstream refused to stream replication slot %s", slot)
}

// quoteLiteral quotes s as a SQL string literal.
func quoteLiteral(s string) string {
	out := []byte{'\''}
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			out = append(out, '\'')
		}
		out = append(out, s[i])
	}
	return string(append(out, '\''))
}
