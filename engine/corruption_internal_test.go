package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/actors/storage"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/slate"
	"github.com/rockstream/rockstream/slate/objstore"
)

// engineCorruptionTrialsPerType bounds the engine-level campaign (a reopen
// hydrates the catalog and every view, so a trial costs milliseconds, not
// microseconds as in slate's own campaign, which samples 2,000 per type).
// RS_CORRUPTION_FULL=1 damages every byte of every target instead.
const engineCorruptionTrialsPerType = 400

// engineCorruptionEdgeBytes: the first and last bytes of every target are
// always tried (headers, footers, checksums, format and kind fields).
const engineCorruptionEdgeBytes = 32

// TestCorruptionNeverChangesViews damages, one byte at a time, the stored
// objects a restart of the engine reads — the shard's and the control
// database's WAL objects above their replay points, their SSTs and both
// newest manifests — of a store holding a table, two aggregate views over it
// (one grouped, one single-row: the shape in which a silently lost WAL
// commit showed as two rows) and a view created after the last flush. Every
// restart must either refuse to open with RS-5002 naming the object, or
// answer the table and every view exactly as before.
func TestCorruptionNeverChangesViews(t *testing.T) {
	ctx := context.Background()
	seed := uint64(1)
	if s := os.Getenv("RS_CORRUPTION_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seed = n
	}
	full := os.Getenv("RS_CORRUPTION_FULL") != ""
	t.Logf("SEED=%d (reproduce: RS_CORRUPTION_SEED=%d go test ./engine -run %s)", seed, seed, t.Name())
	rng := rand.New(rand.NewPCG(seed, 0xe9))
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	open := func(store objstore.Store) (*Engine, error) {
		// NB: no background storage work during a trial (an hour between
		// ticks): the reopen's own replay and reads are what is tested.
		return Open(ctx, Config{Store: store, Logger: logger, StorageTickInterval: time.Hour,
			Storage: storage.Options{MemtableBytesMax: 8 << 10}})
	}
	queries := []string{
		`SELECT * FROM t`,
		`SELECT * FROM agg`,
		`SELECT * FROM one`,
		`SELECT * FROM hi`,
	}
	read := func(e *Engine) (string, error) {
		var out []string
		for _, q := range queries {
			rows, err := execSQL(ctx, e, q)
			if err != nil {
				return "", err
			}
			sorted := strings.Split(rows, "; ")
			slices.Sort(sorted)
			out = append(out, q+": "+strings.Join(sorted, "; "))
		}
		return strings.Join(out, "\n"), nil
	}
	must := func(e *Engine, sql string) {
		t.Helper()
		if _, err := execSQL(ctx, e, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}

	// The store: SSTs from a first run (closed, then flushed), then
	// a WAL tail of acknowledged commits from a second run that is "killed"
	// (the store is copied while it runs, with no background work).
	base := objstore.NewMemory()
	e, err := Open(ctx, Config{Store: base, Logger: logger, StorageTickInterval: 10 * time.Millisecond,
		Storage: storage.Options{MemtableBytesMax: 8 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	must(e, `CREATE TABLE t (id int PRIMARY KEY, g int, v bigint)`)
	must(e, `CREATE MATERIALIZED VIEW agg AS SELECT g, count(*) AS n, sum(v) AS s FROM t GROUP BY g`)
	must(e, `CREATE MATERIALIZED VIEW one AS SELECT count(*) AS n, sum(v) AS s FROM t`)
	for i := 0; i < 40; i++ {
		must(e, fmt.Sprintf(`INSERT INTO t VALUES (%d, %d, %d)`, i, i%4, i*10))
	}
	must(e, `UPDATE t SET v = v + 1 WHERE id % 3 = 0`)
	must(e, `DELETE FROM t WHERE id % 7 = 0`)
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// NB: whether a tick flushed the memtables before Close is timing;
	// flush them here so both databases hold SSTs on every run.
	for _, path := range []string{"control", "shards/0"} {
		db, err := storage.Open(ctx, base, path, storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.DB().FlushMemtable(ctx); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	e, err = open(base)
	if err != nil {
		t.Fatal(err)
	}
	// A view created in the WAL tail: the control DB's tail holds DDL.
	must(e, `CREATE MATERIALIZED VIEW hi AS SELECT g, max(v) AS m FROM t GROUP BY g`)
	for i := 0; i < 4; i++ {
		must(e, fmt.Sprintf(`INSERT INTO t VALUES (%d, %d, %d)`, 100+i, i%4, i))
		must(e, fmt.Sprintf(`DELETE FROM t WHERE id = %d`, 1+i*5))
	}
	want, err := read(e)
	if err != nil {
		t.Fatal(err)
	}
	killed := base.Clone()
	e.Close(ctx)

	// A clean restart of the killed store answers the same.
	e, err = open(killed.Clone())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := read(e); err != nil || got != want {
		t.Fatalf("undamaged restart: %v\n got %s\nwant %s", err, got, want)
	}
	e.Close(ctx)

	targets := engineCorruptionTargets(t, killed)
	for _, kind := range []string{"wal", "sst", "manifest"} {
		// Every header and footer byte with the smallest change (mask 1:
		// what turned a WAL object's kind from data into fence), then a
		// seeded sample of every byte with random masks.
		var edges, trials []corruptionSite
		for _, key := range targets[kind] {
			obj, _ := killed.Get(ctx, key)
			for pos := range obj.Data {
				if pos < engineCorruptionEdgeBytes || pos >= len(obj.Data)-engineCorruptionEdgeBytes {
					edges = append(edges, corruptionSite{key, pos, 0x01})
				}
				trials = append(trials, corruptionSite{key, pos, byte(1 + rng.IntN(255))})
			}
		}
		if !full && len(trials) > engineCorruptionTrialsPerType {
			rng.Shuffle(len(trials), func(i, j int) { trials[i], trials[j] = trials[j], trials[i] })
			trials = trials[:engineCorruptionTrialsPerType]
		}
		trials = append(edges, trials...)
		refused := 0
		for _, tr := range trials {
			store := killed.Clone()
			obj, _ := store.Get(ctx, tr.key)
			obj.Data[tr.pos] ^= tr.mask
			store.Put(ctx, tr.key, obj.Data)
			what := fmt.Sprintf("%s byte %d ^= %#02x", tr.key, tr.pos, tr.mask)
			openCtx, cancel := context.WithTimeout(ctx, time.Minute)
			e, err := Open(openCtx, Config{Store: store, Logger: logger, StorageTickInterval: time.Hour,
				Storage: storage.Options{MemtableBytesMax: 8 << 10}})
			cancel()
			var got string
			if err == nil {
				got, err = read(e)
				e.Close(ctx)
			}
			if err != nil {
				name := tr.key[strings.LastIndex(tr.key, "/")+1:]
				if ce, ok := errcode.As(err); !ok || ce.Code != errcode.StorageObjectCorrupt || !errors.Is(err, slate.ErrCorrupt) || !strings.Contains(err.Error(), name) {
					t.Fatalf("%s: not RS-5002 naming the object: %v", what, err)
				}
				refused++
				continue
			}
			if got != want {
				t.Fatalf("%s: WRONG ANSWERS after corruption:\n got %s\nwant %s", what, got, want)
			}
		}
		t.Logf("%s: %d objects, %d trials, %d refused (RS-5002), %d answered as before", kind, len(targets[kind]), len(trials), refused, len(trials)-refused)
		if refused == 0 {
			t.Fatalf("%s: no trial was refused: the campaign proves nothing", kind)
		}
	}
}

// corruptionSite is one damaged byte: data[pos] ^= mask.
type corruptionSite struct {
	key  string
	pos  int
	mask byte
}

// engineCorruptionTargets lists what a restart reads, per object type, in
// the control database and the shard.
func engineCorruptionTargets(t *testing.T, store *objstore.Memory) map[string][]string {
	t.Helper()
	ctx := context.Background()
	targets := map[string][]string{}
	for _, db := range []string{"control", "shards/0"} {
		var out strings.Builder
		if err := slate.Describe(ctx, store, db, &out); err != nil {
			t.Fatal(err)
		}
		manifests, err := store.List(ctx, db+"/manifest/")
		if err != nil || len(manifests) == 0 {
			t.Fatalf("%s: no manifests: %v", db, err)
		}
		targets["manifest"] = append(targets["manifest"], manifests[len(manifests)-1].Key)
		for _, line := range strings.Split(out.String(), "\n") {
			fields := strings.Fields(line)
			switch {
			case len(fields) > 1 && strings.HasPrefix(fields[0], "compacted/"):
				targets["sst"] = append(targets["sst"], db+"/"+fields[0])
			case len(fields) > 1 && strings.HasPrefix(fields[0], "wal/") && strings.HasSuffix(fields[0], ".sst:") && fields[1] != "fence":
				targets["wal"] = append(targets["wal"], db+"/"+strings.TrimSuffix(fields[0], ":"))
			}
		}
	}
	if len(targets["wal"]) < 4 || len(targets["sst"]) < 2 {
		t.Fatalf("store too small: %v", targets)
	}
	return targets
}
