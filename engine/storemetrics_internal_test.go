package engine

import (
	"context"
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
