package ivm

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rockstream/rockstream/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestRunSmoke runs the whole code path on a tiny base (both systems, the
// cross-check of the views' contents, CSV and SVG).
func TestRunSmoke(t *testing.T) {
	out := t.TempDir()
	res, err := Run(context.Background(), Options{Rows: 2000, Fractions: []float64{0.001, 0.1}, Reps: 1, PGURL: pgtest.Start(t), Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 || !res[0].Backfill || res[0].ChangeRows != 2000 || res[0].RockStream <= 0 || res[0].PGRefresh <= 0 ||
		res[1].ChangeRows != 2 || res[2].ChangeRows != 200 {
		t.Fatalf("%+v", res)
	}
	for _, f := range []string{"ivm.csv", "ivm.svg"} {
		if b, err := os.ReadFile(filepath.Join(out, f)); err != nil || len(b) == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
}
