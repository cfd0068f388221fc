package slate

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/rockstream/rockstream/slate/objstore"
)

// VerifyReport is what one Verify pass found.
type VerifyReport struct {
	// Databases are the database paths verified.
	Databases []string
	// Objects and Bytes count every object read and checked.
	Objects int
	Bytes   int64
	// Problems lists every damaged or missing object, in key order per
	// database.
	Problems []VerifyProblem
}

// VerifyProblem is one object that failed verification.
type VerifyProblem struct {
	// Key is the object's full key in the store.
	Key string
	// Needed: the newest manifest or a checkpoint references the object (or
	// it is WAL a reopen replays), so the database cannot open or read
	// until it is repaired. An unneeded damaged object is garbage GC would
	// delete anyway.
	Needed bool
	Err    error
}

// Verify reads every object of the slate database at path — or of every
// database in the store when path is "" (each prefix holding manifest/) —
// and checks every checksum: every manifest, the GC boundary, every WAL
// object, and every block, the filter, the index and the footer of every
// SST, plus that the blocks tile the SST and hold the row count its footer
// states, in order. It also reports objects the newest manifest needs that
// are missing. It only reads. It prints one line per problem and per
// database to w and returns the report; the error is the first problem's
// (RS-5002 naming the object) when there is one.
func Verify(ctx context.Context, store objstore.Store, path string, w io.Writer) (VerifyReport, error) {
	var report VerifyReport
	paths := []string{strings.Trim(path, "/")}
	if path == "" {
		found, err := findDatabases(ctx, store)
		if err != nil {
			return report, err
		}
		paths = found
	}
	for _, p := range paths {
		if err := verifyDatabase(ctx, store, p, w, &report); err != nil {
			return report, err
		}
	}
	if len(report.Problems) > 0 {
		fmt.Fprintf(w, "FAILED: %d damaged or missing objects in %d databases (%d objects, %d bytes read)\n",
			len(report.Problems), len(report.Databases), report.Objects, report.Bytes)
		return report, report.Problems[0].Err
	}
	fmt.Fprintf(w, "ok: %d databases, %d objects, %d bytes, every checksum matches\n", len(report.Databases), report.Objects, report.Bytes)
	return report, nil
}

// findDatabases returns the prefixes (sorted) under which manifests live.
func findDatabases(ctx context.Context, store objstore.Store) ([]string, error) {
	infos, err := store.List(ctx, "")
	if err != nil {
		return nil, storeErr(err, "list the store")
	}
	seen := map[string]bool{}
	var out []string
	for _, o := range infos {
		i := strings.LastIndex(o.Key, "manifest/")
		if i < 0 || (i > 0 && o.Key[i-1] != '/') {
			continue
		}
		if _, ok := parseManifestKey(o.Key[i:]); !ok {
			continue
		}
		p := strings.TrimSuffix(o.Key[:i], "/")
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, nil
}

func verifyDatabase(ctx context.Context, store objstore.Store, path string, w io.Writer, report *VerifyReport) error {
	db := objstore.Prefixed(store, path)
	full := func(key string) string {
		if path == "" {
			return key
		}
		return path + "/" + key
	}
	infos, err := db.List(ctx, "")
	if err != nil {
		return storeErr(err, "list database %q", path)
	}
	report.Databases = append(report.Databases, path)
	problemsBefore := len(report.Problems)
	var decomp decompressor
	bad := map[string]error{}
	sizes := map[string]int64{}
	var newest *Manifest
	var newestListed uint64
	manifests := map[uint64]*Manifest{}
	for _, o := range infos {
		sizes[o.Key] = o.Size
		if id, ok := parseManifestKey(o.Key); ok {
			newestListed = max(newestListed, id)
			m, err := readManifest(ctx, db, id)
			if err != nil {
				bad[o.Key] = err
				continue
			}
			manifests[id] = m
			if newest == nil || id > newest.ID {
				newest = m
			}
		}
	}
	// What a reopen needs: the newest manifest, the SSTs it and its
	// checkpoints reference, and the WAL above its replay point.
	// NB: when the newest manifest is damaged, the newest readable one
	// stands in for what is referenced: it references no less WAL.
	needed := map[string]bool{manifestBoundaryKey: true, manifestKey(newestListed): true}
	var walFrom uint64
	if newest != nil {
		needed[manifestKey(newest.ID)] = true
		walFrom = newest.ReplayAfterWALID + 1
		referenced := []*Manifest{newest}
		for _, cp := range newest.Checkpoints {
			needed[manifestKey(cp.ManifestID)] = true
			if m, ok := manifests[cp.ManifestID]; ok {
				referenced = append(referenced, m)
			}
		}
		for _, m := range referenced {
			for _, s := range m.allSSTs() {
				needed[s.Key] = true
				if size, ok := sizes[s.Key]; !ok {
					bad[s.Key] = corruptErr(s.Key, "SST referenced by manifest %d is missing", m.ID)
				} else if size != s.Size {
					bad[s.Key] = corruptErr(s.Key, "SST is %d bytes, manifest %d says %d", size, m.ID, s.Size)
				}
			}
		}
	}
	var walIDs []uint64
	for _, o := range infos {
		if _, done := bad[o.Key]; done {
			continue
		}
		report.Objects++
		report.Bytes += o.Size
		switch {
		case o.Key == manifestBoundaryKey:
			if _, _, err := readBoundary(ctx, db, o.Key); err != nil {
				bad[o.Key] = err
			}
		case strings.HasPrefix(o.Key, "wal/"):
			id, ok := parseWALKey(o.Key)
			if !ok {
				continue
			}
			walIDs = append(walIDs, id)
			if id >= walFrom && walFrom > 0 {
				needed[o.Key] = true
			}
			obj, err := db.Get(ctx, o.Key)
			if err == nil {
				_, err = decodeWAL(&decomp, o.Key, id, obj.Data)
			} else {
				err = storeErr(err, "read %s", o.Key)
			}
			if err != nil {
				bad[o.Key] = err
			}
		case strings.HasPrefix(o.Key, "compacted/") && strings.HasSuffix(o.Key, ".sst"):
			if err := verifySST(ctx, db, o.Key, o.Size); err != nil {
				bad[o.Key] = err
			}
		}
	}
	// WAL ids above the replay point are dense up to the newest: a hole
	// loses commits (and stops a reopen).
	if len(walIDs) > 0 && walFrom > 0 {
		sort.Slice(walIDs, func(i, j int) bool { return walIDs[i] < walIDs[j] })
		i := sort.Search(len(walIDs), func(i int) bool { return walIDs[i] >= walFrom })
		for id := walFrom; id < walIDs[len(walIDs)-1]; id++ {
			if i < len(walIDs) && walIDs[i] == id {
				i++
				continue
			}
			key := walKey(id)
			needed[key] = true
			bad[key] = corruptErr(key, "WAL object missing above the replay point (ids must be dense up to %s)", walKey(walIDs[len(walIDs)-1]))
		}
	}
	keys := make([]string, 0, len(bad))
	//lint:maprange collecting keys that are sorted next.
	for k := range bad {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := VerifyProblem{Key: full(k), Needed: needed[k], Err: bad[k]}
		report.Problems = append(report.Problems, p)
		what := "unreferenced (garbage GC would delete)"
		if p.Needed {
			what = "NEEDED"
		}
		fmt.Fprintf(w, "BAD %s [%s]: %v\n", p.Key, what, p.Err)
	}
	state := "ok"
	if n := len(report.Problems) - problemsBefore; n > 0 {
		state = fmt.Sprintf("%d problems", n)
	}
	readable := ""
	if newest == nil || newest.ID != newestListed {
		readable = " (damaged; references taken from the newest readable one)"
	}
	fmt.Fprintf(w, "database %q: %d objects, newest manifest %d%s: %s\n", path, len(infos), newestListed, readable, state)
	return nil
}

// verifySST checks every byte of one SST: footer, filter and index through
// sstMeta, then every data block, that the blocks tile the data region, and
// that the rows are in order and as many as the footer says.
func verifySST(ctx context.Context, store objstore.Store, key string, size int64) error {
	t := newTableReader(store, 0, 0)
	info := SSTInfo{Key: key, Size: size}
	m, err := t.sstMeta(ctx, info)
	if err != nil {
		return err
	}
	var next int64
	var rows uint64
	var prev row
	for i, e := range m.index {
		if e.offset != next {
			return corruptErr(key, "block %d starts at %d, the previous block ends at %d", i, e.offset, next)
		}
		next = e.offset + e.length
		blockRows, err := t.block(ctx, info, m, i, false)
		if err != nil {
			return err
		}
		for _, r := range blockRows {
			if rows > 0 && (bytes.Compare(prev.key, r.key) > 0 || (bytes.Equal(prev.key, r.key) && prev.seq <= r.seq)) {
				return corruptErr(key, "block %d: rows out of order at key %q", i, r.key)
			}
			prev = r
			rows++
		}
		if len(blockRows) > 0 && !bytes.Equal(prev.key, e.lastKey) {
			return corruptErr(key, "block %d ends at key %q, the index says %q", i, prev.key, e.lastKey)
		}
	}
	if next != m.dataEnd {
		return corruptErr(key, "data blocks end at %d, the filter starts at %d", next, m.dataEnd)
	}
	if rows != m.rows {
		return corruptErr(key, "blocks hold %d rows, the footer says %d", rows, m.rows)
	}
	return nil
}
