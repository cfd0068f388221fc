package shard

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rockstream/rockstream/ivm/kv"
)

// TestOwnedKeysIsTheFullScan: ownedKeys, which seeks from key kind to key
// kind within the circuit's ranges, finds exactly the keys a scan of every
// key of the namespaces filtered by ownedBy finds, over random stores of
// table rows, operator state, indexes, view outputs and shard metadata of
// several circuits (short keys and boundary ids included).
func TestOwnedKeysIsTheFullScan(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 11))
	nss := []byte{kv.PrefixOpState, kv.PrefixOpIndex, kv.PrefixViewOutput, kv.PrefixShardMeta, 0x04, 0x07}
	for round := 0; round < 200; round++ {
		store := kv.NewMemory()
		var b kv.WriteBatch
		circuits := []uint64{0, 1, 2, 255, 256, 1 << 40, ^uint64(0)}
		for n := rnd.IntN(300); n > 0; n-- {
			k := []byte{nss[rnd.IntN(len(nss))], []byte{kindTableRows, 'S', 0x00, 0x01, 0xF1, 0xFF, 'x'}[rnd.IntN(7)]}
			if k[0] == kv.PrefixViewOutput && rnd.IntN(2) == 0 {
				k = binary.BigEndian.AppendUint64(k, 0)
			}
			k = binary.BigEndian.AppendUint64(k, circuits[rnd.IntN(len(circuits))])
			k = binary.BigEndian.AppendUint64(k, rnd.Uint64N(4))
			k = k[:rnd.IntN(len(k)+1)]
			if len(k) == 0 {
				continue
			}
			b.Ops = append(b.Ops, kv.Op{Key: k, Value: []byte{1}})
		}
		slices.SortFunc(b.Ops, func(x, y kv.Op) int { return slices.Compare(x.Key, y.Key) })
		b.Ops = dedupOps(b.Ops)
		if err := store.Apply(&b); err != nil {
			t.Fatal(err)
		}
		for _, c := range circuits {
			var want, got [][]byte
			for _, ns := range []byte{kv.PrefixOpState, kv.PrefixOpIndex, kv.PrefixViewOutput, kv.PrefixShardMeta} {
				_ = kv.ScanPrefix(store, []byte{ns}, func(k, _ []byte) error {
					if ownedBy(k, c) {
						want = append(want, append([]byte(nil), k...))
					}
					return nil
				})
			}
			if err := ownedKeys(store, c, func(k []byte) { got = append(got, append([]byte(nil), k...)) }); err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(want, got, slices.Equal[[]byte]) {
				t.Fatalf("round %d circuit %d: ownedKeys found %d keys, the full scan %d\n got %x\nwant %x", round, c, len(got), len(want), got, want)
			}
		}
	}
}
