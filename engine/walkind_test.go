package engine_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/engine"
	"github.com/rockstream/rockstream/slate/objstore/fsstore"
)

// TestDamagedWALKindRefusesStart is the reproducer from the field: with the
// server stopped, the kind byte (offset 6) of the newest WAL object was
// changed from 0 (data) to 1 (fence). The server started cleanly, one
// acknowledged commit was gone, and a single-row aggregate view returned
// two rows. Now the start is refused with RS-5002 naming the object, and
// once the byte is restored the server answers as before.
func TestDamagedWALKindRefusesStart(t *testing.T) {
	dir := t.TempDir()
	opts := engine.ServerOptions{
		Storage: dir, Listen: "127.0.0.1:0", HTTP: "",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Out: io.Discard,
	}
	srv, err := engine.Start(opts, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	rs := connect(t, srv.URL)
	exec(t, rs, "CREATE TABLE w (id int PRIMARY KEY, v int)")
	exec(t, rs, "CREATE MATERIALIZED VIEW one AS SELECT count(*) AS n, sum(v) AS s FROM w")
	for _, sql := range []string{"INSERT INTO w VALUES (1, 10)", "INSERT INTO w VALUES (2, 20)", "UPDATE w SET v = 25 WHERE id = 2"} {
		exec(t, rs, sql)
	}
	want := strings.Join(rowsText(t, rs, "SELECT * FROM one"), "\n")
	if want != "2|35" {
		t.Fatalf("view before the stop: %q", want)
	}
	rs.Close(context.Background())
	if err := srv.Stop(time.Minute); err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	store, err := fsstore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	wal, err := store.List(ctx, "shards/0/wal/")
	if err != nil || len(wal) == 0 {
		t.Fatalf("no shard WAL: %v", err)
	}
	var key string
	var orig []byte
	for i := len(wal) - 1; i >= 0 && key == ""; i-- {
		obj, err := store.Get(ctx, wal[i].Key)
		if err != nil {
			t.Fatal(err)
		}
		if len(obj.Data) > 27 && obj.Data[6] == 0 { // a data object, newest first
			key, orig = wal[i].Key, obj.Data
		}
	}
	if key == "" {
		t.Fatal("no data WAL object")
	}
	bad := append([]byte(nil), orig...)
	bad[6] = 1
	if _, err := store.Put(ctx, key, bad); err != nil {
		t.Fatal(err)
	}
	srv, err = engine.Start(opts, time.Minute)
	if err == nil {
		rs := connect(t, srv.URL)
		got := strings.Join(rowsText(t, rs, "SELECT * FROM one"), "\n")
		rs.Close(ctx)
		srv.Stop(time.Minute)
		t.Fatalf("the server started over a damaged WAL object %s; the view answers %q (want %q or a refusal)", key, got, want)
	}
	name := key[strings.LastIndex(key, "/")+1:]
	if !strings.Contains(err.Error(), "RS-5002") || !strings.Contains(err.Error(), name) {
		t.Fatalf("start over a damaged %s: %v, want RS-5002 naming it", key, err)
	}

	if _, err := store.Put(ctx, key, orig); err != nil {
		t.Fatal(err)
	}
	srv, err = engine.Start(opts, time.Minute)
	if err != nil {
		t.Fatalf("start after restoring %s: %v", key, err)
	}
	defer srv.Stop(time.Minute)
	rs = connect(t, srv.URL)
	if got := strings.Join(rowsText(t, rs, "SELECT * FROM one"), "\n"); got != want {
		t.Fatalf("view after restoring %s: %q, want %q", key, got, want)
	}
}
