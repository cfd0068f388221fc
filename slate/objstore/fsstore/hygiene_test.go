package fsstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/slate"
	"github.com/rockstream/rockstream/slate/objstore"
)

// TestLockFilesBounded: creating, rewriting and deleting many keys leaves at
// most fsLockStripes lock files (one per key used to stay forever).
func TestLockFilesBounded(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	// NB: a Delete locks its key whether or not it exists, and costs no
	// fsync of a file, so many keys stay cheap; a few are real objects.
	const keys = 2 * fsLockStripes
	for i := 0; i < keys; i++ {
		key := fmt.Sprintf("db/k/%04d", i)
		if i%64 == 0 {
			v, err := s.PutIfAbsent(ctx, key, []byte("a"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.PutIfMatch(ctx, key, []byte("b"), v); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	locks, err := os.ReadDir(filepath.Join(dir, fsLocksDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(locks) > fsLockStripes {
		t.Fatalf("%d lock files after %d keys, want at most %d", len(locks), keys, fsLockStripes)
	}
}

// TestOpenRemovesOrphans: New removes temporary files killed writes left
// behind (untouched for fsTmpOrphanAge) and earlier builds' per-key lock
// files, and keeps a temporary file a live write may still own.
func TestOpenRemovesOrphans(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "db/a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	orphan := filepath.Join(dir, fsTmpDir, fsTmpPrefix+"123")
	fresh := filepath.Join(dir, fsTmpDir, fsTmpPrefix+"456")
	oldLock := filepath.Join(dir, fsLocksDir, strings.Repeat("ab", 16)+".lock")
	for _, p := range []string{orphan, fresh, oldLock} {
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * fsTmpOrphanAge)
	if err := os.Chtimes(orphan, old, old); err != nil {
		t.Fatal(err)
	}
	s, err = New(dir)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{orphan: false, fresh: true, oldLock: false} { //lint:maprange independent checks
		_, err := os.Stat(p)
		if exists := err == nil; exists != want {
			t.Fatalf("%s: exists %v after open, want %v (%v)", p, exists, want, err)
		}
	}
	if obj, err := s.Get(ctx, "db/a"); err != nil || string(obj.Data) != "x" {
		t.Fatalf("object after open: %q %v", obj.Data, err)
	}
}

// TestDamagedHeaderIsCorrupt: a file whose header is damaged (magic, or a
// version length past the end) is objstore.ErrCorrupt on every read path,
// and slate reports it as RS-5002 naming the object, not as a retryable
// I/O failure.
func TestDamagedHeaderIsCorrupt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "db/o", []byte("data")); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "db", "o")
	orig, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, pos := range []int{0, len(fsMagic) - 1, len(fsMagic)} {
		bad := append([]byte(nil), orig...)
		bad[pos] ^= 0x40
		if err := os.WriteFile(file, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		_, gerr := s.Get(ctx, "db/o")
		_, rerr := s.GetRange(ctx, "db/o", 0, 2)
		_, lerr := s.List(ctx, "db/")
		for what, err := range map[string]error{"get": gerr, "get range": rerr, "list": lerr} { //lint:maprange independent checks
			if !errors.Is(err, objstore.ErrCorrupt) {
				t.Fatalf("header byte %d, %s: %v, want ErrCorrupt", pos, what, err)
			}
		}
	}

	// Through slate: a WAL object whose file header is damaged.
	db, err := slate.Open(ctx, s, "shards/0", slate.Options{InstanceID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Put(ctx, []byte("k"), []byte("v"), slate.WriteOptions{AwaitDurable: true}); err != nil {
		t.Fatal(err)
	}
	wal, err := s.List(ctx, "shards/0/wal/")
	if err != nil {
		t.Fatal(err)
	}
	key := wal[len(wal)-1].Key
	file = filepath.Join(dir, filepath.FromSlash(key))
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	data[1] ^= 0x01
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = slate.Open(ctx, s, "shards/0", slate.Options{InstanceID: "t2"})
	if e, ok := errcode.As(err); !ok || e.Code != errcode.StorageObjectCorrupt || !errors.Is(err, slate.ErrCorrupt) || !strings.Contains(err.Error(), key) {
		t.Fatalf("slate over a damaged file header: %v, want RS-5002 naming %s", err, key)
	}
}

// TestSlateOnFSDamagedFiles damages the files (object header included) of a
// slate database on this backend: the backend's header (every byte of its
// magic and version length, a sample of the version) and a seeded sample of
// the object's bytes, of one WAL, one SST and the newest manifest file
// (slate's own campaign covers the object bytes thoroughly; this one the
// backend's framing). Every reopen and scan either fails with RS-5002
// naming the object or reads exactly the data from before.
func TestSlateOnFSDamagedFiles(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	s, err := New(base)
	if err != nil {
		t.Fatal(err)
	}
	db, err := slate.Open(ctx, s, "db", slate.Options{InstanceID: "w1", BlockBytes: 256})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		if _, err := db.Put(ctx, []byte(fmt.Sprintf("k%03d", i)), []byte(fmt.Sprint(i*i)), slate.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.FlushMemtable(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if _, err := db.Delete(ctx, []byte(fmt.Sprintf("k%03d", i*7)), slate.WriteOptions{AwaitDurable: true}); err != nil {
			t.Fatal(err)
		}
	}
	scan := func(root string) (string, error) {
		s, err := New(root)
		if err != nil {
			return "", err
		}
		db, err := slate.Open(ctx, s, "db", slate.Options{InstanceID: "w2", BlockBytes: 256})
		if err != nil {
			return "", err
		}
		var out strings.Builder
		it := db.Scan(ctx, nil, nil, slate.ReadOptions{})
		for it.Next() {
			fmt.Fprintf(&out, "%s=%s ", it.Key(), it.Value())
		}
		return out.String(), it.Err()
	}
	want, err := scan(copyDir(t, base))
	if err != nil {
		t.Fatal(err)
	}
	pick := func(prefix string, newest bool) string {
		infos, err := s.List(ctx, prefix)
		if err != nil || len(infos) == 0 {
			t.Fatalf("no %s: %v", prefix, err)
		}
		o := infos[0]
		if newest {
			o = infos[len(infos)-1]
		}
		return o.Key
	}
	rng := rand.New(rand.NewPCG(1, 0xf5))
	for _, key := range []string{pick("db/wal/", true), pick("db/compacted/", false), pick("db/manifest/", true)} {
		orig, err := os.ReadFile(filepath.Join(base, filepath.FromSlash(key)))
		if err != nil {
			t.Fatal(err)
		}
		// NB: each trial reopens a copy on disk (fsyncs), so the sample is
		// small: every byte of the magic and the version length, some of
		// the version (it only identifies a write for CAS), some data.
		var positions []int
		headerLen := fsHeaderMin + int(orig[len(fsMagic)])<<8 + int(orig[len(fsMagic)+1])
		for pos := 0; pos < fsHeaderMin; pos++ {
			positions = append(positions, pos)
		}
		for i := 0; i < 6; i++ {
			positions = append(positions, fsHeaderMin+rng.IntN(headerLen-fsHeaderMin))
		}
		for i := 0; i < 10; i++ {
			positions = append(positions, headerLen+rng.IntN(len(orig)-headerLen))
		}
		refused := 0
		for _, pos := range positions {
			root := copyDir(t, base)
			bad := append([]byte(nil), orig...)
			bad[pos] ^= byte(1 + rng.IntN(255))
			if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(key)), bad, 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := scan(root)
			os.RemoveAll(root)
			if err != nil {
				if e, ok := errcode.As(err); !ok || e.Code != errcode.StorageObjectCorrupt || !strings.Contains(err.Error(), strings.TrimPrefix(key, "db/")) {
					t.Fatalf("%s file byte %d: %v, want RS-5002 naming the object", key, pos, err)
				}
				refused++
				continue
			}
			if got != want {
				t.Fatalf("%s file byte %d: WRONG DATA\n got %s\nwant %s", key, pos, got, want)
			}
		}
		t.Logf("%s: %d damaged copies, %d refused, %d read back identical", key, len(positions), refused, len(positions)-refused)
		if refused == 0 {
			t.Fatalf("%s: nothing refused: the test proves nothing", key)
		}
	}
}

// copyDir copies a store directory (objects only) to a new temporary one.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}
