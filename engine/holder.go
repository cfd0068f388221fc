package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/slate/objstore"
)

// One writer per store. Two servers on one data directory or S3 prefix
// would fence each other's slate writers back and forth, each failing a
// share of the other's commits. So before a server opens any database in a
// store it claims the store's holder object: a small record naming the
// process (pid, host, start time) that it renews every holderRenewInterval.
// A second server that finds a live holder refuses to start, naming it,
// and touches nothing.
//
// A holder is live unless one of:
//   - it is on this host and its process is gone (a kill -9 restart takes
//     over at once; the kernel, not a clock, says so);
//   - it has not renewed for holderTTL (it crashed on another host, or lost
//     the store);
//   - the operator passed --takeover.
//
// NB: clocks only decide when a silent holder may be presumed gone; safety
// does not rest on them. A server that was presumed gone and comes back
// finds its next renewal refused (put-if-match on the version it wrote) and
// stops serving; its slate writers are fenced by the new holder's opens
// regardless (slate's writer epochs).
//
//	no holder ──PutIfAbsent──► holding ──renew (PutIfMatch)──► holding
//	live holder ──► refused (RS-3103), store untouched
//	dead/stale holder or --takeover ──PutIfMatch──► holding
//	holding ──renewal refused (another holder)──► lost: not ready, one log line
const (
	holderKey = "holder"
	// holderRenewInterval is how often a holder rewrites its record.
	holderRenewInterval = 5 * time.Second
	// holderTTL is how long a record may go unrenewed before another host
	// presumes its holder gone: three missed renewals.
	holderTTL = 3 * holderRenewInterval
)

// holderRecord is the holder object's content.
type holderRecord struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Since   time.Time `json:"since"`
	Renewed time.Time `json:"renewed"`
	// Token distinguishes two holders with the same pid and host (a
	// restarted container).
	Token string `json:"token"`
}

// holder is this process's claim on a store.
type holder struct {
	store objstore.Store
	log   *slog.Logger
	rec   holderRecord

	mu      sync.Mutex
	version objstore.Version
	lost    error // set once another holder took the store over
	onLost  func(error)
	stop    chan struct{}
	done    chan struct{}
}

// holderOptions configure acquireHolder.
type holderOptions struct {
	// Takeover claims the store even from a live holder.
	Takeover bool
	// StorageName names the store in messages (credentials masked).
	StorageName string
	Logger      *slog.Logger
	// OnLost is called once if another server takes the store over.
	OnLost func(error)
	// Now and ProcessAlive are seams for tests (nil: wall clock, /proc).
	Now          func() time.Time
	ProcessAlive func(pid int) bool
}

// acquireHolder claims store for this process or refuses with RS-3103
// naming the live holder. The returned holder renews its claim until Release.
func acquireHolder(ctx context.Context, store objstore.Store, opts holderOptions) (*holder, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	alive := opts.ProcessAlive
	if alive == nil {
		alive = processAlive
	}
	host, _ := os.Hostname()
	t := now().UTC()
	rec := holderRecord{PID: os.Getpid(), Host: host, Since: t, Renewed: t,
		Token: strconv.FormatInt(t.UnixNano(), 36) + "-" + strconv.Itoa(os.Getpid())}
	data, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	h := &holder{store: store, log: opts.Logger, rec: rec, onLost: opts.OnLost, stop: make(chan struct{}), done: make(chan struct{})}
	if h.log == nil {
		h.log = slog.Default()
	}
	// Two attempts: a holder that vanishes (or appears) between our read
	// and our write is a race another starter won or lost; once more
	// settles it.
	for attempt := 0; attempt < 2; attempt++ {
		cur, err := store.Get(ctx, holderKey)
		if errors.Is(err, objstore.ErrNotFound) {
			v, perr := store.PutIfAbsent(ctx, holderKey, data)
			if perr == nil {
				h.version = v
				go h.renewLoop(now)
				return h, nil
			}
			if errors.Is(perr, objstore.ErrPreconditionFailed) {
				continue
			}
			return nil, errcode.Wrap(errcode.StorageUnavailable, perr, "cannot claim storage %s", opts.StorageName)
		}
		if err != nil {
			return nil, errcode.Wrap(errcode.StorageUnavailable, err, "cannot read the holder of storage %s", opts.StorageName)
		}
		var other holderRecord
		if jerr := json.Unmarshal(cur.Data, &other); jerr != nil {
			// An unreadable record names nobody to protect: replace it.
			other = holderRecord{}
		}
		if reason, free := holderGone(other, host, now(), alive); !free && !opts.Takeover {
			return nil, errcode.New(errcode.StoreInUse,
				"storage %s is in use by pid %d on host %s since %s (last renewed %s ago); %s",
				opts.StorageName, other.PID, other.Host, other.Since.Format(time.RFC3339),
				now().Sub(other.Renewed).Round(time.Second), reason)
		} else if other.PID != 0 {
			why := reason
			if !free {
				why = "--takeover"
			}
			h.log.Warn("taking over storage from its previous holder", "storage", opts.StorageName,
				"pid", other.PID, "host", other.Host, "since", other.Since, "because", why)
		}
		v, perr := store.PutIfMatch(ctx, holderKey, data, cur.Version)
		if perr == nil {
			h.version = v
			go h.renewLoop(now)
			return h, nil
		}
		if errors.Is(perr, objstore.ErrPreconditionFailed) || errors.Is(perr, objstore.ErrNotFound) {
			continue
		}
		return nil, errcode.Wrap(errcode.StorageUnavailable, perr, "cannot claim storage %s", opts.StorageName)
	}
	return nil, errcode.New(errcode.StoreInUse, "storage %s is being claimed by another server starting at the same moment", opts.StorageName)
}

// holderGone says whether rec's holder may be presumed gone, and why (or,
// when it may not, what the operator can do).
func holderGone(rec holderRecord, host string, now time.Time, alive func(int) bool) (string, bool) {
	switch {
	case rec.PID == 0:
		return "the holder record was unreadable", true
	case rec.Host == host && !alive(rec.PID):
		return fmt.Sprintf("its process %d on this host is gone", rec.PID), true
	case now.Sub(rec.Renewed) > holderTTL:
		return fmt.Sprintf("it has not renewed its claim for over %s", holderTTL), true
	}
	return fmt.Sprintf("stop that server first; if it is gone, wait %s for its claim to lapse, or start with --takeover (the other server then stops writing)", holderTTL), false
}

// processAlive reports whether pid runs on this host (a zombie is gone).
func processAlive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name: "pid (comm) S ...".
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}

// renewLoop rewrites the record every holderRenewInterval until Release or
// until another holder replaces it.
func (h *holder) renewLoop(now func() time.Time) {
	defer close(h.done)
	t := time.NewTicker(holderRenewInterval)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		if h.renew(now) {
			return
		}
	}
}

// renew rewrites the record once; it returns true once the claim is lost.
func (h *holder) renew(now func() time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	rec := h.rec
	rec.Renewed = now().UTC()
	data, err := json.Marshal(rec)
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), holderRenewInterval)
	defer cancel()
	v, err := h.store.PutIfMatch(ctx, holderKey, data, h.version)
	switch {
	case err == nil:
		h.version = v
		return false
	case errors.Is(err, objstore.ErrPreconditionFailed) || errors.Is(err, objstore.ErrNotFound):
		h.lost = errcode.New(errcode.StoreInUse, "another server took this storage over; this server stopped serving (restart it only after that server is stopped)")
		h.log.Error("storage claim lost: another server holds this storage now; this server stops", "err", h.lost)
		if h.onLost != nil {
			h.onLost(h.lost)
		}
		return true
	default:
		// A failing store: keep the claim and try again next interval.
		h.log.Warn("renewing the storage claim failed; retrying", "err", err)
		return false
	}
}

// Lost returns the reason the claim was lost, or nil while it is held.
func (h *holder) Lost() error {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lost
}

// Release stops renewing and deletes the record if it is still ours, so the
// next start on any host need not wait.
func (h *holder) Release(ctx context.Context) {
	if h == nil {
		return
	}
	close(h.stop)
	<-h.done
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lost != nil {
		return
	}
	cur, err := h.store.Get(ctx, holderKey)
	if err != nil || cur.Version != h.version {
		return
	}
	if err := h.store.Delete(ctx, holderKey); err != nil {
		h.log.Warn("releasing the storage claim failed (the next start takes it over)", "err", err)
	}
}
