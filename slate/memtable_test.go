package slate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/rockstream/rockstream/slate/objstore"
	"pgregory.net/rapid"
)

// TestMemtableAddSortedMatchesAdd: inserting a sorted batch with the finger
// search builds exactly the skiplist (every level's links) that adding its
// rows one by one builds, on top of any earlier contents.
func TestMemtableAddSortedMatchesAdd(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		key := rapid.SliceOfN(rapid.ByteRange('a', 'e'), 1, 3)
		a, b := newMemtable(), newMemtable()
		seq := uint64(0)
		for _, batch := range rapid.SliceOfN(rapid.SliceOfN(key, 0, 12), 1, 6).Draw(t, "batches") {
			seq++
			slices.SortFunc(batch, bytes.Compare)
			batch = slices.CompactFunc(batch, bytes.Equal)
			rows := make([]row, len(batch))
			for i, k := range batch {
				rows[i] = row{key: k, seq: seq, kind: KindValue, value: []byte{byte(seq)}}
			}
			for _, r := range rows {
				a.add(r)
			}
			b.addSorted(rows)
		}
		if a.levels != b.levels || a.rows != b.rows || a.bytes != b.bytes || a.minSeq != b.minSeq || a.maxSeq != b.maxSeq {
			t.Fatalf("counters differ: %+v vs %+v", a, b)
		}
		for l := 0; l < memtableLevelsMax; l++ {
			x, y := a.next(headRef, l), b.next(headRef, l)
			for x != 0 && y != 0 {
				rx, ry := a.row(x), b.row(y)
				if !bytes.Equal(rx.key, ry.key) || rx.seq != ry.seq || a.node(x)[nodeHeightOff] != b.node(y)[nodeHeightOff] {
					t.Fatalf("level %d: %q@%d vs %q@%d", l, rx.key, rx.seq, ry.key, ry.seq)
				}
				x, y = a.next(x, l), b.next(y, l)
			}
			if x != 0 || y != 0 {
				t.Fatalf("level %d lengths differ", l)
			}
		}
	})
}

// concatOperator joins base and operands with '|' (enough to tell which
// versions a read resolved, in which order).
func concatOperator(_ []byte, base []byte, hasBase bool, operands [][]byte) ([]byte, error) {
	out := []byte{}
	if hasBase {
		out = append(out, base...)
	} else {
		out = append(out, '_')
	}
	for _, o := range operands {
		out = append(out, '|')
		out = append(out, o...)
	}
	return out, nil
}

// memtableValueSizes are the value lengths the model draws: empty, tiny,
// around the large-node threshold (own chunk or not) and over a whole
// chunk.
//
//lint:immutable a constant table of test sizes.
var memtableValueSizes = []int{0, 1, 5, 40, 3000, arenaLargeBytes - 200, arenaLargeBytes + 1, arenaChunkBytesMax + 3}

// memtableValue draws a value: nil, or a patterned slice of a drawn size.
func memtableValue(t *rapid.T, label string) []byte {
	if rapid.IntRange(0, 9).Draw(t, label+"-nil") == 0 {
		return nil
	}
	size := memtableValueSizes[0]
	if i := rapid.IntRange(0, 30).Draw(t, label+"-size"); i < len(memtableValueSizes) {
		size = memtableValueSizes[i]
	} else {
		size = i % 7
	}
	seed := byte(rapid.IntRange(0, 255).Draw(t, label+"-seed"))
	v := make([]byte, size)
	for i := range v {
		v[i] = seed + byte(i*7)
	}
	return v
}

func sameRow(a, b row) bool {
	return bytes.Equal(a.key, b.key) && a.seq == b.seq && a.kind == b.kind &&
		bytes.Equal(a.value, b.value) && (a.value == nil) == (b.value == nil)
}

func cloneRow(r row) row {
	c := row{key: bytes.Clone(r.key), seq: r.seq, kind: r.kind}
	if r.value != nil {
		c.value = append([]byte{}, r.value...)
	}
	if c.key == nil {
		c.key = []byte{}
	}
	return c
}

// TestMemtableModel checks the arena skiplist against a sorted slice of
// rows: iteration, range iteration from any start (seek), findGE, point
// reads at any seq (tombstones and merge operands resolved), the size and
// seq accounting, that returned keys and values never change while later
// rows go in, and that fits never lets the arena outgrow its chunk limit
// (a memtable that says no is rotated: a new one takes the rows).
func TestMemtableModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		chunksMax := rapid.SampledFrom([]int{arenaChunksMax, 12, 16}).Draw(t, "chunksMax")
		m := newMemtableChunks(chunksMax)
		var ref []row
		var held, heldCopies []row
		keyGen := rapid.SliceOfN(rapid.SampledFrom([]byte{0, 'a', 'b', 0xff}), 0, 3)
		kindGen := rapid.SampledFrom([]Kind{KindValue, KindTombstone, KindMerge})
		seq := uint64(0)
		for step := range rapid.IntRange(1, 10).Draw(t, "steps") {
			var rows []row
			switch rapid.IntRange(0, 4).Draw(t, fmt.Sprintf("shape%d", step)) {
			case 0:
				// A bulk batch of small rows of every size: many chunk
				// boundaries, each met at a different offset.
				seq++
				n := rapid.IntRange(1, 400).Draw(t, fmt.Sprintf("bulk%d", step))
				for i := range n {
					k := fmt.Appendf(nil, "b%04d", i)
					rows = append(rows, row{key: k, seq: seq, kind: KindValue, value: bytes.Repeat([]byte{byte(i)}, (i*13+int(seq))%61)})
				}
			case 1, 2:
				// One resolved batch: distinct keys, one new seq.
				seq++
				keys := rapid.SliceOfN(keyGen, 0, 8).Draw(t, fmt.Sprintf("keys%d", step))
				slices.SortFunc(keys, bytes.Compare)
				keys = slices.CompactFunc(keys, bytes.Equal)
				for i, k := range keys {
					kind := kindGen.Draw(t, fmt.Sprintf("kind%d.%d", step, i))
					var v []byte
					if kind != KindTombstone {
						v = memtableValue(t, fmt.Sprintf("v%d.%d", step, i))
					}
					rows = append(rows, row{key: k, seq: seq, kind: kind, value: v})
				}
			default:
				// Single rows at any (key, seq) not present yet: older
				// versions arriving late, as WAL replay may add them.
				for i := range rapid.IntRange(1, 4).Draw(t, fmt.Sprintf("singles%d", step)) {
					r := row{key: keyGen.Draw(t, fmt.Sprintf("skey%d.%d", step, i)),
						seq:  uint64(rapid.IntRange(1, int(seq)+2).Draw(t, fmt.Sprintf("sseq%d.%d", step, i))),
						kind: kindGen.Draw(t, fmt.Sprintf("skind%d.%d", step, i))}
					if r.kind != KindTombstone {
						r.value = memtableValue(t, fmt.Sprintf("sv%d.%d", step, i))
					}
					dup := slices.ContainsFunc(ref, func(x row) bool { return bytes.Equal(x.key, r.key) && x.seq == r.seq }) ||
						slices.ContainsFunc(rows, func(x row) bool { return bytes.Equal(x.key, r.key) && x.seq == r.seq })
					if !dup {
						rows = append(rows, r)
					}
				}
			}
			if !m.fits(rows) {
				// fits is exact: adding anyway (the limit is soft below
				// arenaChunksMax) must pass the limit.
				probe := *m
				probe.chunks = make([][]byte, len(m.chunks))
				for i, c := range m.chunks {
					probe.chunks[i] = bytes.Clone(c)
				}
				for _, r := range rows {
					probe.add(r)
				}
				if len(probe.chunks) <= chunksMax {
					t.Fatalf("fits said no, but adding makes %d chunks (limit %d)", len(probe.chunks), chunksMax)
				}
				if m.rows == 0 {
					t.Fatalf("%d rows do not fit an empty memtable of %d chunks", len(rows), chunksMax)
				}
				m, ref = newMemtableChunks(chunksMax), nil // rotate
			}
			if rapid.Bool().Draw(t, fmt.Sprintf("one-by-one%d", step)) || !slices.IsSortedFunc(rows, func(a, b row) int { return compareRows(a.key, a.seq, b.key, b.seq) }) {
				for _, r := range rows {
					m.add(r)
				}
			} else {
				m.addSorted(rows)
			}
			if len(m.chunks) > chunksMax {
				t.Fatalf("arena has %d chunks, limit %d", len(m.chunks), chunksMax)
			}
			for _, r := range rows {
				ref = append(ref, cloneRow(r))
			}
			slices.SortFunc(ref, func(a, b row) int { return compareRows(a.key, a.seq, b.key, b.seq) })
			seq = max(seq, m.maxSeq)
			checkMemtable(t, m, ref, seq)
			// Keep some returned rows to check they never change.
			it := m.iter([]byte{}, nil)
			for r, ok, _ := it.next(); ok; r, ok, _ = it.next() {
				if len(held) < 64 {
					held, heldCopies = append(held, r), append(heldCopies, cloneRow(r))
				}
			}
			for i := range held {
				if !sameRow(held[i], heldCopies[i]) {
					t.Fatalf("a returned row changed: %q@%d", heldCopies[i].key, heldCopies[i].seq)
				}
			}
		}
	})
}

// checkMemtable compares m with the sorted reference rows.
func checkMemtable(t *rapid.T, m *memtable, ref []row, seq uint64) {
	var got []row
	it := m.iter([]byte{}, nil)
	for r, ok, _ := it.next(); ok; r, ok, _ = it.next() {
		got = append(got, r)
	}
	if len(got) != len(ref) {
		t.Fatalf("iteration: %d rows, want %d", len(got), len(ref))
	}
	for i := range got {
		if !sameRow(got[i], ref[i]) {
			t.Fatalf("row %d: %q@%d %v (%d bytes), want %q@%d %v (%d bytes)", i, got[i].key, got[i].seq, got[i].kind, len(got[i].value), ref[i].key, ref[i].seq, ref[i].kind, len(ref[i].value))
		}
	}
	var bytesWant int64
	minSeq, maxSeq := uint64(0), uint64(0)
	for i, r := range ref {
		bytesWant += int64(r.encodedSize())
		if i == 0 || r.seq < minSeq {
			minSeq = r.seq
		}
		maxSeq = max(maxSeq, r.seq)
	}
	if m.rows != len(ref) || m.bytes != bytesWant || m.minSeq != minSeq || m.maxSeq != maxSeq {
		t.Fatalf("accounting: rows %d bytes %d seqs [%d,%d], want %d %d [%d,%d]", m.rows, m.bytes, m.minSeq, m.maxSeq, len(ref), bytesWant, minSeq, maxSeq)
	}
	keyGen := rapid.SliceOfN(rapid.SampledFrom([]byte{0, 'a', 'b', 'c', 0xff}), 0, 3)
	// Range iteration from any start (a seek) to any end.
	start := keyGen.Draw(t, "start")
	var end []byte
	if rapid.Bool().Draw(t, "bounded") {
		end = keyGen.Draw(t, "end")
	}
	var want []row
	for _, r := range ref {
		if bytes.Compare(r.key, start) >= 0 && (end == nil || bytes.Compare(r.key, end) < 0) {
			want = append(want, r)
		}
	}
	it = m.iter(start, end)
	for i := 0; ; i++ {
		r, ok, _ := it.next()
		if !ok {
			if i != len(want) {
				t.Fatalf("range [%q, %q): %d rows, want %d", start, end, i, len(want))
			}
			break
		}
		if i >= len(want) || !sameRow(r, want[i]) {
			t.Fatalf("range [%q, %q): row %d is %q@%d", start, end, i, r.key, r.seq)
		}
	}
	// findGE at any (key, seq).
	key := keyGen.Draw(t, "findKey")
	at := uint64(rapid.IntRange(0, int(seq)+1).Draw(t, "findSeq"))
	i, _ := slices.BinarySearchFunc(ref, row{key: key, seq: at}, func(a, b row) int { return compareRows(a.key, a.seq, b.key, b.seq) })
	n := m.findGE(key, at, nil)
	if i == len(ref) {
		if n != 0 {
			t.Fatalf("findGE(%q@%d) = %q@%d, want none", key, at, m.row(n).key, m.row(n).seq)
		}
	} else if n == 0 || !sameRow(m.row(n), ref[i]) {
		t.Fatalf("findGE(%q@%d): want %q@%d", key, at, ref[i].key, ref[i].seq)
	}
	// A point read at that seq resolves the same versions the reference
	// holds.
	v := view{memtables: []*memtable{m}, op: concatOperator, readSeq: at}
	gotV, gotOK, err := v.get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	var versions []row
	for _, r := range ref {
		if bytes.Equal(r.key, key) && r.seq <= at {
			versions = append(versions, r)
		}
	}
	wantV, wantOK, err := resolveVersions(concatOperator, key, versions)
	if err != nil {
		t.Fatal(err)
	}
	if gotOK != wantOK || !bytes.Equal(gotV, wantV) {
		t.Fatalf("get(%q@%d) = %d bytes %v, want %d bytes %v", key, at, len(gotV), gotOK, len(wantV), wantOK)
	}
}

// TestMemtableArenaRotation: with a tiny arena limit, big batches rotate
// the memtable (Write), WAL replay rotates between WAL objects (Open) and
// a Reader starts further memtables; no write is lost on any path.
func TestMemtableArenaRotation(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMemory()
	clock := newTestClock()
	opts := testOptions(clock)
	opts.MemtableBytesMax = 1 << 30 // only the arena limit rotates
	opts.UnflushedBytesMax = 2 << 30
	opts.memtableChunksMax = 12
	d, err := Open(ctx, store, "db", opts)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	value := func(i, size int) []byte {
		v := make([]byte, size)
		for j := range v {
			v[j] = byte(i + j)
		}
		return v
	}
	for i := range 40 {
		var b Batch
		for j := range 3 {
			k := fmt.Sprintf("k%02d.%d", i, j) // no overwrites: a lost row shows
			v := value(i, []int{10, 200 << 10, 300 << 10}[(i+j)%3])
			b.Put([]byte(k), v)
			want[k] = v
		}
		if _, err := d.Write(ctx, &b, WriteOptions{AwaitDurable: i%2 == 0}); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.FlushWAL(ctx); err != nil {
		t.Fatal(err)
	}
	if len(d.immutables) < 2 {
		t.Fatalf("%d immutable memtables: the arena limit never rotated", len(d.immutables))
	}
	check := func(name string, get func(k string) ([]byte, bool, error)) {
		t.Helper()
		//lint:maprange each key is checked on its own; order cannot matter.
		for k, v := range want {
			got, ok, err := get(k)
			if err != nil || !ok || !bytes.Equal(got, v) {
				t.Fatalf("%s: get %s = %d bytes %v %v, want %d bytes", name, k, len(got), ok, err, len(v))
			}
		}
	}
	check("writer", func(k string) ([]byte, bool, error) { return d.Get(ctx, []byte(k), ReadOptions{}) })
	// Reopen without flushing memtables: everything comes back from the
	// WAL, rotated between WAL objects. L0 takes one flush only, so the
	// reopened writer can flush just its oldest memtable (below).
	opts.L0CompactionTrigger, opts.L0MaxSSTs = 1, 1
	d2, err := Open(ctx, store, "db", opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(d2.immutables) < 2 {
		t.Fatalf("replay: %d immutable memtables, want rotation", len(d2.immutables))
	}
	check("replayed", func(k string) ([]byte, bool, error) { return d2.Get(ctx, []byte(k), ReadOptions{}) })
	// A reader replays the same WAL tail into several memtables.
	r, err := OpenReader(ctx, store, "db", clock.now(), ReaderOptions{memtableChunksMax: 12})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.memtables) < 2 {
		t.Fatalf("reader: %d memtables, want rotation", len(r.memtables))
	}
	check("reader", func(k string) ([]byte, bool, error) { return r.Get(ctx, []byte(k)) })
	// Flush the oldest memtable only (the next one meets L0's limit) and
	// crash: the manifest's WAL replay point must not skip the rows of the
	// memtables still in memory.
	if err := d2.FlushMemtable(ctx); !errors.Is(err, ErrBackpressure) {
		t.Fatalf("flush with L0 full: %v, want backpressure after one memtable", err)
	}
	check("flushed", func(k string) ([]byte, bool, error) { return d2.Get(ctx, []byte(k), ReadOptions{}) })
	d3, err := Open(ctx, store, "db", opts)
	if err != nil {
		t.Fatal(err)
	}
	check("reopened after a partial flush", func(k string) ([]byte, bool, error) { return d3.Get(ctx, []byte(k), ReadOptions{}) })
}

// TestMemtableFillsMaxChunks writes enough small rows to fill several
// chunks of the largest size (the offsets a nodeRef must address) and
// reads every row back, by iteration and by findGE.
func TestMemtableFillsMaxChunks(t *testing.T) {
	m := newMemtable()
	const batches, perBatch = 60, 1000
	value := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, i%41) }
	for b := range batches {
		rows := make([]row, perBatch)
		for j := range rows {
			i := j*batches + b // interleave batches: every insert lands mid-list
			rows[j] = row{key: fmt.Appendf(nil, "%08d", i), seq: uint64(b + 1), kind: KindValue, value: value(i)}
		}
		m.addSorted(rows)
	}
	if full := len(m.chunks[m.cur]); full != arenaChunkBytesMax || m.arenaBytes < 3*arenaChunkBytesMax {
		t.Fatalf("arena: current chunk %d bytes, %d bytes in all; want several max-size chunks", full, m.arenaBytes)
	}
	it := m.iter([]byte{}, nil)
	i := 0
	for r, ok, _ := it.next(); ok; r, ok, _ = it.next() {
		if string(r.key) != fmt.Sprintf("%08d", i) || !bytes.Equal(r.value, value(i)) || r.seq != uint64(i%batches+1) {
			t.Fatalf("row %d: %q@%d %d bytes", i, r.key, r.seq, len(r.value))
		}
		i++
	}
	if i != batches*perBatch {
		t.Fatalf("iterated %d rows, want %d", i, batches*perBatch)
	}
	for i := 0; i < batches*perBatch; i += 997 {
		n := m.findGE(fmt.Appendf(nil, "%08d", i), ^uint64(0), nil)
		if n == 0 || !bytes.Equal(m.row(n).value, value(i)) {
			t.Fatalf("findGE %08d failed", i)
		}
	}
}

// TestMemtableFitsIsTight: fits says yes exactly as long as the arena
// stays within its chunk limit (each of these rows takes a chunk of its
// own), so rotation happens neither late nor early.
func TestMemtableFitsIsTight(t *testing.T) {
	for _, limit := range []int{1, 2, 5, 12} {
		m := newMemtableChunks(limit)
		for i := 0; ; i++ {
			r := row{key: fmt.Appendf(nil, "%03d", i), seq: 1, kind: KindValue, value: make([]byte, arenaLargeBytes)}
			if !m.fits([]row{r}) {
				break
			}
			m.add(r)
		}
		if len(m.chunks) != limit {
			t.Fatalf("limit %d: stopped at %d chunks", limit, len(m.chunks))
		}
	}
}

// TestMemtableFindPointMatchesFindGE: a point lookup through the hash
// index (memtable.findPoint) finds the node a skiplist search does, for
// keys present in several versions, absent keys and every read seq, also
// when keys share a hash (weak hashes make some or all of them collide),
// across the index's growth.
func TestMemtableFindPointMatchesFindGE(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		key := rapid.SliceOfN(rapid.ByteRange('a', 'e'), 1, 3)
		m := newMemtable()
		switch rapid.IntRange(0, 2).Draw(t, "hash") {
		case 1: // keys with one first byte share a tag
			m.pointHash = func(k []byte) uint64 { return uint64(k[0]) << 32 }
		case 2: // every key shares one tag
			m.pointHash = func([]byte) uint64 { return 0 }
		}
		seq := uint64(0)
		for _, batch := range rapid.SliceOfN(rapid.SliceOfN(key, 0, 40), 1, 8).Draw(t, "batches") {
			seq += uint64(rapid.IntRange(1, 3).Draw(t, "seq step"))
			slices.SortFunc(batch, bytes.Compare)
			batch = slices.CompactFunc(batch, bytes.Equal)
			rows := make([]row, len(batch))
			for i, k := range batch {
				rows[i] = row{key: k, seq: seq, kind: KindValue, value: []byte{byte(seq)}}
			}
			m.addSorted(rows)
			// Lookups between batches meet rows not yet indexed: some
			// are answered by a search of the list, then the index is
			// brought up to date (findPointHashed).
			checkFindPoint(t, m, rapid.SliceOfN(key, 0, 20).Draw(t, "lookups"), seq)
		}
		checkFindPoint(t, m, rapid.SliceOfN(key, 1, 20).Draw(t, "lookups"), seq)
	})
}

// checkFindPoint checks findPoint of keys at every seq up to seq+1 against
// findGE.
func checkFindPoint(t *rapid.T, m *memtable, keys [][]byte, seq uint64) {
	for _, k := range keys {
		for s := uint64(0); s <= seq+1; s++ {
			want := m.findGE(k, s, nil)
			if want != 0 && !bytes.Equal(m.row(want).key, k) {
				want = 0
			}
			if got := m.findPoint(k, s); got != want {
				t.Fatalf("findPoint(%q, %d) = %d, want %d", k, s, got, want)
			}
		}
	}
}

// TestMemtablePointIndexOnDemand: rows are indexed for point lookups only
// once lookups come for them — a few lookups among many new rows search
// the list; enough of them index every row, after which lookups use the
// index. Either way each answer is the key's newest version at the seq.
func TestMemtablePointIndexOnDemand(t *testing.T) {
	m := newMemtable()
	const rows = 1000
	for seq := uint64(1); seq <= 2; seq++ {
		batch := make([]row, rows)
		for i := range batch {
			batch[i] = row{key: fmt.Appendf(nil, "k%04d", i), seq: seq, kind: KindValue, value: []byte{byte(seq)}}
		}
		m.addSorted(batch)
	}
	find := func(i int, seq uint64) {
		t.Helper()
		n := m.findPoint(fmt.Appendf(nil, "k%04d", i), seq)
		if n == 0 || m.row(n).seq != seq || !bytes.Equal(m.row(n).key, fmt.Appendf(nil, "k%04d", i)) {
			t.Fatalf("findPoint(k%04d, %d) = node %d", i, seq, n)
		}
	}
	find(7, 2)
	find(7, 1)
	if m.points.used != 0 || len(m.unindexed) != 2*rows {
		t.Fatalf("after 2 lookups among %d new rows: %d keys indexed, %d rows pending; want none indexed", 2*rows, m.points.used, len(m.unindexed))
	}
	for i := range 2 * rows / listLookupNodes {
		find(i%rows, 2)
	}
	if m.points.used != rows || len(m.unindexed) != 0 {
		t.Fatalf("after %d lookups: %d keys indexed, %d rows pending; want %d and 0", 2*rows/listLookupNodes, m.points.used, len(m.unindexed), rows)
	}
	find(999, 1)
	if m.findPoint([]byte("k"), 2) != 0 || m.findPoint([]byte("k1000"), 2) != 0 || m.findPoint([]byte("k0001"), 0) != 0 {
		t.Fatal("findPoint found an absent key or version")
	}
}
