package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/rockstream/rockstream/connect/sink"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// EpochHeader is the record header that carries, on every record a sink
// writes, the epoch its transaction delivered the view through. A
// restarted sink reads the newest committed one back from the topic and
// resumes after it: the epoch is committed in the same Kafka transaction
// as the changes it covers, so it is never ahead of or behind them.
const EpochHeader = "rockstream-epoch"

// SinkConfig configures a sink.
type SinkConfig struct {
	// Name is the sink's name (logs); ID its catalog id, which the
	// transactional id is derived from.
	Name string
	ID   catalog.ID
	Spec *ddl.KafkaSink
	// Columns are the view's columns; Key the indexes of Spec.Key in them.
	Columns []catalog.Column
	Key     []int
	Changes sink.Changes
	Logger  *slog.Logger
}

// Limits (STYLE.md 10).
const (
	// sinkTxnRecordsMax bounds the records of one Kafka transaction: the
	// updates of one Take are split at epoch boundaries past it (an
	// epoch is never split, so one huge epoch is one transaction).
	sinkTxnRecordsMax = 50_000
	// sinkTailWindowRecords is the first window of the topic's tail read
	// back for the last delivered epoch; it grows 8-fold until a record of
	// the sink is found or the partition's start is reached.
	sinkTailWindowRecords = 256
	// sinkTransactionTimeout is the brokers' bound on an open transaction
	// of a sink that died: a restarted sink fences it at once anyway.
	sinkTransactionTimeout = 60 * time.Second
	// sinkRequestTimeout bounds a produce, commit or read-back step.
	sinkRequestTimeout = 30 * time.Second
)

// TransactionalID is the sink's stable transactional id: a restarted
// sink (this process or another) fences the transactions of the old one.
func TransactionalID(id catalog.ID, topic string) string {
	return "rockstream-sink-" + id.String() + "-" + topic
}

// Writer is a running Kafka sink (CREATE SINK ... INTO KAFKA).
type Writer struct {
	cfg SinkConfig
	*sink.Runner
}

// StartSink runs the sink on its own goroutine until Stop. An open
// transaction left by Stop is fenced by the next start (or aborted by the
// brokers).
func StartSink(cfg SinkConfig) *Writer {
	w := &Writer{cfg: cfg}
	w.Runner = sink.Start(cfg.Name, "KAFKA", cfg.Logger, w.session)
	return w
}

// session runs one transactional producer: it fences every earlier one,
// reads the last delivered epoch back from the topic, subscribes after
// it and commits each batch of updates in one transaction, until an
// error. NB: any failure ends the session, and the next one starts from
// what Kafka committed, so an ambiguous commit is never guessed at.
func (s *Writer) session(ctx context.Context, r *sink.Runner) error {
	r.Update(func(st *sink.Status) { st.State = sink.StateConnecting })
	spec := s.cfg.Spec
	client, err := kgo.NewClient(
		kgo.SeedBrokers(spec.Brokers...),
		kgo.ClientID("rockstream"),
		kgo.DefaultProduceTopic(spec.Topic),
		kgo.TransactionalID(TransactionalID(s.cfg.ID, spec.Topic)),
		kgo.TransactionTimeout(sinkTransactionTimeout),
		kgo.RequiredAcks(kgo.AllISRAcks()),
	)
	if err != nil {
		return errcode.Wrap(errcode.ConnectorKafkaSinkFailed, err, "cannot configure the Kafka producer")
	}
	defer client.Close()
	fenceCtx, cancel := context.WithTimeout(ctx, sinkRequestTimeout)
	_, _, err = client.ProducerID(fenceCtx)
	cancel()
	if err != nil {
		return errcode.Wrap(errcode.ConnectorKafkaUnavailable, err, "cannot initialize the transactional producer of sink %s (brokers %v)", s.cfg.Name, spec.Brokers)
	}
	// INVARIANT: from here no earlier producer of this sink can commit,
	// and its open transaction is aborted: the topic's committed records
	// are final.
	epoch, found, err := s.lastDeliveredEpoch(ctx)
	if err != nil {
		return err
	}
	stream, err := s.cfg.Changes.Open(ctx, found, epoch)
	if err != nil {
		return err
	}
	defer stream.Close()
	return r.Deliver(ctx, stream, epoch, sinkTxnRecordsMax, &kafkaTxn{w: s, client: client})
}

// kafkaTxn is one Kafka transaction being built.
type kafkaTxn struct {
	w       *Writer
	client  *kgo.Client
	records []*kgo.Record
}

func (t *kafkaTxn) Add(u sink.Update) (int, error) {
	rs, err := t.w.records(u)
	t.records = append(t.records, rs...)
	return len(rs), err
}

func (t *kafkaTxn) Commit(ctx context.Context, _ uint64) error {
	return t.w.commit(ctx, t.client, t.records)
}

func (t *kafkaTxn) Reset() { t.records = t.records[:0] }

// commit writes records in one Kafka transaction.
func (s *Writer) commit(ctx context.Context, client *kgo.Client, records []*kgo.Record) error {
	if err := client.BeginTransaction(); err != nil {
		return errcode.Wrap(errcode.ConnectorKafkaSinkFailed, err, "beginning a Kafka transaction")
	}
	txCtx, cancel := context.WithTimeout(ctx, sinkRequestTimeout)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
	)
	for _, r := range records {
		client.Produce(txCtx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	err := client.Flush(txCtx)
	mu.Lock()
	if err == nil {
		err = firstErr
	}
	mu.Unlock()
	end := kgo.TryCommit
	if err != nil {
		end = kgo.TryAbort
	}
	// NB: not txCtx: a cancelled EndTransaction leaves the outcome
	// unknown; the next session's fencing settles it either way.
	endCtx, endCancel := context.WithTimeout(context.Background(), sinkRequestTimeout)
	defer endCancel()
	if endErr := client.EndTransaction(endCtx, end); err == nil && endErr != nil {
		err = endErr
	}
	if err != nil {
		return errcode.Wrap(errcode.ConnectorKafkaUnavailable, err, "writing a transaction of %d records to topic %s", len(records), s.cfg.Spec.Topic)
	}
	return nil
}

// lastDeliveredEpoch reads the newest committed EpochHeader of the topic
// (found false: the sink never committed a record).
func (s *Writer) lastDeliveredEpoch(ctx context.Context) (epoch uint64, found bool, err error) {
	spec := s.cfg.Spec
	client, err := kgo.NewClient(
		kgo.SeedBrokers(spec.Brokers...),
		kgo.ClientID("rockstream"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// NB: with the transaction markers kept, the last offset below the
		// last stable offset is always returned (a committed record or a
		// marker), so a partition's tail is known to be read completely.
		kgo.KeepControlRecords(),
	)
	if err != nil {
		return 0, false, errcode.Wrap(errcode.ConnectorKafkaSinkFailed, err, "cannot configure the Kafka client")
	}
	defer client.Close()
	ends, err := s.stableEnds(ctx, client)
	if err != nil {
		return 0, false, err
	}
	for p, end := range ends {
		for window := int64(sinkTailWindowRecords); end > 0; window *= 8 {
			start := max(0, end-window)
			e, ok, err := s.readEpochs(ctx, client, int32(p), start, end)
			if err != nil {
				return 0, false, err
			}
			if ok {
				epoch, found = max(epoch, e), true
				break
			}
			if start == 0 {
				break
			}
		}
	}
	return epoch, found, nil
}

// stableEnds are the topic's partitions' last stable offsets.
func (s *Writer) stableEnds(ctx context.Context, client *kgo.Client) ([]int64, error) {
	reqCtx, cancel := context.WithTimeout(ctx, sinkRequestTimeout)
	defer cancel()
	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(s.cfg.Spec.Topic)
	meta.Topics = append(meta.Topics, mt)
	mresp, err := meta.RequestWith(reqCtx, client)
	if err != nil {
		return nil, errcode.Wrap(errcode.ConnectorKafkaUnavailable, err, "cannot reach the Kafka brokers %v", s.cfg.Spec.Brokers)
	}
	if len(mresp.Topics) != 1 {
		return nil, errcode.New(errcode.ConnectorKafkaUnavailable, "the brokers described %d topics for topic %s", len(mresp.Topics), s.cfg.Spec.Topic)
	}
	if err := kerr.ErrorForCode(mresp.Topics[0].ErrorCode); err != nil {
		return nil, errcode.Wrap(errcode.ConnectorKafkaUnavailable, err, "cannot read topic %s (a sink's topic must exist)", s.cfg.Spec.Topic)
	}
	n := len(mresp.Topics[0].Partitions)
	req := kmsg.NewPtrListOffsetsRequest()
	req.IsolationLevel = 1 // read committed: the last stable offset
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = s.cfg.Spec.Topic
	for p := 0; p < n; p++ {
		lp := kmsg.NewListOffsetsRequestTopicPartition()
		lp.Partition = int32(p)
		lp.Timestamp = -1 // the end
		lt.Partitions = append(lt.Partitions, lp)
	}
	req.Topics = append(req.Topics, lt)
	resp, err := req.RequestWith(reqCtx, client)
	if err != nil {
		return nil, errcode.Wrap(errcode.ConnectorKafkaUnavailable, err, "cannot read the end offsets of topic %s", s.cfg.Spec.Topic)
	}
	ends := make([]int64, n)
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, errcode.Wrap(errcode.ConnectorKafkaUnavailable, err, "cannot read the end offset of partition %d of topic %s", p.Partition, t.Topic)
			}
			if p.Partition >= 0 && int(p.Partition) < n {
				ends[p.Partition] = p.Offset
			}
		}
	}
	return ends, nil
}

// readEpochs reads partition p's committed records in [start, end) and
// returns the newest EpochHeader among them.
func (s *Writer) readEpochs(ctx context.Context, client *kgo.Client, p int32, start, end int64) (epoch uint64, found bool, err error) {
	topic := s.cfg.Spec.Topic
	client.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().At(start)}})
	defer client.RemoveConsumePartitions(map[string][]int32{topic: {p}})
	readCtx, cancel := context.WithTimeout(ctx, sinkRequestTimeout)
	defer cancel()
	for {
		fetches := client.PollRecords(readCtx, batchRecordsMax)
		if readCtx.Err() != nil {
			return 0, false, errcode.New(errcode.ConnectorKafkaUnavailable, "reading back the last delivered epoch: partition %d of topic %s did not reach offset %d within %v", p, topic, end, sinkRequestTimeout)
		}
		var fetchErr error
		fetches.EachError(func(_ string, _ int32, err error) {
			if fetchErr == nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				fetchErr = err
			}
		})
		if fetchErr != nil {
			return 0, false, errcode.Wrap(errcode.ConnectorKafkaUnavailable, fetchErr, "reading back partition %d of topic %s", p, topic)
		}
		reached := false
		fetches.EachRecord(func(r *kgo.Record) {
			if r.Partition != p || r.Offset >= end {
				reached = reached || r.Offset >= end-1
				return
			}
			if r.Offset >= end-1 {
				reached = true
			}
			if r.Attrs.IsControl() {
				return
			}
			for _, h := range r.Headers {
				if h.Key != EpochHeader {
					continue
				}
				e, err := strconv.ParseUint(string(h.Value), 10, 64)
				if err == nil {
					epoch, found = max(epoch, e), true
				}
			}
		})
		if reached {
			return epoch, found, nil
		}
	}
}

// records are the Kafka records of one update, in a fixed order: by key
// (the key's JSON), deletions before insertions without a key.
func (s *Writer) records(u sink.Update) ([]*kgo.Record, error) {
	delta := zset.Consolidate(u.Delta)
	header := []kgo.RecordHeader{{Key: EpochHeader, Value: []byte(strconv.FormatUint(u.Epoch, 10))}}
	if len(s.cfg.Key) == 0 {
		// Debezium without a key: every copy of a row is a record.
		var out []*kgo.Record
		for i, row := range delta.Rows {
			w := delta.Weights[i]
			for ; w != 0; w -= sign(w) {
				before, after := "null", s.rowJSON(row)
				op := "c"
				if w < 0 {
					before, after, op = after, "null", "d"
				}
				out = append(out, &kgo.Record{Value: debeziumValue(before, after, op), Headers: header})
			}
		}
		return out, nil
	}
	changes, err := sink.ByKey(delta, s.keyJSON)
	if err != nil {
		return nil, sink.KeyError(err, errcode.ConnectorKafkaSinkFailed, s.cfg.Name, u.Epoch, s.cfg.Spec.Key)
	}
	out := make([]*kgo.Record, 0, len(changes))
	for _, c := range changes {
		k := c.Key
		r := &kgo.Record{Key: []byte(k), Headers: header}
		switch s.cfg.Spec.Format {
		case ddl.KafkaSinkUpsert:
			if c.Inserted {
				r.Value = []byte(s.rowJSON(c.After))
			}
			// A deleted key (no insertion): a tombstone, Value nil.
		default:
			before, after, op := "null", "null", "u"
			if c.Deleted {
				before = s.rowJSON(c.Before)
			}
			if c.Inserted {
				after = s.rowJSON(c.After)
			}
			switch {
			case !c.Deleted:
				op = "c"
			case !c.Inserted:
				op = "d"
			}
			r.Value = debeziumValue(before, after, op)
		}
		out = append(out, r)
	}
	return out, nil
}

func sign(w int64) int64 {
	if w < 0 {
		return -1
	}
	return 1
}

func debeziumValue(before, after, op string) []byte {
	return []byte(`{"before":` + before + `,"after":` + after + `,"op":"` + op + `"}`)
}

// rowJSON is a row as a JSON object of the view's columns (as
// PostgreSQL's row_to_json writes it).
func (s *Writer) rowJSON(row types.Row) string {
	var b strings.Builder
	sink.AppendRowJSON(&b, s.cfg.Columns, row)
	b.WriteByte('}')
	return b.String()
}

// keyJSON is a row's key columns as a JSON object.
func (s *Writer) keyJSON(row types.Row) string { return sink.KeyJSON(s.cfg.Columns, s.cfg.Key, row) }

// String describes the sink for logs.
func (s *Writer) String() string {
	return fmt.Sprintf("KAFKA sink %s → %s", s.cfg.Name, s.cfg.Spec.Topic)
}
