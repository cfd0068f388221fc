package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
	"github.com/rockstream/rockstream/ivm/types"
)

// Sink is how a source reaches the shard that stores its relations.
type Sink interface {
	// Offset is the next offset to read of a partition, as durably
	// committed with the source's rows (0: none committed yet).
	Offset(ctx context.Context, partition uint32) (uint64, error)
	// Commit applies writes and records offsets (the next offset of each
	// partition the writes came from) atomically, in one durable batch.
	Commit(ctx context.Context, writes []shard.RowWrite, offsets []shard.SourceOffset) error
}

// Config configures a source.
type Config struct {
	// Name is the source's name (logs).
	Name string
	// Source is the source's relation, which holds its rows; Errors its
	// dead-letter relation (DeadLetterColumns).
	Source, Errors catalog.ID
	Spec           *ddl.KafkaSource
	Sink           Sink
	Logger         *slog.Logger
}

// DeadLetterColumns are the columns of a KAFKA source's dead-letter
// relation (source name + ddl.KafkaErrorsSuffix): one row per record
// that could not be decoded, keyed by its position.
func DeadLetterColumns() []catalog.Column {
	return []catalog.Column{
		{Name: "kafka_partition", Type: types.TInt4, NotNull: true},
		{Name: "kafka_offset", Type: types.TInt8, NotNull: true},
		{Name: "error", Type: types.TText, NotNull: true},
		{Name: "raw_key", Type: types.TBytea},
		{Name: "raw_value", Type: types.TBytea},
	}
}

// DeadLetterKey is the primary key of the dead-letter relation.
var DeadLetterKey = []int{0, 1}

// States of a source (Status.State).
const (
	StateConnecting = "CONNECTING"
	StateRunning    = "RUNNING"
	// StateRetrying: the last attempt failed (Status.LastError says why);
	// the source tries again after a backoff.
	StateRetrying = "RETRYING"
	StateStopped  = "STOPPED"
)

// Status is what rockstream_catalog.sources and /metrics show of a source.
type Status struct {
	State string
	// Partitions is the topic's partition count (0 before it was read).
	Partitions int
	// Lag is how many records the brokers hold past the committed
	// offsets (high watermark − committed offset, summed over partitions).
	Lag uint64
	// Rows counts the records committed as rows since the process started;
	// BadRecords the ones committed to the dead-letter relation.
	Rows, BadRecords uint64
	// Errors counts failed attempts (each followed by a retry).
	Errors    uint64
	LastError string
}

// Limits (STYLE.md 10).
const (
	// batchRecordsMax bounds the records of one shard commit (one poll).
	batchRecordsMax = 10_000
	// deadLetterBytesMax bounds the raw key and value a dead letter keeps:
	// a longer one is cut (the error says so), so one huge bad record
	// does not become a huge row.
	deadLetterBytesMax = 64 << 10
	// partitionCheckInterval is how often the topic's partition count is
	// read again: new partitions are read from the next check on.
	partitionCheckInterval = 30 * time.Second
	// retryBackoffMin and retryBackoffMax bound the wait before a failed
	// source tries again (doubling in between).
	retryBackoffMin = 200 * time.Millisecond
	retryBackoffMax = 10 * time.Second
)

// Source is a running Kafka source.
type Source struct {
	cfg    Config
	dec    decoder
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	status Status
	// committed and high are, per partition, the committed next offset
	// and the last high watermark seen (for Status.Lag).
	committed, high []int64
}

// Start runs the source on its own goroutine until Stop.
func Start(cfg Config) *Source {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Source{
		cfg: cfg, cancel: cancel, done: make(chan struct{}), status: Status{State: StateConnecting},
		dec: decoder{format: cfg.Spec.Format, columns: cfg.Spec.Columns, key: cfg.Spec.Key},
	}
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
	st := s.status
	st.Lag = 0
	for p := range s.committed {
		if s.high[p] > s.committed[p] {
			st.Lag += uint64(s.high[p] - s.committed[p])
		}
	}
	return st
}

func (s *Source) update(f func(*Status)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.status)
}

// errRepartitioned ends a session whose topic gained partitions: the next
// one reads them too.
var errRepartitioned = errors.New("the topic gained partitions")

func (s *Source) run(ctx context.Context) {
	defer close(s.done)
	backoff := retryBackoffMin
	for ctx.Err() == nil {
		err := s.session(ctx)
		if ctx.Err() != nil {
			break
		}
		if errors.Is(err, errRepartitioned) {
			continue
		}
		if s.Status().State == StateRunning {
			// It consumed before failing: a new failure, not a repeated one.
			backoff = retryBackoffMin
		}
		s.cfg.Logger.Warn("KAFKA source failed; retrying", "source", s.cfg.Name, "err", err, "backoff", backoff)
		s.update(func(st *Status) { st.State, st.LastError = StateRetrying, err.Error(); st.Errors++ })
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, retryBackoffMax)
	}
	s.update(func(st *Status) { st.State = StateStopped })
}

// session runs one client: it reads the topic's partitions and the
// committed offsets, then consumes from there until an error.
func (s *Source) session(ctx context.Context) error {
	s.update(func(st *Status) { st.State = StateConnecting })
	spec := s.cfg.Spec
	client, err := kgo.NewClient(
		kgo.SeedBrokers(spec.Brokers...),
		kgo.ClientID("rockstream"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
	)
	if err != nil {
		return errcode.Wrap(errcode.ConnectorKafkaUnavailable, err, "cannot configure the Kafka client")
	}
	defer client.Close()
	partitions, err := s.partitionCount(ctx, client)
	if err != nil {
		return err
	}
	next := make([]int64, partitions)
	start := map[int32]kgo.Offset{}
	for p := range next {
		n, err := s.cfg.Sink.Offset(ctx, uint32(p))
		if err != nil {
			return err
		}
		next[p] = int64(n)
		start[int32(p)] = kgo.NewOffset().At(int64(n))
	}
	s.mu.Lock()
	s.committed, s.high = append([]int64(nil), next...), make([]int64, partitions)
	copy(s.high, next)
	s.status.Partitions = partitions
	s.mu.Unlock()
	client.AddConsumePartitions(map[string]map[int32]kgo.Offset{spec.Topic: start})
	s.update(func(st *Status) { st.State, st.LastError = StateRunning, "" })
	checked := time.Now()
	for {
		if time.Since(checked) > partitionCheckInterval {
			n, err := s.partitionCount(ctx, client)
			if err != nil {
				return err
			}
			if n > partitions {
				return errRepartitioned
			}
			checked = time.Now()
		}
		pollCtx, cancel := context.WithTimeout(ctx, partitionCheckInterval)
		fetches := client.PollRecords(pollCtx, batchRecordsMax)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var fetchErr error
		fetches.EachError(func(_ string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) && fetchErr == nil {
				fetchErr = errcode.Wrap(errcode.ConnectorKafkaUnavailable, err, "fetching partition %d of topic %s", p, spec.Topic)
			}
		})
		if fetchErr != nil {
			return fetchErr
		}
		if err := s.apply(ctx, fetches, next); err != nil {
			return err
		}
	}
}

// apply commits one poll's records with the offsets they reach.
func (s *Source) apply(ctx context.Context, fetches kgo.Fetches, next []int64) error {
	var writes []shard.RowWrite
	var rows, bad uint64
	moved := map[int32]bool{}
	high := map[int32]int64{}
	fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
		if fp.Partition < 0 || int(fp.Partition) >= len(next) {
			return
		}
		high[fp.Partition] = fp.HighWatermark
		for _, r := range fp.Records {
			if r.Offset < next[r.Partition] {
				// INVARIANT: the client starts at the committed offset;
				// an older record was committed already.
				continue
			}
			w, err := s.write(r)
			if err != nil {
				writes = append(writes, s.deadLetter(r, err))
				bad++
			} else {
				writes = append(writes, w)
				rows++
			}
			next[r.Partition] = r.Offset + 1
			moved[r.Partition] = true
		}
	})
	var offsets []shard.SourceOffset
	for p := range next {
		if moved[int32(p)] {
			offsets = append(offsets, shard.SourceOffset{Source: s.cfg.Source, Partition: uint32(p), Offset: uint64(next[p])})
		}
	}
	if len(offsets) > 0 {
		if err := s.cfg.Sink.Commit(ctx, writes, offsets); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range offsets {
		s.committed[o.Partition] = int64(o.Offset)
	}
	for p, h := range high { //lint:maprange each partition's watermark is set independently
		s.high[p] = max(h, s.high[p])
	}
	s.status.Rows += rows
	s.status.BadRecords += bad
	return nil
}

// write is the row change a record makes: an append without a key; with
// one, the record's row replaces the row of its key, and a record without
// a value deletes its key.
func (s *Source) write(r *kgo.Record) (shard.RowWrite, error) {
	key := s.cfg.Spec.Key
	if r.Value == nil {
		if key == nil {
			return shard.RowWrite{}, fmt.Errorf("a record without a value in a source without a key")
		}
		k, err := s.dec.keyOf(r.Key)
		if err != nil {
			return shard.RowWrite{}, err
		}
		return shard.RowWrite{Table: s.cfg.Source, Key: k}, nil
	}
	row, err := s.dec.row(r.Value)
	if err != nil {
		return shard.RowWrite{}, err
	}
	if key == nil {
		return shard.RowWrite{Table: s.cfg.Source, Row: row}, nil
	}
	k := make(types.Row, len(key))
	for i, at := range key {
		k[i] = row[at]
	}
	return shard.RowWrite{Table: s.cfg.Source, Row: row, Key: k}, nil
}

// deadLetter is the dead-letter row of a record that failed to decode.
func (s *Source) deadLetter(r *kgo.Record, cause error) shard.RowWrite {
	msg := cause.Error()
	raw := func(b []byte, what string) types.Datum {
		if b == nil {
			return nil
		}
		if len(b) > deadLetterBytesMax {
			msg += fmt.Sprintf(" (%s cut to %d of %d bytes)", what, deadLetterBytesMax, len(b))
			b = b[:deadLetterBytesMax]
		}
		return append([]byte(nil), b...)
	}
	k, v := raw(r.Key, "key"), raw(r.Value, "value")
	row := types.Row{int64(r.Partition), r.Offset, msg, k, v}
	return shard.RowWrite{Table: s.cfg.Errors, Row: row, Key: types.Row{row[0], row[1]}}
}

// partitionCount reads how many partitions the topic has.
func (s *Source) partitionCount(ctx context.Context, client *kgo.Client) (int, error) {
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(s.cfg.Spec.Topic)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, client)
	if err != nil {
		return 0, errcode.Wrap(errcode.ConnectorKafkaUnavailable, err, "cannot reach the Kafka brokers %v", s.cfg.Spec.Brokers)
	}
	if len(resp.Topics) != 1 {
		return 0, errcode.New(errcode.ConnectorKafkaUnavailable, "the brokers described %d topics for topic %s", len(resp.Topics), s.cfg.Spec.Topic)
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		return 0, errcode.Wrap(errcode.ConnectorKafkaUnavailable, err, "cannot read topic %s", s.cfg.Spec.Topic)
	}
	ps := resp.Topics[0].Partitions
	ids := make([]int, len(ps))
	for i, p := range ps {
		ids[i] = int(p.Partition)
	}
	sort.Ints(ids)
	for i, id := range ids {
		// INVARIANT: a topic's partitions are numbered 0..n-1.
		if id != i {
			return 0, errcode.New(errcode.ConnectorKafkaUnavailable, "topic %s has partitions %v, not 0..%d", s.cfg.Spec.Topic, ids, len(ids)-1)
		}
	}
	if len(ids) == 0 {
		return 0, errcode.New(errcode.ConnectorKafkaUnavailable, "topic %s has no partitions", s.cfg.Spec.Topic)
	}
	return len(ids), nil
}
