package shard

import (
	"bytes"
	"sort"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/types"
)

// arrangementKeyHeadBytes is the length of an operator-state or view-output
// key before its partition key: namespace, kind, op id and bucket.
const arrangementKeyHeadBytes = 2 + 16 + partition.BucketBytes

// viewStateKeys returns the view's operator-state and view-output keys
// with their values (statistics and markers left out).
func viewStateKeys(t *testing.T, store kv.Store, view uint64) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for k, v := range storedState(t, store, view) { //lint:maprange filtered into a map
		if k[0] == kv.PrefixOpState || k[0] == kv.PrefixOpIndex || k[0] == kv.PrefixViewOutput {
			out[k] = v
		}
	}
	return out
}

// TestOldKeyLayoutViewStateIsRebuilt: every operator-state and view-output
// key of a view carries the bucket of its partition key (for this view,
// SELECT k, sum(v), count(*) … GROUP BY k, both the aggregate's keys and
// the output rows are their own partition keys). A store whose view state
// was written by the build before buckets (keys without the bucket, the
// format record of that build) is not read: at open the view is dropped
// and backfilled afresh, its contents are right, it keeps being
// maintained, and no key of the old layout survives.
func TestOldKeyLayoutViewStateIsRebuilt(t *testing.T) {
	h, view := newHarness(t)
	h.start()
	commit := func(k, v int64) {
		h.ask(Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{{Table: h.table.ID, Key: types.Row{k}, Row: types.Row{k, v}}}})
		h.drain()
	}
	for k := range int64(40) {
		commit(k, 10*k)
	}
	circuitID := objectNumber(view)
	current := viewStateKeys(t, h.store, circuitID)
	if len(current) < 80 {
		t.Fatalf("only %d state keys for 40 groups", len(current))
	}
	buckets := map[partition.Bucket]bool{}
	for k := range current { //lint:maprange checks every key; order is irrelevant
		b, ok := partition.ReadBucket([]byte(k[2+16:]))
		if !ok || b != partition.BucketOf([]byte(k[arrangementKeyHeadBytes:])) {
			t.Fatalf("state key %x does not carry its partition key's bucket", k)
		}
		buckets[b] = true
	}
	if len(buckets) < 30 {
		t.Fatalf("80 state keys fell into only %d buckets", len(buckets))
	}

	// The old build's layout: namespace kind op_id key, and its record.
	marker, ok, err := h.store.Get(viewMarkerKey(view))
	if err != nil || !ok {
		t.Fatalf("view marker: %v %v", ok, err)
	}
	oldMarker := strings.Replace(string(marker), "rockstream.circuit/3 | keys=bucketed/2 | ", "rockstream.circuit/2 | ", 1)
	if oldMarker == string(marker) {
		t.Fatalf("view marker %q does not name the bucketed key layout", marker)
	}
	var b kv.WriteBatch
	for k, v := range current { //lint:maprange ops are sorted below
		b.Ops = append(b.Ops, kv.Op{Key: []byte(k), Delete: true})
		old := append([]byte(k[:2+16]), k[arrangementKeyHeadBytes:]...)
		b.Ops = append(b.Ops, kv.Op{Key: old, Value: v})
	}
	b.Ops = append(b.Ops, kv.Op{Key: viewMarkerKey(view), Value: []byte(oldMarker)})
	sort.SliceStable(b.Ops, func(i, j int) bool { return bytes.Compare(b.Ops[i].Key, b.Ops[j].Key) < 0 })
	b.Ops = dedupOps(b.Ops)
	if err := h.store.Apply(&b); err != nil {
		t.Fatal(err)
	}

	h.start()
	if n := h.ask(GetStatus{}).(Status).ViewRebuilds; n != 1 {
		t.Fatalf("%d views rebuilt from the old key layout, want 1", n)
	}
	got := h.view(view)
	if len(got) != 40 || got[0] != 0 || got[39] != 390 {
		t.Fatalf("view rebuilt from the old key layout: %v", got)
	}
	rebuilt := viewStateKeys(t, h.store, circuitID)
	if len(rebuilt) != len(current) {
		t.Fatalf("%d state keys after the rebuild, %d before the downgrade (old-layout keys left behind?)", len(rebuilt), len(current))
	}
	for k, v := range current { //lint:maprange compared as maps
		if !bytes.Equal(rebuilt[k], v) {
			t.Fatalf("state key %x = %x after the rebuild, %x before the downgrade", k, rebuilt[k], v)
		}
	}
	if m, _, _ := h.store.Get(viewMarkerKey(view)); !bytes.Equal(m, marker) {
		t.Fatalf("rebuilt view's record %q, want %q", m, marker)
	}
	commit(3, 31)
	commit(40, 400)
	if got := h.view(view); len(got) != 41 || got[3] != 31 || got[40] != 400 {
		t.Fatalf("rebuilt view after commits: %v", got)
	}
}
