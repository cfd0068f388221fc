package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/slate"
	"github.com/rockstream/rockstream/slate/objstore"
	"github.com/rockstream/rockstream/slate/objstore/fsstore"
)

// writeTestDatabase leaves a database at path with one L0 SST (row k) and
// one WAL object to replay (row k2).
func writeTestDatabase(t *testing.T, store objstore.Store, path string) {
	t.Helper()
	ctx := context.Background()
	db, err := slate.Open(ctx, store, path, slate.Options{InstanceID: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Put(ctx, []byte("k"), []byte("v"), slate.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := db.FlushMemtable(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Put(ctx, []byte("k2"), []byte("v"), slate.WriteOptions{AwaitDurable: true}); err != nil {
		t.Fatal(err)
	}
}

func TestDebugSlateDescribes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := fsstore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	writeTestDatabase(t, store, "shards/7")
	cmd := newDebugCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"slate", "--storage", "file://" + dir, "--path", "shards/7"})
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"writer epoch        1", "L0 (1 SSTs", "rows=1", "to replay: 1 rows"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestDebugSlateVerify: verify passes a healthy store (every database in it
// when --path is empty) and fails naming a damaged object with RS-5002.
func TestDebugSlateVerify(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := fsstore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	writeTestDatabase(t, store, "control")
	writeTestDatabase(t, store, "shards/0")
	verify := func() (string, error) {
		cmd := newDebugCommand()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs([]string{"slate", "verify", "--storage", "file://" + dir})
		err := cmd.ExecuteContext(ctx)
		return out.String(), err
	}
	out, err := verify()
	if err != nil || !strings.Contains(out, "ok: 2 databases") {
		t.Fatalf("healthy store: %v\n%s", err, out)
	}
	wal, err := store.List(ctx, "shards/0/wal/")
	if err != nil || len(wal) == 0 {
		t.Fatalf("no WAL: %v", err)
	}
	last := wal[len(wal)-1].Key
	obj, err := store.Get(ctx, last)
	if err != nil {
		t.Fatal(err)
	}
	obj.Data[6] ^= 1 // the kind byte: data <-> fence
	if _, err := store.Put(ctx, last, obj.Data); err != nil {
		t.Fatal(err)
	}
	out, err = verify()
	if err == nil || !strings.Contains(err.Error(), "RS-5002") || !strings.Contains(out, "BAD "+last+" [NEEDED]") {
		t.Fatalf("damaged %s: %v\n%s", last, err, out)
	}
}
