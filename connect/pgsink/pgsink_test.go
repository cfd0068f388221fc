package pgsink

import (
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/connect/sink"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// TestTxnRows checks what a transaction writes from several updates: in
// upsert mode each key's last change (a key deleted then inserted again is
// an upsert, one inserted then deleted a DELETE), keys in the order first
// seen (each update sorts its own), json values as strings of their text;
// in append mode every row change with its epoch and diff; a duplicate or
// NULL key refused with RS-1026.
func TestTxnRows(t *testing.T) {
	cols := []catalog.Column{{Name: "k", Type: types.TText}, {Name: "n", Type: types.TInt8}, {Name: "doc", Type: types.TJSONB}}
	jnull, err := types.Parse(types.TJSONB, "null", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	updates := []sink.Update{
		{After: 0, Epoch: 5, Delta: zset.Batch{
			Rows:    []types.Row{{"b", int64(1), nil}, {"a", int64(1), jnull}, {"c", int64(1), nil}},
			Weights: []int64{1, 1, 2}}},
		{After: 5, Epoch: 7, Delta: zset.Batch{
			Rows:    []types.Row{{"b", int64(1), nil}, {"a", int64(1), jnull}, {"a", int64(2), nil}},
			Weights: []int64{-1, -1, 1}}},
	}
	render := func(mode string, key []int, us []sink.Update) string {
		w := &Writer{cfg: Config{Name: "s", Spec: &ddl.PostgresSink{Mode: mode, Key: []string{"k"}}, Columns: cols, Key: key}}
		x := &txn{w: w}
		for _, u := range us {
			if _, err := x.Add(u); err != nil {
				return "error: " + err.Error()
			}
		}
		if mode == ddl.PostgresSinkAppend {
			return strings.Join(x.appends, "\n")
		}
		var out []string
		for _, k := range x.keys {
			c := x.byKey[k]
			if c.Inserted {
				out = append(out, "upsert "+w.rowJSON(c.After, "}"))
			} else {
				out = append(out, "delete "+k)
			}
		}
		return strings.Join(out, "\n")
	}
	if got, want := render(ddl.PostgresSinkUpsert, []int{0}, updates[1:]), `upsert {"k":"a","n":2,"doc":null}
delete {"k":"b"}`; got != want {
		t.Errorf("upsert, one update:\n got: %s\nwant: %s", got, want)
	}
	if got, want := render(ddl.PostgresSinkAppend, nil, updates), `{"k":"a","n":1,"doc":"null","rockstream_epoch":5,"rockstream_diff":1}
{"k":"b","n":1,"doc":null,"rockstream_epoch":5,"rockstream_diff":1}
{"k":"c","n":1,"doc":null,"rockstream_epoch":5,"rockstream_diff":2}
{"k":"a","n":1,"doc":"null","rockstream_epoch":7,"rockstream_diff":-1}
{"k":"a","n":2,"doc":null,"rockstream_epoch":7,"rockstream_diff":1}
{"k":"b","n":1,"doc":null,"rockstream_epoch":7,"rockstream_diff":-1}`; got != want {
		t.Errorf("append:\n got: %s\nwant: %s", got, want)
	}
	if got, want := render(ddl.PostgresSinkUpsert, []int{0}, updates), `error: RS-1026: sink s: at epoch 5 the view has 2 rows for key {"k":"c"}: the key columns (k) do not identify a row`; got != want {
		t.Errorf("a duplicate key:\n got: %s\nwant: %s", got, want)
	}
	merged := []sink.Update{
		{After: 0, Epoch: 5, Delta: zset.Batch{Rows: []types.Row{{"b", int64(1), nil}, {"a", int64(1), jnull}}, Weights: []int64{1, 1}}},
		updates[1],
		{After: 7, Epoch: 9, Delta: zset.Batch{Rows: []types.Row{{"b", int64(3), nil}, {"a", int64(2), nil}}, Weights: []int64{1, -1}}},
	}
	if got, want := render(ddl.PostgresSinkUpsert, []int{0}, merged), `delete {"k":"a"}
upsert {"k":"b","n":3,"doc":null}`; got != want {
		t.Errorf("upsert, merged over three epochs:\n got: %s\nwant: %s", got, want)
	}
	nullKey := []sink.Update{{Epoch: 3, Delta: zset.Batch{Rows: []types.Row{{nil, int64(1), nil}}, Weights: []int64{1}}}}
	if got := render(ddl.PostgresSinkUpsert, []int{0}, nullKey); !strings.HasPrefix(got, "error: RS-1026") || !strings.Contains(got, "key column k is NULL") {
		t.Errorf("a NULL key: %s", got)
	}
}
