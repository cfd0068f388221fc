// Package objstoretest is the conformance suite every objstore.Store backend
// passes: the in-memory store, the filesystem and S3 backends, and wrappers
// such as objstore.Prefixed. It lives in its own package so that each backend
// package (an edge the deterministic core never imports) can run the same
// suite against itself from its tests.
//
// Walkthrough:
//
//	func TestConformanceFS(t *testing.T) {
//		objstoretest.Run(t, func(t *testing.T) objstore.Store {
//			s, err := fsstore.New(t.TempDir())
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		}, objstoretest.Capabilities{})
//	}
package objstoretest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rockstream/rockstream/slate/objstore"
)

// Capabilities records where a backend legitimately differs.
type Capabilities struct {
	// IdenticalBytesSameVersion: S3 ETags are content hashes, so two writes
	// of identical bytes get the same version.
	IdenticalBytesSameVersion bool
}

// ambiguousOnce applies the first conditional write and then reports
// ErrAmbiguous, as when a response is lost on the way back.
type ambiguousOnce struct {
	objstore.Store
	fired atomic.Bool
}

func (a *ambiguousOnce) PutIfAbsent(ctx context.Context, key string, data []byte) (objstore.Version, error) {
	v, err := a.Store.PutIfAbsent(ctx, key, data)
	if err == nil && a.fired.CompareAndSwap(false, true) {
		return "", fmt.Errorf("put-if-absent %q: response lost: %w", key, objstore.ErrAmbiguous)
	}
	return v, err
}

// Run runs the conformance suite against stores made by newStore (one fresh,
// empty store per subtest). Every objstore.Store implementation must pass it:
// slate's manifest CAS and writer fencing rely on exactly these guarantees.
func Run(t *testing.T, newStore func(t *testing.T) objstore.Store, caps Capabilities) {
	ctx := context.Background()

	t.Run("GetMissing", func(t *testing.T) {
		s := newStore(t)
		if _, err := s.Get(ctx, "nope/x"); !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("Get missing: %v, want ErrNotFound", err)
		}
		if _, err := s.GetRange(ctx, "nope/x", 0, 4); !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("GetRange missing: %v, want ErrNotFound", err)
		}
	})

	t.Run("PutGetVersions", func(t *testing.T) {
		s := newStore(t)
		v1, err := s.Put(ctx, "k/a", []byte("one"))
		if err != nil {
			t.Fatal(err)
		}
		o, err := s.Get(ctx, "k/a")
		if err != nil || string(o.Data) != "one" || o.Version != v1 {
			t.Fatalf("Get = %q %q %v, want one %q", o.Data, o.Version, err, v1)
		}
		v2, err := s.Put(ctx, "k/a", []byte("two"))
		if err != nil || v2 == v1 {
			t.Fatalf("rewrite: version %q (was %q), err %v", v2, v1, err)
		}
		v3, err := s.Put(ctx, "k/a", []byte("two"))
		if err != nil {
			t.Fatal(err)
		}
		if !caps.IdenticalBytesSameVersion && v3 == v2 {
			t.Fatalf("rewrite with identical bytes kept version %q", v3)
		}
		if _, err := s.Put(ctx, "k/empty", nil); err != nil {
			t.Fatal(err)
		}
		o, err = s.Get(ctx, "k/empty")
		if err != nil || len(o.Data) != 0 {
			t.Fatalf("zero-byte object: %q %v", o.Data, err)
		}
	})

	t.Run("PutIfAbsent", func(t *testing.T) {
		s := newStore(t)
		v, err := s.PutIfAbsent(ctx, "c/x", []byte("first"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutIfAbsent(ctx, "c/x", []byte("second")); !errors.Is(err, objstore.ErrPreconditionFailed) {
			t.Fatalf("second create: %v, want ErrPreconditionFailed", err)
		}
		o, _ := s.Get(ctx, "c/x")
		if string(o.Data) != "first" || o.Version != v {
			t.Fatalf("object after lost create: %q %q", o.Data, o.Version)
		}
		if err := s.Delete(ctx, "c/x"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutIfAbsent(ctx, "c/x", []byte("third")); err != nil {
			t.Fatalf("create after delete: %v", err)
		}
	})

	t.Run("PutIfMatch", func(t *testing.T) {
		s := newStore(t)
		if _, err := s.PutIfMatch(ctx, "m/x", []byte("a"), "whatever"); !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("put-if-match on missing: %v, want ErrNotFound", err)
		}
		v1, _ := s.Put(ctx, "m/x", []byte("a"))
		v2, err := s.PutIfMatch(ctx, "m/x", []byte("b"), v1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutIfMatch(ctx, "m/x", []byte("c"), v1); !errors.Is(err, objstore.ErrPreconditionFailed) {
			t.Fatalf("stale put-if-match: %v, want ErrPreconditionFailed", err)
		}
		o, _ := s.Get(ctx, "m/x")
		if string(o.Data) != "b" || o.Version != v2 {
			t.Fatalf("after CAS: %q %q", o.Data, o.Version)
		}
	})

	t.Run("DeleteIdempotent", func(t *testing.T) {
		s := newStore(t)
		if err := s.Delete(ctx, "d/x"); err != nil {
			t.Fatalf("delete absent: %v", err)
		}
		s.Put(ctx, "d/x", []byte("1"))
		if err := s.Delete(ctx, "d/x"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "d/x"); !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("get after delete: %v", err)
		}
	})

	t.Run("ListOrdering", func(t *testing.T) {
		s := newStore(t)
		keys := []string{"wal/00000000000000000010.sst", "a/b/c", "wal/00000000000000000002.sst", "a/b2", "a/c", "a/b/a", "ab", "wal/00000000000000000001.sst", "z"}
		for i, k := range keys {
			if _, err := s.Put(ctx, k, bytes.Repeat([]byte{'x'}, i)); err != nil {
				t.Fatal(err)
			}
		}
		check := func(prefix string, want ...string) {
			t.Helper()
			got, err := s.List(ctx, prefix)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, o := range got {
				names = append(names, o.Key)
			}
			if fmt.Sprint(names) != fmt.Sprint(want) {
				t.Fatalf("List(%q) = %v, want %v", prefix, names, want)
			}
		}
		check("a/b", "a/b/a", "a/b/c", "a/b2")
		check("a/", "a/b/a", "a/b/c", "a/b2", "a/c")
		check("wal/", "wal/00000000000000000001.sst", "wal/00000000000000000002.sst", "wal/00000000000000000010.sst")
		check("", "a/b/a", "a/b/c", "a/b2", "a/c", "ab", "wal/00000000000000000001.sst", "wal/00000000000000000002.sst", "wal/00000000000000000010.sst", "z")
		check("nothing/")
		got, _ := s.List(ctx, "a/b2")
		if len(got) != 1 || got[0].Size != 3 {
			t.Fatalf("List size: %+v", got)
		}
	})

	t.Run("RangeReads", func(t *testing.T) {
		s := newStore(t)
		data := []byte("0123456789")
		s.Put(ctx, "r/x", data)
		cases := []struct {
			off, n int64
			want   string
		}{{0, 10, "0123456789"}, {2, 3, "234"}, {8, 10, "89"}, {10, 5, ""}, {12, 1, ""}, {3, 0, ""}, {9, 1, "9"}}
		for _, c := range cases {
			got, err := s.GetRange(ctx, "r/x", c.off, c.n)
			if err != nil || string(got) != c.want {
				t.Fatalf("GetRange(%d,%d) = %q %v, want %q", c.off, c.n, got, err, c.want)
			}
		}
	})

	t.Run("RacePutIfAbsent64", func(t *testing.T) {
		s := newStore(t)
		const racers = 64
		var wins atomic.Int64
		var winner atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, racers)
		for i := 0; i < racers; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				_, err := s.PutIfAbsent(ctx, "race/key", []byte("writer-"+strconv.Itoa(i)))
				switch {
				case err == nil:
					wins.Add(1)
					winner.Store(int64(i))
				case errors.Is(err, objstore.ErrPreconditionFailed):
				default:
					errs <- err
				}
			}(i)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("unexpected error: %v", err)
		}
		if wins.Load() != 1 {
			t.Fatalf("%d winners, want exactly 1", wins.Load())
		}
		o, _ := s.Get(ctx, "race/key")
		if string(o.Data) != "writer-"+strconv.Itoa(int(winner.Load())) {
			t.Fatalf("stored %q, winner was %d", o.Data, winner.Load())
		}
	})

	t.Run("RacePutIfMatchCounter", func(t *testing.T) {
		s := newStore(t)
		s.Put(ctx, "cas/counter", []byte("0"))
		const workers, increments = 8, 6
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for done := 0; done < increments; {
					o, err := s.Get(ctx, "cas/counter")
					if err != nil {
						t.Error(err)
						return
					}
					n, _ := strconv.Atoi(string(bytes.SplitN(o.Data, []byte{'/'}, 2)[0]))
					// The writer id makes bytes unique so S3 ETags differ.
					next := []byte(strconv.Itoa(n+1) + "/" + strconv.Itoa(w))
					if _, err := s.PutIfMatch(ctx, "cas/counter", next, o.Version); err == nil {
						done++
					} else if !errors.Is(err, objstore.ErrPreconditionFailed) {
						t.Error(err)
						return
					}
				}
			}(w)
		}
		wg.Wait()
		o, _ := s.Get(ctx, "cas/counter")
		n, _ := strconv.Atoi(string(bytes.SplitN(o.Data, []byte{'/'}, 2)[0]))
		if n != workers*increments {
			t.Fatalf("counter %d, want %d: a CAS was lost", n, workers*increments)
		}
	})

	t.Run("AmbiguousWriteRetryReportsTruth", func(t *testing.T) {
		s := &ambiguousOnce{Store: newStore(t)}
		// Our first attempt lands but its response is lost; the retry sees
		// "already exists", reads back, recognizes its own unique bytes.
		mine := []byte("put-id=writer-1/attempt-7")
		v, err := objstore.PutIfAbsentVerified(ctx, s, "amb/key", mine)
		if err != nil {
			t.Fatalf("verified create after ambiguous success: %v", err)
		}
		o, _ := s.Get(ctx, "amb/key")
		if o.Version != v || !bytes.Equal(o.Data, mine) {
			t.Fatalf("read back %q %q, want %q %q", o.Data, o.Version, mine, v)
		}
		// Someone else's object at the key: the truth is "lost".
		other := []byte("put-id=writer-2/attempt-1")
		if _, err := objstore.PutIfAbsentVerified(ctx, s, "amb/key", other); !errors.Is(err, objstore.ErrPreconditionFailed) {
			t.Fatalf("create over another writer's object: %v, want ErrPreconditionFailed", err)
		}
	})
}
