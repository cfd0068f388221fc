package slate

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/slate/objstore"
)

// corruptionTrialsMin is how many damaged copies of each object type (WAL,
// SST, manifest, GC boundary) one CI run tries. RS_CORRUPTION_FULL=1 tries
// every byte of every object with several masks instead (minutes, not
// seconds); RS_CORRUPTION_SEED=N draws another sample.
const corruptionTrialsMin = 2000

// corruptionEdgeBytes: the first and last bytes of every object (headers,
// footers, checksums, format and kind fields) are always all tried.
const corruptionEdgeBytes = 48

// corruptionFixture builds a database the way a view maintainer uses one: a
// table keyspace (t/<id>, puts, updates and deletes) and an aggregate over it
// (v/<group>/count and v/<group>/sum, maintained by merges, so damage that
// drops or revives a row shows as a wrong aggregate). It holds a sorted run,
// L0 SSTs, a GC boundary, an old fence and several data WAL objects above
// the replay point. It returns the store, the expected full scan and the
// newest manifest.
func corruptionFixture(t *testing.T) (*objstore.Memory, string, *Manifest) {
	t.Helper()
	ctx := context.Background()
	store := objstore.NewMemory()
	clock := newTestClock()
	must := func(_ uint64, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	d, err := Open(ctx, store, "db", testOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	values := map[int]int64{}
	write := func(d *DB, id int, value int64, del bool) {
		t.Helper()
		group := fmt.Sprintf("v/g%d/", id%7)
		var b Batch
		if old, ok := values[id]; ok {
			b.Merge([]byte(group+"sum"), i64(-old))
			b.Merge([]byte(group+"count"), i64(-1))
			delete(values, id)
		}
		key := []byte(fmt.Sprintf("t/%03d", id))
		if del {
			b.Delete(key)
		} else {
			b.Put(key, i64(value))
			b.Merge([]byte(group+"sum"), i64(value))
			b.Merge([]byte(group+"count"), i64(1))
			values[id] = value
		}
		must(d.Write(ctx, &b, WriteOptions{AwaitDurable: true}))
	}
	for i := 0; i < 240; i++ {
		write(d, i, int64(i*7), false)
	}
	clock.advance(time.Second)
	if err := d.FlushMemtable(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := d.CompactAll(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 60; i++ {
		write(d, i*7%240, int64(1000+i), i%4 == 0)
	}
	clock.advance(time.Second)
	if err := d.FlushMemtable(ctx); err != nil {
		t.Fatal(err)
	}
	clock.advance(time.Second)
	if _, err := d.GC(ctx, clock.now()); err != nil {
		t.Fatal(err)
	}
	// A second writer leaves the first one's fence above the replay point.
	d, err = Open(ctx, store, "db", testOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		write(d, 240+i, int64(i), false)
		write(d, i*11%240, int64(2000+i), i == 2)
	}
	want := renderScan(t, d.Scan(ctx, nil, nil, ReadOptions{}))
	m := d.Manifest()
	if _, err := store.Get(ctx, "db/"+manifestBoundaryKey); err != nil {
		t.Fatalf("fixture has no GC boundary: %v", err)
	}
	if len(m.SortedRuns) == 0 || len(m.L0) == 0 {
		t.Fatalf("fixture lacks a sorted run or L0: %d runs, %d L0", len(m.SortedRuns), len(m.L0))
	}
	return store, want, m
}

// corruptionTargets lists, per object type, the objects a reopen reads.
func corruptionTargets(t *testing.T, store *objstore.Memory, m *Manifest) map[string][]string {
	t.Helper()
	targets := map[string][]string{
		"manifest": {"db/" + manifestKey(m.ID)},
		"boundary": {"db/" + manifestBoundaryKey},
	}
	for _, s := range m.allSSTs() {
		targets["sst"] = append(targets["sst"], "db/"+s.Key)
	}
	wal, err := store.List(context.Background(), "db/wal/")
	if err != nil {
		t.Fatal(err)
	}
	fences, data := 0, 0
	for _, o := range wal {
		if id, _ := parseWALKey(strings.TrimPrefix(o.Key, "db/")); id > m.ReplayAfterWALID {
			targets["wal"] = append(targets["wal"], o.Key)
			if o.Size == walHeaderBytes {
				fences++
			} else {
				data++
			}
		}
	}
	if fences == 0 || data < 3 || len(targets["sst"]) < 2 {
		t.Fatalf("fixture too small: %d fences, %d data WAL objects, SSTs %v", fences, data, targets["sst"])
	}
	return targets
}

// corruptionTrial is one damaged copy: data[pos] ^= mask (mask != 0), or a
// truncation to pos bytes when mask is 0.
type corruptionTrial struct {
	key  string
	pos  int
	mask byte
}

// corruptionTrials draws the trials for one object type: every edge byte of
// every object with masks 0x01 (the smallest change: it turned WAL kind
// "data" into "fence") and a random one, three truncations per object, then
// random positions weighted by size until there are at least
// corruptionTrialsMin. full tries every byte with four masks.
func corruptionTrials(rng *rand.Rand, sizes map[string]int, full bool) []corruptionTrial {
	keys := make([]string, 0, len(sizes))
	total := 0
	//lint:maprange collecting keys that are sorted next.
	for k, n := range sizes {
		keys = append(keys, k)
		total += n
	}
	sort.Strings(keys)
	randomMask := func() byte { return byte(1 + rng.IntN(255)) }
	var out []corruptionTrial
	for _, k := range keys {
		n := sizes[k]
		out = append(out, corruptionTrial{k, 0, 0}, corruptionTrial{k, n / 2, 0}, corruptionTrial{k, n - 1, 0})
		for pos := 0; pos < n; pos++ {
			switch {
			case full:
				for _, mask := range []byte{0x01, 0x80, 0xff, randomMask()} {
					out = append(out, corruptionTrial{k, pos, mask})
				}
			case pos < corruptionEdgeBytes || pos >= n-corruptionEdgeBytes:
				out = append(out, corruptionTrial{k, pos, 0x01}, corruptionTrial{k, pos, randomMask()})
			}
		}
	}
	for len(out) < corruptionTrialsMin {
		at := rng.IntN(total)
		for _, k := range keys {
			if at < sizes[k] {
				out = append(out, corruptionTrial{k, at, randomMask()})
				break
			}
			at -= sizes[k]
		}
	}
	return out
}

func corruptionSeed(t *testing.T) uint64 {
	t.Helper()
	seed := uint64(1)
	if s := os.Getenv("RS_CORRUPTION_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("RS_CORRUPTION_SEED=%q: %v", s, err)
		}
		seed = n
	}
	t.Logf("SEED=%d RS_CORRUPTION_FULL=%q (reproduce: RS_CORRUPTION_SEED=%d go test ./slate -run %s)", seed, os.Getenv("RS_CORRUPTION_FULL"), seed, t.Name())
	return seed
}

// checkCorruptRead opens the database over store and scans it: the result
// must be RS-5002 naming key, or exactly the right data.
func checkCorruptRead(t *testing.T, store objstore.Store, key, want string, trial string) (refused bool) {
	t.Helper()
	ctx := context.Background()
	clock := newTestClock()
	clock.advance(time.Hour)
	d, err := Open(ctx, store, "db", testOptions(clock))
	var got string
	if err == nil {
		it := d.Scan(ctx, nil, nil, ReadOptions{})
		for it.Next() {
		}
		err = it.Err()
		if err == nil {
			got = renderScan(t, d.Scan(ctx, nil, nil, ReadOptions{}))
		}
	}
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: error is not a corruption error: %v", trial, err)
		}
		if !strings.Contains(err.Error(), strings.TrimPrefix(key, "db/")) {
			t.Fatalf("%s: error does not name the object: %v", trial, err)
		}
		if e, ok := errcode.As(err); !ok || e.Code != errcode.StorageObjectCorrupt {
			t.Fatalf("%s: error is not RS-5002: %v", trial, err)
		}
		return true
	}
	if got != want {
		t.Fatalf("%s: WRONG DATA after corruption:\n got %q\nwant %q", trial, got, want)
	}
	return false
}

// TestCorruptionIsDetected damages every object type a reopen reads — the
// WAL objects above the replay point (data and fence), every SST, the
// newest manifest and the GC boundary — one byte (or one truncation) at a
// time. Every reopen and full scan either fails with RS-5002 naming the
// object or returns exactly the data from before; never other data.
func TestCorruptionIsDetected(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(corruptionSeed(t), 0xc0))
	full := os.Getenv("RS_CORRUPTION_FULL") != ""
	base, want, m := corruptionFixture(t)
	targets := corruptionTargets(t, base, m)
	for _, kind := range []string{"wal", "sst", "manifest", "boundary"} {
		originals := map[string][]byte{}
		sizes := map[string]int{}
		for _, key := range targets[kind] {
			obj, err := base.Get(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			originals[key], sizes[key] = obj.Data, len(obj.Data)
		}
		trials := corruptionTrials(rng, sizes, full)
		refused := 0
		for _, tr := range trials {
			store := base.Clone()
			bad := append([]byte(nil), originals[tr.key]...)
			what := fmt.Sprintf("%s byte %d ^= %#02x", tr.key, tr.pos, tr.mask)
			if tr.mask == 0 {
				bad, what = bad[:tr.pos], fmt.Sprintf("%s truncated to %d bytes", tr.key, tr.pos)
			} else {
				bad[tr.pos] ^= tr.mask
			}
			store.Put(ctx, tr.key, bad)
			if checkCorruptRead(t, store, tr.key, want, what) {
				refused++
			}
		}
		t.Logf("%s: %d objects, %d bytes, %d trials, %d refused (RS-5002), %d read back identical",
			kind, len(sizes), totalBytes(sizes), len(trials), refused, len(trials)-refused)
		if len(trials) < corruptionTrialsMin || refused == 0 {
			t.Fatalf("%s: %d trials, %d refused: the campaign proves nothing", kind, len(trials), refused)
		}
	}
}

func totalBytes(sizes map[string]int) int {
	n := 0
	//lint:maprange summing.
	for _, s := range sizes {
		n += s
	}
	return n
}

// TestWALKindByteIsChecked is the reproducer of a silent loss: the kind byte
// (header offset 6) of a data WAL object was outside the checksum, so
// turning 0 (data) into 1 (fence) made replay skip an acknowledged commit
// without any error, and the aggregate kept counting the lost row.
func TestWALKindByteIsChecked(t *testing.T) {
	ctx := context.Background()
	base, want, m := corruptionFixture(t)
	for _, key := range corruptionTargets(t, base, m)["wal"] {
		obj, err := base.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if obj.Data[6] != walKindData {
			continue
		}
		for _, kind := range []byte{walKindFence, 2, 0xff} {
			store := base.Clone()
			bad := append([]byte(nil), obj.Data...)
			bad[6] = kind
			store.Put(ctx, key, bad)
			if !checkCorruptRead(t, store, key, want, fmt.Sprintf("%s kind %d", key, kind)) {
				t.Fatalf("%s with kind %d: reopen succeeded over a damaged WAL object", key, kind)
			}
		}
	}
}

// TestFormat1ObjectsStillRead: a store written before format 2 (WAL objects
// and manifests whose checksum covered the payload only, a decimal GC
// boundary) opens with the same data, and a format-1 WAL object's kind byte
// is still checked (structurally: a fence holds no rows, data holds some).
func TestFormat1ObjectsStillRead(t *testing.T) {
	ctx := context.Background()
	base, want, m := corruptionFixture(t)
	old := base.Clone()
	infos, err := old.List(ctx, "db/")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range infos {
		key := strings.TrimPrefix(o.Key, "db/")
		obj, _ := old.Get(ctx, o.Key)
		var data []byte
		if id, ok := parseWALKey(key); ok {
			w, err := decodeWAL(&decompressor{}, key, id, obj.Data)
			if err != nil {
				t.Fatal(err)
			}
			data = encodeWALLegacy(walFormatPayloadChecksum, obj.Data[6], w.epoch, id, w.rows)
		} else if id, ok := parseManifestKey(key); ok {
			mf, err := decodeManifest(key, id, obj.Data)
			if err != nil {
				t.Fatal(err)
			}
			data = encodeManifest(mf)
			data[5] = manifestFormatPayloadChecksum
			binary.BigEndian.PutUint32(data[manifestChecksumOffset:], checksum(data[manifestHeaderBytes:]))
		} else if key == manifestBoundaryKey {
			n, err := decodeBoundary(key, obj.Data)
			if err != nil {
				t.Fatal(err)
			}
			data = []byte(strconv.FormatUint(n, 10))
		} else {
			continue
		}
		old.Put(ctx, o.Key, data)
	}
	checkCorruptRead(t, old.Clone(), "", want, "format-1 store")
	for _, key := range corruptionTargets(t, old, m)["wal"] {
		obj, _ := old.Get(ctx, key)
		store := old.Clone()
		bad := append([]byte(nil), obj.Data...)
		bad[6] ^= 1 // data <-> fence
		store.Put(ctx, key, bad)
		if !checkCorruptRead(t, store, key, want, key+" format 1, kind flipped") {
			t.Fatalf("%s: a format-1 WAL object with its kind flipped was read", key)
		}
	}
}

// encodeWALLegacy encodes a WAL object as an older build wrote it: format 1
// (checksum over the rows only) or 2 (checksum over the object), rows
// uncompressed and no codec byte.
func encodeWALLegacy(format uint16, kind byte, epoch, id uint64, rows []row) []byte {
	out := make([]byte, walHeaderBytes)
	copy(out, walMagic)
	binary.BigEndian.PutUint16(out[4:], format)
	out[6] = kind
	binary.BigEndian.PutUint64(out[7:], epoch)
	binary.BigEndian.PutUint64(out[15:], id)
	for _, r := range rows {
		out = appendRow(out, r)
	}
	sum := checksumAround(out, walChecksumOffset)
	if format == walFormatPayloadChecksum {
		sum = checksum(out[walHeaderBytes:])
	}
	binary.BigEndian.PutUint32(out[walChecksumOffset:], sum)
	return out
}
