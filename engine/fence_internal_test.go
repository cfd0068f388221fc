package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/slate/objstore"
)

// TestFenceIsTerminal: when a newer writer opens the same store (an
// operator's takeover), the older server stops committing for good and says
// so on /readyz, instead of reopening and fencing the newer one back (two
// servers used to take turns failing ~40% of each other's commits).
func TestFenceIsTerminal(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMemory()
	open := func() *Engine { return openQuiet(t, Config{Store: store}) }
	run := func(e *Engine, sql string) error {
		_, err := execSQL(ctx, e, sql)
		return err
	}
	old := open()
	defer old.Close(ctx)
	if err := run(old, "CREATE TABLE f (id int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if err := run(old, "INSERT INTO f VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	newer := open()
	defer newer.Close(ctx)

	// The old server's commits fail from now on, each with the fence, and
	// none of its attempts disturbs the newer writer.
	for i := 0; i < 5; i++ {
		err := run(old, "INSERT INTO f VALUES (100)")
		if err == nil {
			t.Fatalf("attempt %d: a fenced server committed", i)
		}
		if !errcode.Has(err, errcode.ShardFenceLost) {
			t.Fatalf("attempt %d: %v, want the fence (RS-3001)", i, err)
		}
		if err := run(newer, "INSERT INTO f VALUES ("+string(rune('2'+i))+")"); err != nil {
			t.Fatalf("the newer writer failed after the old one's attempt %d: %v", i, err)
		}
	}
	if why := old.Unready(); !strings.Contains(why, "fenced") {
		t.Fatalf("the fenced server reads as ready: %q", why)
	}
	if why := newer.Unready(); why != "" {
		t.Fatalf("the newer server reads as unready: %q", why)
	}
}
