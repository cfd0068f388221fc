package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/slate"
	"github.com/rockstream/rockstream/slate/objstore/fsstore"
)

func TestDebugSlateDescribes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := fsstore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	db, err := slate.Open(ctx, store, "shards/7", slate.Options{InstanceID: "test"})
	if err != nil {
		t.Fatal(err)
	}
	db.Put(ctx, []byte("k"), []byte("v"), slate.WriteOptions{})
	if err := db.FlushMemtable(ctx); err != nil {
		t.Fatal(err)
	}
	db.Put(ctx, []byte("k2"), []byte("v"), slate.WriteOptions{AwaitDurable: true})
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
