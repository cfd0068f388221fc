// Package sink is what every sink (CREATE SINK name FROM view INTO KAFKA
// or POSTGRES) shares: how it reads its view's changes (Changes, the
// SUBSCRIBE path package engine provides), its retry loop and status
// (Runner), the loop cutting the changes into transactions at epoch
// boundaries (Deliver), and the grouping of one epoch step's changes by
// key (ByKey).
//
// Each sink keeps its last delivered epoch in the system it writes, in the
// same transaction as the changes (the Kafka sink in a record header, the
// PostgreSQL sink in a progress row), and a (re)started session reads it
// back and resumes AS OF it: nothing local can disagree with what was
// delivered, so no epoch is lost or written twice.
//
// It runs at the edge of the process, on a goroutine per sink; the
// deterministic packages never see it.
package sink

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Changes is how a sink reads its view's changes: the SUBSCRIBE path
// (package engine subscribes an edge actor, as SUBSCRIBE does).
type Changes interface {
	// Open subscribes to the view. Without resume, the first update is
	// the view's snapshot at its current frontier (After 0); with it,
	// every change after epoch asOf, then live.
	Open(ctx context.Context, resume bool, asOf uint64) (ChangeStream, error)
}

// ChangeStream is one subscription of a view.
type ChangeStream interface {
	// Next blocks until at least one update: the view's changes in
	// epochs (After, Epoch], in order, each one complete.
	Next(ctx context.Context) ([]Update, error)
	Close()
}

// Update is a view's changes in epochs (After, Epoch].
type Update struct {
	After, Epoch uint64
	Delta        zset.Batch
}

// States of a sink (Status.State).
const (
	StateConnecting = "CONNECTING"
	StateRunning    = "RUNNING"
	// StateRetrying: the last session failed (Status.LastError says why);
	// the sink starts another after a backoff.
	StateRetrying = "RETRYING"
	StateStopped  = "STOPPED"
)

// Status is what rockstream_catalog.sinks and /metrics show of a sink.
type Status struct {
	State string
	// Epoch is the last epoch delivered (committed downstream); 0 before
	// the first.
	Epoch uint64
	// Records and Transactions count what this process committed.
	Records, Transactions uint64
	Errors                uint64
	LastError             string
}

// Limits (STYLE.md 10).
const (
	// retryBackoffMin and retryBackoffMax bound the wait before a failed
	// session is followed by another (doubling in between, back to the
	// minimum once a session delivered something).
	retryBackoffMin = 200 * time.Millisecond
	retryBackoffMax = 10 * time.Second
)

// Session is one attempt of a sink: it reads its last delivered epoch
// downstream, opens its view's changes after it and delivers them until
// an error (or ctx ends). Any failure ends the session, and the next one
// starts again from what the downstream system committed.
type Session func(ctx context.Context, r *Runner) error

// Runner runs a sink's sessions on its own goroutine until Stop.
type Runner struct {
	name, kind string
	log        *slog.Logger
	cancel     context.CancelFunc
	done       chan struct{}

	mu     sync.Mutex
	status Status
}

// Start runs session again and again (with a backoff after each failure)
// until Stop. kind names the sink in logs ("KAFKA", "POSTGRES").
func Start(name, kind string, log *slog.Logger, session Session) *Runner {
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Runner{name: name, kind: kind, log: log, cancel: cancel, done: make(chan struct{}), status: Status{State: StateConnecting}}
	go r.run(ctx, session)
	return r
}

// Stop ends the sink and waits for its goroutine. A downstream
// transaction in flight is abandoned: it either committed (and the next
// session sees it) or not (and it is written again).
func (r *Runner) Stop() {
	r.cancel()
	<-r.done
}

// Status returns a copy of the sink's status.
func (r *Runner) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// Update changes the sink's status under its lock.
func (r *Runner) Update(f func(*Status)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.status)
}

func (r *Runner) run(ctx context.Context, session Session) {
	defer close(r.done)
	backoff := retryBackoffMin
	for ctx.Err() == nil {
		delivered := r.Status().Transactions
		err := session(ctx, r)
		if ctx.Err() != nil {
			break
		}
		if r.Status().Transactions > delivered {
			backoff = retryBackoffMin
		}
		r.log.Warn(r.kind+" sink failed; retrying", "sink", r.name, "err", err, "backoff", backoff)
		r.Update(func(st *Status) { st.State, st.LastError = StateRetrying, err.Error(); st.Errors++ })
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, retryBackoffMax)
	}
	r.Update(func(st *Status) { st.State = StateStopped })
}

// Transaction is one downstream transaction being built by Deliver.
type Transaction interface {
	// Add adds one update's changes and returns how many records (rows,
	// messages) they became.
	Add(u Update) (records int, err error)
	// Commit writes what was added, with through as the last delivered
	// epoch, in one downstream transaction, and empties the transaction.
	// It is called only when some records were added.
	Commit(ctx context.Context, through uint64) error
	// Reset empties the transaction (nothing was added, or it was
	// committed).
	Reset()
}

// Deliver marks the session RUNNING from epoch (the last delivered one)
// on and writes the stream's updates in transactions of about
// maxRecords records: a batch of updates is cut at epoch boundaries
// once past it (one epoch is never split, so one huge epoch is one
// transaction). An update without changes is not written: a session
// resuming from an earlier epoch replays only such empty steps. It
// returns the first error.
func (r *Runner) Deliver(ctx context.Context, stream ChangeStream, epoch uint64, maxRecords int, tx Transaction) error {
	r.Update(func(st *Status) { st.State, st.LastError, st.Epoch = StateRunning, "", max(st.Epoch, epoch) })
	for {
		updates, err := stream.Next(ctx)
		if err != nil {
			return err
		}
		for len(updates) > 0 {
			tx.Reset()
			records, n := 0, 0
			for n < len(updates) && (n == 0 || records < maxRecords) {
				k, err := tx.Add(updates[n])
				if err != nil {
					return err
				}
				records += k
				n++
			}
			last := updates[n-1].Epoch
			updates = updates[n:]
			if records > 0 {
				if err := tx.Commit(ctx, last); err != nil {
					return err
				}
			}
			r.Update(func(st *Status) {
				st.Epoch = max(st.Epoch, last)
				if records > 0 {
					st.Records += uint64(records)
					st.Transactions++
				}
			})
		}
	}
}

// KeyChange is what one epoch step did to the view's row of one key: the
// row deleted (Before, when Deleted) and the row inserted (After, when
// Inserted). Both set is an update of the key's row.
type KeyChange struct {
	Key               string
	Before, After     types.Row
	Deleted, Inserted bool
}

// DuplicateKeyError reports a key with more than one row in the view: the
// sink's key columns do not identify a row.
type DuplicateKeyError struct {
	Key  string
	Rows int64
}

func (e *DuplicateKeyError) Error() string { return "duplicate key " + e.Key }

// ByKey groups a delta by key (key renders a row's key columns), sorted
// by that rendering. A key inserted or deleted more than once is a
// *DuplicateKeyError.
func ByKey(delta zset.Batch, key func(types.Row) string) ([]KeyChange, error) {
	delta = zset.Consolidate(delta)
	type counted struct {
		KeyChange
		deletes, inserts int64
	}
	byKey := map[string]*counted{}
	var keys []string
	for i, row := range delta.Rows {
		k := key(row)
		c, ok := byKey[k]
		if !ok {
			c = &counted{KeyChange: KeyChange{Key: k}}
			byKey[k] = c
			keys = append(keys, k)
		}
		if w := delta.Weights[i]; w > 0 {
			c.inserts += w
			c.After, c.Inserted = row, true
		} else {
			c.deletes -= w
			c.Before, c.Deleted = row, true
		}
	}
	sort.Strings(keys)
	out := make([]KeyChange, 0, len(keys))
	for _, k := range keys {
		c := byKey[k]
		if c.inserts > 1 || c.deletes > 1 {
			return nil, &DuplicateKeyError{Key: k, Rows: max(c.inserts, c.deletes)}
		}
		out = append(out, c.KeyChange)
	}
	return out, nil
}

// KeyError is err (from ByKey) as code's error naming the sink, the epoch
// and its key columns; other errors pass unchanged.
func KeyError(err error, code *errcode.Code, sink string, epoch uint64, keyColumns []string) error {
	var dup *DuplicateKeyError
	if !errors.As(err, &dup) {
		return err
	}
	return errcode.New(code, "sink %s: at epoch %d the view has %d rows for key %s: the key columns (%s) do not identify a row",
		sink, epoch, dup.Rows, dup.Key, strings.Join(keyColumns, ", "))
}

// AppendRowJSON writes a row as a JSON object of columns (as PostgreSQL's
// row_to_json writes it), without its closing brace.
func AppendRowJSON(b *strings.Builder, columns []catalog.Column, row types.Row) {
	b.WriteByte('{')
	for i, c := range columns {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(types.QuoteJSON(c.Name))
		b.WriteByte(':')
		var d types.Datum
		if i < len(row) {
			d = row[i]
		}
		expr.AppendJSON(b, c.Type, d)
	}
}

// KeyJSON is a row's key columns (indexes into columns) as a JSON object.
func KeyJSON(columns []catalog.Column, key []int, row types.Row) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, at := range key {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(types.QuoteJSON(columns[at].Name))
		b.WriteByte(':')
		expr.AppendJSON(&b, columns[at].Type, row[at])
	}
	b.WriteByte('}')
	return b.String()
}
