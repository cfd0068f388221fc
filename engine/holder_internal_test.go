package engine

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/slate/objstore"
)

// fakeClock is a settable clock for holder tests.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestHolderRefusesLiveHolder(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMemory()
	clock := &fakeClock{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	alive := func(int) bool { return true }
	first, err := acquireHolder(ctx, store, holderOptions{StorageName: "memory://x", Now: clock.now, ProcessAlive: alive})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Release(ctx)
	clock.t = clock.t.Add(holderRenewInterval)
	_, err = acquireHolder(ctx, store, holderOptions{StorageName: "memory://x", Now: clock.now, ProcessAlive: alive})
	if !errcode.Has(err, errcode.StoreInUse) {
		t.Fatalf("second holder: got %v, want RS-3103", err)
	}
	host, _ := os.Hostname()
	for _, want := range []string{"in use by pid", host, "--takeover"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %q", err, want)
		}
	}
	// The refused starter left the first holder's claim as it was.
	if lost := first.renew(clock.now); lost || first.Lost() != nil {
		t.Fatalf("first holder lost its claim to a refused starter: %v", first.Lost())
	}
}

func TestHolderTakesOverDeadOrStaleHolder(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		alive    bool
		advance  time.Duration
		takeover bool
	}{
		{name: "process gone on this host", alive: false},
		{name: "claim not renewed", alive: true, advance: holderTTL + time.Second},
		{name: "operator takeover", alive: true, takeover: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := objstore.NewMemory()
			clock := &fakeClock{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
			var lostWith error
			first, err := acquireHolder(ctx, store, holderOptions{Now: clock.now, ProcessAlive: func(int) bool { return true },
				OnLost: func(err error) { lostWith = err }})
			if err != nil {
				t.Fatal(err)
			}
			clock.t = clock.t.Add(tc.advance)
			second, err := acquireHolder(ctx, store, holderOptions{Takeover: tc.takeover, Now: clock.now,
				ProcessAlive: func(int) bool { return tc.alive }})
			if err != nil {
				t.Fatalf("takeover refused: %v", err)
			}
			defer second.Release(ctx)
			// The previous holder, if it still runs, learns at its next
			// renewal and stops.
			if !first.renew(clock.now) || !errcode.Has(first.Lost(), errcode.StoreInUse) || lostWith == nil {
				t.Fatalf("previous holder did not learn it lost the store: renew lost=%v, Lost=%v", first.Lost() != nil, first.Lost())
			}
			first.Release(ctx) // must not delete the new holder's record
			if _, err := store.Get(ctx, holderKey); err != nil {
				t.Fatalf("the old holder's release removed the new claim: %v", err)
			}
		})
	}
}

func TestHolderReleaseFreesStore(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMemory()
	alive := func(int) bool { return true }
	first, err := acquireHolder(ctx, store, holderOptions{ProcessAlive: alive})
	if err != nil {
		t.Fatal(err)
	}
	first.Release(ctx)
	second, err := acquireHolder(ctx, store, holderOptions{ProcessAlive: alive})
	if err != nil {
		t.Fatalf("store not free after release: %v", err)
	}
	second.Release(ctx)
}

func TestProcessAlive(t *testing.T) {
	if !processAlive(os.Getpid()) {
		t.Fatal("this process reads as gone")
	}
	if processAlive(1 << 30) {
		t.Fatal("an impossible pid reads as alive")
	}
}

func TestRedactStorageURL(t *testing.T) {
	in := "s3://bucket/prefix?endpoint=http://127.0.0.1:9000&access_key_id=AKID&secret_access_key=SUPERSECRET&session_token=TOK"
	out := RedactStorageURL(in)
	for _, secret := range []string{"SUPERSECRET", "TOK"} {
		if strings.Contains(out, secret) {
			t.Fatalf("redacted URL %q still shows %q", out, secret)
		}
	}
	if !strings.Contains(out, "AKID") || !strings.Contains(out, "bucket/prefix") {
		t.Fatalf("redacted URL %q lost what identifies the store", out)
	}
	if got := RedactStorageURL("postgres://u:pw@h/x"); strings.Contains(got, "pw") {
		t.Fatalf("password shown: %q", got)
	}
	if got := RedactStorageURL("file:///tmp/data"); got != "file:///tmp/data" {
		t.Fatalf("plain URL changed: %q", got)
	}
}
