package engine_test

import (
	"context"
	"testing"

	"github.com/rockstream/rockstream/engine"
	"github.com/rockstream/rockstream/slate/objstore"
	"github.com/rockstream/rockstream/slate/objstore/fsstore"
)

// TestOpenStoreURLs: each URL scheme the server accepts opens the matching
// backend, and malformed or unknown URLs are refused rather than guessed at.
func TestOpenStoreURLs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := engine.OpenStore(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	if fs, ok := s.(*fsstore.Store); !ok || fs.Root() != dir {
		t.Fatalf("file url opened %T", s)
	}
	for _, bad := range []string{"s3:///nobucket", "gs://x/y", "s3://b/p?path_style=maybe"} {
		if _, err := engine.OpenStore(ctx, bad); err == nil {
			t.Fatalf("OpenStore(%q) succeeded", bad)
		}
	}
	m, err := engine.OpenStore(ctx, "memory://")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.(*objstore.Memory); !ok {
		t.Fatalf("memory url opened %T", m)
	}
}
