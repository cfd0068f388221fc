package slate

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/slate/objstore"
)

// manifestBoundaryKey holds the highest manifest id GC may have deleted. A
// manifest created at or below it is a stale commit (its creator raced GC
// with an old view) and does not count.
const manifestBoundaryKey = "gc/manifest.boundary"

// manifestCommitAttemptsMax bounds the CAS retry loop of one manifest update.
// Each lost race means another role committed, so progress is being made; the
// bound turns a livelock into an error instead of a hang.
const manifestCommitAttemptsMax = 64

// manifestProbesMax bounds how many ids past the newest listed manifest are
// probed with GETs (a stale LIST); a longer miss is caught by the commit's
// put-if-absent conflict and the next refresh.
const manifestProbesMax = 8

// manifestListAttemptsMax bounds re-listing when the newest listed manifest
// vanishes before it is read (GC raced the read).
const manifestListAttemptsMax = 8

func parseManifestKey(key string) (uint64, bool) {
	if !strings.HasPrefix(key, "manifest/") || !strings.HasSuffix(key, ".manifest") {
		return 0, false
	}
	id, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(key, "manifest/"), ".manifest"), 10, 64)
	return id, err == nil
}

// readManifest reads manifest id.
func readManifest(ctx context.Context, store objstore.Store, id uint64) (*Manifest, error) {
	key := manifestKey(id)
	obj, err := store.Get(ctx, key)
	if err != nil {
		return nil, storeErr(err, "read manifest %s", key)
	}
	return decodeManifest(key, id, obj.Data)
}

// latestManifest returns the newest manifest, or nil if the database has none.
func latestManifest(ctx context.Context, store objstore.Store) (*Manifest, error) {
	var lastErr error
	for attempt := 0; attempt < manifestListAttemptsMax; attempt++ {
		infos, err := store.List(ctx, "manifest/")
		if err != nil {
			return nil, storeErr(err, "list manifests")
		}
		var newest uint64
		for _, o := range infos {
			if id, ok := parseManifestKey(o.Key); ok && id > newest {
				newest = id
			}
		}
		var boundary uint64
		if newest == 0 {
			// NB: a stale LIST may miss every manifest. GC never deletes
			// the newest, so the first id above the GC boundary exists if
			// the database does: probe it.
			b, _, err := readBoundary(ctx, store, manifestBoundaryKey)
			if err != nil {
				return nil, err
			}
			boundary = b
			newest = b + 1
		}
		m, err := readManifest(ctx, store, newest)
		if err == nil {
			// A LIST may be stale (eventually consistent stores, the
			// simulator): probe the following ids before trusting it.
			for probe := 0; probe < manifestProbesMax; probe++ {
				next, err := readManifest(ctx, store, m.ID+1)
				if err != nil {
					if isNotFound(err) {
						break
					}
					return nil, err
				}
				m = next
			}
			return m, nil
		}
		if len(infos) == 0 && boundary == 0 && isNotFound(err) {
			return nil, nil // a new database
		}
		if !isNotFound(err) {
			return nil, err
		}
		lastErr = err
	}
	return nil, lastErr
}

// openManifest is latestManifest for a database already open (a writer,
// compactor or reader refreshing its view): there must be a manifest, so
// none — the store emptied or deleted under it — is an error naming it,
// never a nil manifest for the caller to trip over.
func openManifest(ctx context.Context, store objstore.Store) (*Manifest, error) {
	m, err := latestManifest(ctx, store)
	if err == nil && m == nil {
		return nil, corruptErr("manifest/", "no manifest is left though the database is open (was the store emptied or deleted under the running server?)")
	}
	return m, err
}

// The boundary object's encoding: "RSGB" | u16 format | u64 boundary |
// u32 crc32c of the 14 bytes before it. Builds before format 1 wrote the
// number in decimal, which is still read; a damaged format-1 object cannot
// pass for one (it keeps at least three of its four letters).
const (
	boundaryMagic         = "RSGB"
	boundaryFormatVersion = 1
	boundaryBytes         = 4 + 2 + 8 + 4
	boundaryDecimalMax    = 20 // digits of the largest uint64
)

func encodeBoundary(n uint64) []byte {
	out := make([]byte, 0, boundaryBytes)
	out = append(out, boundaryMagic...)
	out = binary.BigEndian.AppendUint16(out, boundaryFormatVersion)
	out = binary.BigEndian.AppendUint64(out, n)
	return binary.BigEndian.AppendUint32(out, checksum(out))
}

func decodeBoundary(key string, data []byte) (uint64, error) {
	if len(data) == boundaryBytes && string(data[:4]) == boundaryMagic {
		if checksum(data[:boundaryBytes-4]) != binary.BigEndian.Uint32(data[boundaryBytes-4:]) {
			return 0, corruptErr(key, "GC boundary checksum mismatch")
		}
		if v := binary.BigEndian.Uint16(data[4:6]); v != boundaryFormatVersion {
			return 0, formatErr(key, "GC boundary format version %d, this build reads %d", v, boundaryFormatVersion)
		}
		return binary.BigEndian.Uint64(data[6:14]), nil
	}
	if len(data) == 0 || len(data) > boundaryDecimalMax || strings.Trim(string(data), "0123456789") != "" {
		return 0, corruptErr(key, "not a GC boundary (bad magic or %d bytes)", len(data))
	}
	n, err := strconv.ParseUint(string(data), 10, 64)
	if err != nil {
		return 0, corruptErr(key, "GC boundary is not a number: %v", err)
	}
	return n, nil
}

func readBoundary(ctx context.Context, store objstore.Store, key string) (uint64, objstore.Version, error) {
	obj, err := store.Get(ctx, key)
	if err != nil {
		if isNotFound(err) {
			return 0, "", nil
		}
		return 0, "", storeErr(err, "read %s", key)
	}
	n, err := decodeBoundary(key, obj.Data)
	if err != nil {
		return 0, "", err
	}
	return n, obj.Version, nil
}

// advanceBoundary raises the boundary file to at least to (never lowers it).
func advanceBoundary(ctx context.Context, store objstore.Store, key string, to uint64) error {
	for attempt := 0; attempt < manifestCommitAttemptsMax; attempt++ {
		cur, version, err := readBoundary(ctx, store, key)
		if err != nil {
			return err
		}
		if cur >= to {
			return nil
		}
		data := encodeBoundary(to)
		if version == "" {
			_, err = store.PutIfAbsent(ctx, key, data)
		} else {
			_, err = store.PutIfMatch(ctx, key, data, version)
		}
		if err == nil {
			return nil
		}
		if !errors.Is(err, objstore.ErrPreconditionFailed) && !errors.Is(err, objstore.ErrNotFound) &&
			!errors.Is(err, objstore.ErrAmbiguous) && !errors.Is(err, objstore.ErrTransient) {
			return storeErr(err, "advance %s", key)
		}
	}
	return storeErr(fmt.Errorf("gave up after %d attempts", manifestCommitAttemptsMax), "advance %s", key)
}

// manifestUpdate describes one role's change to the manifest.
type manifestUpdate struct {
	// putID makes the new manifest's bytes unique to this commit attempt.
	putID string
	// nowMillis stamps CreatedMillis.
	nowMillis int64
	// mutate applies the role's change to a fresh copy of the newest
	// manifest. It must touch only the role's own fields, and returns an
	// error (e.g. fenced) to abort.
	mutate func(m *Manifest) error
}

// commitManifest applies u on top of cur (the caller's latest view, nil to
// list) and creates the next manifest with put-if-absent. On a lost race it
// refreshes and re-applies u, which merges by field ownership.
func commitManifest(ctx context.Context, store objstore.Store, cur *Manifest, u manifestUpdate) (*Manifest, error) {
	var err error
	for attempt := 0; attempt < manifestCommitAttemptsMax; attempt++ {
		if cur == nil {
			if cur, err = latestManifest(ctx, store); err != nil {
				return nil, err
			}
			if cur == nil {
				return nil, fmt.Errorf("slate: no manifest (database not initialized)")
			}
		}
		next := cur.clone()
		if err := u.mutate(next); err != nil {
			return nil, err
		}
		next.ID = cur.ID + 1
		next.PutID = fmt.Sprintf("%s/%d", u.putID, attempt)
		next.CreatedMillis = u.nowMillis
		key := manifestKey(next.ID)
		_, perr := objstore.PutIfAbsentVerified(ctx, store, key, encodeManifest(next))
		if perr != nil {
			if errors.Is(perr, objstore.ErrPreconditionFailed) {
				cur = nil // lost the race: refresh and re-apply
				continue
			}
			return nil, storeErr(perr, "create %s", key)
		}
		boundary, _, berr := readBoundary(ctx, store, manifestBoundaryKey)
		if berr != nil {
			return nil, berr
		}
		if next.ID <= boundary {
			// INVARIANT: GC never deletes the newest manifest, so a newer
			// one exists: our create filled a hole GC left behind.
			cur = nil
			continue
		}
		return next, nil
	}
	return nil, storeErr(fmt.Errorf("manifest commit: %d lost races in a row", manifestCommitAttemptsMax), "commit manifest")
}

// initManifest returns the newest manifest, creating manifest 1 if the
// database is new.
func initManifest(ctx context.Context, store objstore.Store, putID string, nowMillis int64) (*Manifest, error) {
	for attempt := 0; attempt < manifestCommitAttemptsMax; attempt++ {
		m, err := latestManifest(ctx, store)
		if err != nil || m != nil {
			return m, err
		}
		first := &Manifest{ID: 1, CreatedMillis: nowMillis, PutID: putID}
		if _, err := objstore.PutIfAbsentVerified(ctx, store, manifestKey(1), encodeManifest(first)); err != nil {
			if errors.Is(err, objstore.ErrPreconditionFailed) {
				continue
			}
			return nil, storeErr(err, "create first manifest")
		}
		return first, nil
	}
	return nil, storeErr(fmt.Errorf("could not create or read manifest 1"), "init manifest")
}
