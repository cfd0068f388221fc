package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rockstream/rockstream/slate/objstore"
)

// diskFull fails every write the way a full filesystem does (the fs
// backend wraps the syscall error with %w).
type diskFull struct{ objstore.Store }

func (d diskFull) Put(ctx context.Context, key string, data []byte) (objstore.Version, error) {
	return "", fmt.Errorf("objstore fs: write temp: %w", syscall.ENOSPC)
}

// TestStoreFailingNamesCause: /readyz's store check says ENOSPC while
// writes fail, and clears once a write succeeds.
func TestStoreFailingNamesCause(t *testing.T) {
	ctx := context.Background()
	mem := objstore.NewMemory()
	m := newMeteredStore(diskFull{mem}, prometheus.NewRegistry())
	if why := m.Failing(); why != "" {
		t.Fatalf("fresh store failing: %q", why)
	}
	if _, err := m.Put(ctx, "wal/1", []byte("x")); err == nil {
		t.Fatal("write to a full disk succeeded")
	}
	if why := m.Failing(); !strings.Contains(why, "ENOSPC") {
		t.Fatalf("failing reason %q does not name ENOSPC", why)
	}
	// A not-found read is an answer, not a failure, and reads do not
	// clear a write failure.
	if _, err := m.Get(ctx, "absent"); err == nil {
		t.Fatal("absent key found")
	}
	if m.Failing() == "" {
		t.Fatal("a read cleared the write failure")
	}
	if _, err := m.PutIfAbsent(ctx, "wal/2", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if why := m.Failing(); why != "" {
		t.Fatalf("still failing after a successful write: %q", why)
	}
}

// TestStoreErrorsCountFailuresOnly: reads of absent objects and
// conditional writes that lose their race are counted as requests but
// not as errors (slate probes and races by design); a failed write is.
func TestStoreErrorsCountFailuresOnly(t *testing.T) {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	m := newMeteredStore(diskFull{objstore.NewMemory()}, reg)
	// count is the value of metric name with labels op and object (0 when
	// it has no such series).
	count := func(name, op, object string) float64 {
		t.Helper()
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			if f.GetName() != name {
				continue
			}
			for _, metric := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range metric.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if labels["op"] == op && labels["object"] == object {
					return metric.GetCounter().GetValue()
				}
			}
		}
		return 0
	}
	if _, err := m.Get(ctx, "manifest/absent"); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("Get of an absent object: %v", err)
	}
	if _, err := m.GetRange(ctx, "compacted/absent", 0, 1); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("GetRange of an absent object: %v", err)
	}
	v, err := m.PutIfAbsent(ctx, "manifest/1", []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.PutIfAbsent(ctx, "manifest/1", []byte("b")); !errors.Is(err, objstore.ErrPreconditionFailed) {
		t.Fatalf("a second PutIfAbsent: %v", err)
	}
	if _, err := m.PutIfMatch(ctx, "manifest/1", []byte("c"), v+"stale"); !errors.Is(err, objstore.ErrPreconditionFailed) {
		t.Fatalf("PutIfMatch with a stale version: %v", err)
	}
	for _, c := range [][2]string{{"get", "manifest"}, {"get_range", "sst"}, {"put_if_absent", "manifest"}, {"put_if_match", "manifest"}} {
		if got := count("rockstream_object_store_errors_total", c[0], c[1]); got != 0 {
			t.Fatalf("%s of %s: %v errors counted for probes and lost races", c[0], c[1], got)
		}
	}
	if got := count("rockstream_object_store_requests_total", "get", "manifest"); got != 1 {
		t.Fatalf("get requests of manifests: %v, want 1", got)
	}
	if _, err := m.Put(ctx, "wal/1", []byte("x")); err == nil {
		t.Fatal("write to a full disk succeeded")
	}
	if got := count("rockstream_object_store_errors_total", "put", "wal"); got != 1 {
		t.Fatalf("failed WAL puts counted as %v errors, want 1", got)
	}
}
