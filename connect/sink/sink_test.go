package sink

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// fakeStream returns its batches of updates, then errEnd.
type fakeStream struct{ batches [][]Update }

var errEnd = errors.New("end of stream")

func (s *fakeStream) Next(context.Context) ([]Update, error) {
	if len(s.batches) == 0 {
		return nil, errEnd
	}
	b := s.batches[0]
	s.batches = s.batches[1:]
	return b, nil
}

func (s *fakeStream) Close() {}

// fakeTxn records the commits: each one's epochs and last epoch.
type fakeTxn struct {
	epochs  []string
	commits []string
}

func (t *fakeTxn) Add(u Update) (int, error) {
	t.epochs = append(t.epochs, fmt.Sprint(u.Epoch))
	return len(u.Delta.Rows), nil
}

func (t *fakeTxn) Commit(_ context.Context, through uint64) error {
	t.commits = append(t.commits, fmt.Sprintf("%s→%d", strings.Join(t.epochs, ","), through))
	return nil
}

func (t *fakeTxn) Reset() { t.epochs = nil }

// TestDeliver checks how updates become transactions: cut at an epoch
// boundary once maxRecords is reached (an epoch never split), an update
// batch without records not committed but still counted as delivered.
func TestDeliver(t *testing.T) {
	rows := func(n int) zset.Batch {
		var b zset.Batch
		for i := 0; i < n; i++ {
			b.Rows = append(b.Rows, types.Row{int64(i)})
			b.Weights = append(b.Weights, 1)
		}
		return b
	}
	stream := &fakeStream{batches: [][]Update{
		{{After: 0, Epoch: 4, Delta: rows(7)}},
		{{After: 4, Epoch: 5, Delta: rows(2)}, {After: 5, Epoch: 6, Delta: rows(2)}, {After: 6, Epoch: 7, Delta: rows(1)}, {After: 7, Epoch: 8, Delta: rows(1)}},
		{{After: 8, Epoch: 9}, {After: 9, Epoch: 10}},
	}}
	r := &Runner{}
	tx := &fakeTxn{}
	if err := r.Deliver(context.Background(), stream, 2, 3, tx); !errors.Is(err, errEnd) {
		t.Fatalf("Deliver: %v", err)
	}
	if got, want := strings.Join(tx.commits, " "), "4→4 5,6→6 7,8→8"; got != want {
		t.Fatalf("commits %s, want %s", got, want)
	}
	st := r.Status()
	if st.Epoch != 10 || st.Records != 13 || st.Transactions != 3 || st.State != StateRunning {
		t.Fatalf("status %+v, want epoch 10, 13 records in 3 transactions, RUNNING", st)
	}
}
