package slate

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/slate/objstore"
)

//lint:immutable a constant list; never assigned after init.
var allCompressions = []Compression{CompressionDefault, CompressionNone, CompressionS2, CompressionSnappy, CompressionZstd, CompressionLZ4}

// compressibleValue is a value like a stored row: a few fields, some
// repeated across rows, some not.
func compressibleValue(rng *rand.Rand, i int) []byte {
	return []byte(fmt.Sprintf("auction=%d bidder=%d price=%d channel=channel-%d url=https://www.nexmark.com/item.htm?query=1&channel_id=%d extra=%s",
		1000+i%97, 2000+rng.IntN(50), rng.IntN(100000), i%5, i%5, strings.Repeat("x", rng.IntN(40))))
}

// TestCompressedBodyRoundTrip: every codec's bodies decode to their input,
// compressible input is stored compressed (smaller, with the codec's id),
// and input compression cannot shrink enough is stored raw.
func TestCompressedBodyRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var compressible []byte
	for i := 0; len(compressible) < 64<<10; i++ {
		compressible = append(compressible, compressibleValue(rng, i)...)
	}
	random := make([]byte, 4096)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	var d decompressor
	for _, c := range allCompressions {
		comp := newCompressor(c)
		for _, in := range [][]byte{{}, []byte("x"), random, compressible[:300], compressible[:4096], compressible} {
			body := comp.appendBody([]byte("prefix"), in)
			body = body[len("prefix"):]
			out, err := d.decodeBody("k", "body", body)
			if err != nil {
				t.Fatalf("%v, %d bytes: %v", c, len(in), err)
			}
			if !bytes.Equal(out, in) {
				t.Fatalf("%v, %d bytes: round trip differs", c, len(in))
			}
			codec := body[len(body)-1]
			switch {
			case len(in) >= 4096 && bytes.Equal(in[:100], compressible[:100]) && c != CompressionNone:
				if codec != codecOf(c) || len(body) > len(in)/2 {
					t.Fatalf("%v: %d compressible bytes stored as %d with codec %d", c, len(in), len(body), codec)
				}
			case bytes.Equal(in, random) || c == CompressionNone || len(in) < 2:
				if codec != codecNone || len(body) != len(in)+1 {
					t.Fatalf("%v: %d incompressible bytes stored as %d with codec %d", c, len(in), len(body), codec)
				}
			}
			// In place, as the SST builder compresses a block.
			buf := append([]byte("head"), in...)
			buf = comp.compressInPlace(buf, len("head"))
			if string(buf[:4]) != "head" {
				t.Fatalf("%v: compressInPlace changed the bytes before the block", c)
			}
			out, err = d.decodeBody("k", "block", buf[4:])
			if err != nil || !bytes.Equal(out, in) {
				t.Fatalf("%v, %d bytes in place: %v (equal %v)", c, len(in), err, bytes.Equal(out, in))
			}
		}
	}
}

// TestCompressionRoundTrip writes the same data under every codec through
// the WAL, L0 flushes and compaction, reopens (replaying the WAL), and
// reads it back; the codecs that compress must store it in fewer bytes
// than CompressionNone does, with their own codec id in the objects.
func TestCompressionRoundTrip(t *testing.T) {
	ctx := context.Background()
	sizes := map[Compression][2]int64{} // WAL bytes, SST bytes
	var wantScan []string
	for _, c := range allCompressions {
		store := objstore.NewMemory()
		clock := newTestClock()
		opts := Options{Clock: clock.now, MemtableBytesMax: 64 << 10, BlockBytes: 4096, Compression: c}
		d, err := Open(ctx, store, "db", opts)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(7, 7))
		model := map[string]string{}
		for i := 0; i < 3000; i++ {
			var b Batch
			key := fmt.Sprintf("row/%05d", rng.IntN(1500))
			if i%10 == 9 {
				b.Delete([]byte(key))
				delete(model, key)
			} else {
				v := compressibleValue(rng, i)
				b.Put([]byte(key), v)
				model[key] = string(v)
			}
			if _, err := d.Write(ctx, &b, WriteOptions{AwaitDurable: i%50 == 0}); err != nil {
				t.Fatal(err)
			}
			if i%700 == 699 {
				clock.advance(time.Second)
				if err := d.FlushMemtable(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := d.CompactAll(ctx); err != nil {
			t.Fatal(err)
		}
		if err := d.FlushWAL(ctx); err != nil {
			t.Fatal(err)
		}
		st := d.Stats()
		sizes[c] = [2]int64{st.WALBytesWritten, st.SSTBytesWritten}
		// Reopen: the rows since the last flush come back from the WAL.
		d, err = Open(ctx, store, "db", opts)
		if err != nil {
			t.Fatal(err)
		}
		got := scanAll(t, d.Scan(ctx, nil, nil, ReadOptions{}))
		want := renderModel(model)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%v: scan after reopen differs from the model (%d rows, want %d)", c, len(got), len(want))
		}
		for k, v := range model {
			if g, ok := mustGet(t, ctx, d, k); !ok || g != v {
				t.Fatalf("%v: get %q = %q, %v", c, k, g, ok)
			}
		}
		if wantScan != nil && strings.Join(got, "\n") != strings.Join(wantScan, "\n") {
			t.Fatalf("%v: data differs between codecs", c)
		}
		wantScan = got
		checkStoredCodecs(t, store, codecOf(c))
	}
	for _, c := range allCompressions {
		t.Logf("%-7v WAL %7d bytes, SST %7d bytes", c, sizes[c][0], sizes[c][1])
		if c != CompressionNone && (sizes[c][0]*2 > sizes[CompressionNone][0] || sizes[c][1]*2 > sizes[CompressionNone][1]) {
			t.Fatalf("%v stores %v bytes, not under half of uncompressed %v", c, sizes[c], sizes[CompressionNone])
		}
	}
}

func renderModel(m map[string]string) []string {
	var out []string
	//lint:maprange collecting keys that are sorted next.
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// checkStoredCodecs asserts every data WAL object and SST data block in
// store is in the current format, and that codec (when not none) stored at
// least one of each.
func checkStoredCodecs(t *testing.T, store *objstore.Memory, codec byte) {
	t.Helper()
	ctx := context.Background()
	infos, err := store.List(ctx, "db/")
	if err != nil {
		t.Fatal(err)
	}
	walWith, blocksWith := 0, 0
	for _, o := range infos {
		obj, _ := store.Get(ctx, o.Key)
		key := strings.TrimPrefix(o.Key, "db/")
		switch {
		case strings.HasPrefix(key, "wal/") && len(obj.Data) > walHeaderBytes:
			if v := binary.BigEndian.Uint16(obj.Data[4:]); v != walFormatVersion {
				t.Fatalf("%s: WAL format %d", key, v)
			}
			if obj.Data[len(obj.Data)-1] == codec {
				walWith++
			}
		case strings.HasPrefix(key, "compacted/"):
			tr := newTableReader(objstore.Prefixed(store, "db"), 0, 0)
			m, err := tr.sstMeta(ctx, SSTInfo{Key: key, Size: int64(len(obj.Data))})
			if err != nil {
				t.Fatal(err)
			}
			if m.format != sstFormatVersion {
				t.Fatalf("%s: SST format %d", key, m.format)
			}
			for _, e := range m.index {
				if obj.Data[e.offset+e.length-5] == codec {
					blocksWith++
				}
			}
		}
	}
	if codec != codecNone && (walWith == 0 || blocksWith == 0) {
		t.Fatalf("codec %d: %d WAL objects and %d SST blocks use it", codec, walWith, blocksWith)
	}
}

// loadStore reads the objects under dir (as testdata keeps them) into a
// memory store under "db/".
func loadStore(t *testing.T, dir string) *objstore.Memory {
	t.Helper()
	store := objstore.NewMemory()
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		_, err = store.Put(context.Background(), "db/"+filepath.ToSlash(rel), data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// TestStoreBeforeCompressionStillRead opens a store written by the build
// before compression (testdata/store-before-compression: the corruption
// fixture as commit 762003b wrote it: WAL format 2 with a fence above the
// replay point, SST format 1 in L0 and a sorted run, manifest format 2):
// it reads back the same data, new writes are in the new formats, and a
// full compaction rewrites the old SSTs as compressed ones.
func TestStoreBeforeCompressionStillRead(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join("testdata", "store-before-compression")
	store := loadStore(t, filepath.Join(dir, "objects"))
	want, err := os.ReadFile(filepath.Join(dir, "scan.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// The fixture really is in the old formats.
	oldWAL, oldSST := 0, 0
	infos, _ := store.List(ctx, "db/")
	for _, o := range infos {
		obj, _ := store.Get(ctx, o.Key)
		switch key := strings.TrimPrefix(o.Key, "db/"); {
		case strings.HasPrefix(key, "wal/") && binary.BigEndian.Uint16(obj.Data[4:]) == walFormatRawRows:
			oldWAL++
		case strings.HasPrefix(key, "compacted/") && binary.BigEndian.Uint16(obj.Data[len(obj.Data)-10:]) == sstFormatRawBlocks:
			oldSST++
		}
	}
	if oldWAL < 3 || oldSST < 2 {
		t.Fatalf("fixture holds %d format-2 WAL objects and %d format-1 SSTs", oldWAL, oldSST)
	}
	if got := checkCorruptReadString(t, store.Clone()); got != string(want) {
		t.Fatalf("old store reads\n %q\nwant %q", got, want)
	}
	// Write on top, flush and compact everything: old and new formats mix
	// in one read, then the compaction rewrites them all.
	clock := newTestClock()
	clock.advance(time.Hour)
	d, err := Open(ctx, store, "db", testOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	var b Batch
	b.Put([]byte("t/999"), i64(999))
	b.Merge([]byte("v/g0/count"), i64(1))
	if _, err := d.Write(ctx, &b, WriteOptions{AwaitDurable: true}); err != nil {
		t.Fatal(err)
	}
	// The expected scan after the write: t/999 added, v/g0/count one up.
	values := map[string]int64{"t/999": 999}
	for _, f := range strings.Fields(string(want)) {
		k, v, _ := strings.Cut(f, "=")
		var n int64
		fmt.Sscan(v, &n)
		values[k] += n
	}
	values["v/g0/count"]++
	keys := make([]string, 0, len(values))
	//lint:maprange collecting keys that are sorted next.
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	wantAfter := ""
	for _, k := range keys {
		wantAfter += fmt.Sprintf("%s=%d ", k, values[k])
	}
	if err := d.FlushMemtable(ctx); err != nil {
		t.Fatal(err)
	}
	mixed := renderScan(t, d.Scan(ctx, nil, nil, ReadOptions{}))
	if _, err := d.CompactAll(ctx); err != nil {
		t.Fatal(err)
	}
	after := renderScan(t, d.Scan(ctx, nil, nil, ReadOptions{}))
	if mixed != after {
		t.Fatalf("compaction changed the data:\n %q\nwas %q", after, mixed)
	}
	if after != wantAfter {
		t.Fatalf("after writing on the old store:\n %q\nwant %q", after, wantAfter)
	}
	m := d.Manifest()
	for _, s := range m.allSSTs() {
		obj, err := store.Get(ctx, "db/"+s.Key)
		if err != nil {
			t.Fatal(err)
		}
		if v := binary.BigEndian.Uint16(obj.Data[len(obj.Data)-10:]); v != sstFormatVersion {
			t.Fatalf("%s: format %d after a full compaction", s.Key, v)
		}
	}
}

// checkCorruptReadString opens the database in store and renders a full scan.
func checkCorruptReadString(t *testing.T, store objstore.Store) string {
	t.Helper()
	clock := newTestClock()
	clock.advance(time.Hour)
	d, err := Open(context.Background(), store, "db", testOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	return renderScan(t, d.Scan(context.Background(), nil, nil, ReadOptions{}))
}

// TestCompressedObjectDamage: damage inside a compressed SST block or WAL
// object is refused with RS-5002 naming the object, even when the damage
// comes with a matching checksum (a wrong raw length, a truncated
// compressed stream); an unknown codec id under a good checksum is a
// newer build's object, RS-5001.
func TestCompressedObjectDamage(t *testing.T) {
	ctx := context.Background()
	for _, c := range []Compression{CompressionS2, CompressionSnappy, CompressionZstd, CompressionLZ4} {
		store := objstore.NewMemory()
		clock := newTestClock()
		opts := Options{Clock: clock.now, MemtableBytesMax: 1 << 20, BlockBytes: 4096, Compression: c}
		d, err := Open(ctx, store, "db", opts)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(3, 3))
		for i := 0; i < 400; i++ {
			var b Batch
			b.Put([]byte(fmt.Sprintf("row/%05d", i)), compressibleValue(rng, i))
			if _, err := d.Write(ctx, &b, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.FlushMemtable(ctx); err != nil {
			t.Fatal(err)
		}
		var b Batch
		for i := 0; i < 100; i++ {
			b.Put([]byte(fmt.Sprintf("wal/%05d", i)), compressibleValue(rng, i))
		}
		if _, err := d.Write(ctx, &b, WriteOptions{AwaitDurable: true}); err != nil {
			t.Fatal(err)
		}
		sst := "db/" + d.Manifest().L0[0].Key
		walObjects, _ := store.List(ctx, "db/wal/")
		wal := walObjects[len(walObjects)-1].Key
		if obj, _ := store.Get(ctx, wal); obj.Data[len(obj.Data)-1] != codecOf(c) {
			t.Fatalf("%v: newest WAL object %s is not compressed", c, wal)
		}

		// damage rewrites the first data block's compressed body of the SST
		// (or the WAL object's) with edit, then fixes the checksum.
		damage := func(key string, edit func(body []byte) []byte) *objstore.Memory {
			s := store.Clone()
			obj, _ := s.Get(ctx, key)
			data := append([]byte(nil), obj.Data...)
			if strings.HasPrefix(key, "db/wal/") {
				data = append(data[:walHeaderBytes:walHeaderBytes], edit(append([]byte(nil), data[walHeaderBytes:]...))...)
				binary.BigEndian.PutUint32(data[walChecksumOffset:], checksumAround(data, walChecksumOffset))
			} else {
				tr := newTableReader(objstore.Prefixed(store, "db"), 0, 0)
				m, err := tr.sstMeta(ctx, SSTInfo{Key: strings.TrimPrefix(key, "db/"), Size: int64(len(data))})
				if err != nil {
					t.Fatal(err)
				}
				e := m.index[0]
				block := data[e.offset : e.offset+e.length-4]
				if block[len(block)-1] != codecOf(c) {
					t.Fatalf("%v: block 0 of %s is not compressed", c, key)
				}
				edited := edit(append([]byte(nil), block...))
				if len(edited) != len(block) {
					t.Fatalf("block edits keep the length")
				}
				copy(block, edited)
				binary.BigEndian.PutUint32(data[e.offset+e.length-4:], checksum(block))
			}
			s.Put(ctx, key, data)
			return s
		}
		expect := func(what, key string, s *objstore.Memory, code *errcode.Code) {
			t.Helper()
			clock := newTestClock()
			clock.advance(time.Hour)
			d, err := Open(ctx, s, "db", opts)
			if err == nil {
				it := d.Scan(ctx, nil, nil, ReadOptions{})
				for it.Next() {
				}
				err = it.Err()
			}
			e, ok := errcode.As(err)
			if !ok || e.Code != code || !strings.Contains(err.Error(), strings.TrimPrefix(key, "db/")) {
				t.Fatalf("%v %s: got %v, want %s naming %s", c, what, err, code.ID, key)
			}
			if code == errcode.StorageObjectCorrupt && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%v %s: %v is not ErrCorrupt", c, what, err)
			}
		}
		rawLenPlusOne := func(body []byte) []byte {
			at := len(body) - compressTrailerBytes
			binary.BigEndian.PutUint32(body[at:], binary.BigEndian.Uint32(body[at:])+1)
			return body
		}
		// Keep the length for SST blocks: the stream loses its tail, the
		// freed bytes become zeros before the trailer.
		truncateStream := func(body []byte) []byte {
			at := len(body) - compressTrailerBytes
			cut := at / 3
			trailer := append([]byte(nil), body[at:]...)
			for i := at - cut; i < at; i++ {
				body[i] = 0
			}
			return append(body[:at], trailer...)
		}
		unknownCodec := func(body []byte) []byte { body[len(body)-1] = codecMax + 1; return body }
		for _, key := range []string{sst, wal} {
			// A flipped byte: the checksum catches it.
			s := store.Clone()
			obj, _ := s.Get(ctx, key)
			bad := append([]byte(nil), obj.Data...)
			bad[len(bad)/2] ^= 0x10
			s.Put(ctx, key, bad)
			expect("flipped byte", key, s, errcode.StorageObjectCorrupt)
			expect("raw length + 1 under a good checksum", key, damage(key, rawLenPlusOne), errcode.StorageObjectCorrupt)
			expect("truncated stream under a good checksum", key, damage(key, truncateStream), errcode.StorageObjectCorrupt)
			expect("unknown codec under a good checksum", key, damage(key, unknownCodec), errcode.StorageFormatVersionIncompatible)
		}
	}
}
