package kafka

import (
	"strings"
	"testing"

	"github.com/rockstream/rockstream/connect/sink"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// TestSinkRecords checks the records one update becomes in each format:
// sorted by key, an update of a key as one record, a deleted key as a
// tombstone (upsert) or op d (debezium), row copies of a keyless view as
// one record each, and a key with two rows refused.
func TestSinkRecords(t *testing.T) {
	cols := []catalog.Column{{Name: "k", Type: types.TText}, {Name: "n", Type: types.TInt8}}
	delta := zset.Batch{
		Rows:    []types.Row{{"b", int64(1)}, {"a", int64(2)}, {"b", int64(2)}, {"c", int64(5)}},
		Weights: []int64{-1, 1, 1, -1},
	}
	render := func(format string, key []int, d zset.Batch) string {
		w := &Writer{cfg: SinkConfig{Name: "s", Spec: &ddl.KafkaSink{Format: format, Key: []string{"k"}}, Columns: cols, Key: key}}
		rs, err := w.records(sink.Update{After: 6, Epoch: 7, Delta: d})
		if err != nil {
			return "error: " + err.Error()
		}
		var out []string
		for _, r := range rs {
			if len(r.Headers) != 1 || r.Headers[0].Key != EpochHeader || string(r.Headers[0].Value) != "7" {
				t.Fatalf("record headers %v, want %s: 7", r.Headers, EpochHeader)
			}
			v := "<tombstone>"
			if r.Value != nil {
				v = string(r.Value)
			}
			out = append(out, string(r.Key)+" "+v)
		}
		return strings.Join(out, "\n")
	}
	for _, c := range []struct {
		format string
		key    []int
		delta  zset.Batch
		want   string
	}{
		{ddl.KafkaSinkUpsert, []int{0}, delta, `{"k":"a"} {"k":"a","n":2}
{"k":"b"} {"k":"b","n":2}
{"k":"c"} <tombstone>`},
		{ddl.KafkaSinkDebezium, []int{0}, delta, `{"k":"a"} {"before":null,"after":{"k":"a","n":2},"op":"c"}
{"k":"b"} {"before":{"k":"b","n":1},"after":{"k":"b","n":2},"op":"u"}
{"k":"c"} {"before":{"k":"c","n":5},"after":null,"op":"d"}`},
		{ddl.KafkaSinkDebezium, nil, zset.Batch{Rows: []types.Row{{"a", nil}}, Weights: []int64{-2}}, ` {"before":{"k":"a","n":null},"after":null,"op":"d"}
 {"before":{"k":"a","n":null},"after":null,"op":"d"}`},
		{ddl.KafkaSinkUpsert, []int{0}, zset.Batch{Rows: []types.Row{{"a", int64(1)}, {"a", int64(2)}}, Weights: []int64{1, 1}},
			`error: RS-1022: sink s: at epoch 7 the view has 2 rows for key {"k":"a"}: the key columns (k) do not identify a row`},
	} {
		if got := render(c.format, c.key, c.delta); got != c.want {
			t.Errorf("%s key %v:\n got: %s\nwant: %s", c.format, c.key, got, c.want)
		}
	}
	w := &Writer{cfg: SinkConfig{Name: "s", Spec: &ddl.KafkaSink{Format: ddl.KafkaSinkUpsert, Key: []string{"k"}}, Columns: cols, Key: []int{0}}}
	_, err := w.records(sink.Update{Epoch: 1, Delta: zset.Batch{Rows: []types.Row{{"a", int64(1)}, {"a", int64(2)}}, Weights: []int64{1, 1}}})
	if e, ok := errcode.As(err); !ok || e.Code != errcode.ConnectorKafkaSinkFailed {
		t.Fatalf("a duplicate key: %v, want RS-1022", err)
	}
}
