package shard

import (
	"bytes"
	"fmt"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/runtime"
)

// Storage format versions (spec §5.5). Two records say which encodings
// wrote what a shard stores:
//
//	0x06 'v'          shard format: one byte, the version of the base-table
//	                  row, delta-log and shard_meta encodings
//	0x06 'V' view(16) a view's installed marker holds its circuit's state
//	                  format record (circuit.StateFormat), written in the
//	                  same batch as the view's backfilled state
//
// Base-table rows are the source of truth and cannot be recomputed. A
// shard in format 1 (row keys without buckets) is upgraded in place: its
// rows are re-keyed to format 2 when it adopts its first catalog
// (upgrade.go). A shard whose format this build does not read at all is
// refused at open with RS-5001 (run the build that wrote it). A view's
// state can be recomputed:
// when its stored record differs from the record this build computes for
// the same view (another encoding of some operator's state or of the view
// outputs, or another plan layout), the view's state is dropped and the
// view is backfilled afresh from its inputs, exactly as CREATE does —
// before the first epoch step that would read the state, in syncCatalog.
// Views reading a rebuilt view are rebuilt with it (they would miss its
// deltas otherwise). A view with no state yet has no record and is simply
// installed.
//
// Shard formats:
//
//	1  base-table row keys 0x01 'T' table(16) pk-key (or row id)
//	2  base-table row keys carry the key's bucket: 0x01 'T' table(16)
//	   bucket(2) pk-key (or row id), so a bucket moves by range
//	3  every delta-log entry ends with its epoch's time (epochtime.go)
//	   and, when a table's watermark moved, the new watermarks
//	   (watermark.go), which a format-2 build reads as trailing garbage;
//	   format 2 stores become format 3 at open (their entries are still
//	   read)
//	4  secondary indexes keep entries beside the rows (index.go), written
//	   with them; a format-3 build would write rows without their
//	   entries. Format 2 and 3 stores become format 4 at open (an index
//	   without entries is built when the catalog is adopted)
//
// View state layouts (named by the view's format record, not the shard
// format, since view state is rebuilt rather than upgraded):
//
//	rockstream.circuit/2  operator-state and view-output keys
//	                      namespace kind op_id(16) key, no bucket
//	rockstream.circuit/3  every such key carries the bucket of its
//	| keys=bucketed/2     partition key: namespace kind op_id(16)
//	                      bucket(2) key (ivm/arrange), so all state of one
//	                      bucket of one operator moves by range; views
//	                      stored by an earlier build are rebuilt at open
const (
	// shardFormat is the format this build writes; shardFormatMin is the
	// oldest it reads (older formats between the two are upgraded).
	shardFormat    byte = 4
	shardFormatMin byte = 1
	metaFormat     byte = 'v'
)

func formatKey() []byte { return []byte{kv.PrefixShardMeta, metaFormat} }

// checkShardFormat refuses a store written in a shard format this build
// does not read, and records the format of a store that has none: a new
// store (this build's format), or one written before formats were
// recorded (version 1's, to be upgraded). It reports whether the store's
// rows must be upgraded (upgrade.go).
func checkShardFormat(ctx runtime.Context, store kv.Store) (upgrade bool, err error) {
	v, ok, err := store.Get(formatKey())
	if err != nil {
		return false, err
	}
	if !ok {
		format := shardFormat
		if _, used, err := store.Get(lastEpochKey()); err != nil {
			return false, err
		} else if used {
			ctx.Logger().Info("shard storage has no format record: recording version 1, the format of the builds before records")
			format = 1
		}
		if err := store.Apply(&kv.WriteBatch{Ops: []kv.Op{{Key: formatKey(), Value: []byte{format}}}}); err != nil {
			return false, err
		}
		return format < shardFormat, nil
	}
	if len(v) != 1 || v[0] < shardFormatMin || v[0] > shardFormat {
		return false, errcode.New(errcode.StorageFormatVersionIncompatible,
			"the shard's storage is in format %x, and this build reads formats %d to %d: run the RockStream version that wrote it (or a newer one that reads both), or restore a backup made with this version", v, shardFormatMin, shardFormat)
	}
	if v[0] >= 2 && v[0] < shardFormat {
		// Nothing to rewrite: the record alone keeps builds that would
		// misread the timed log entries, or write rows without their
		// index entries, away (RS-5001 above).
		if err := store.Apply(&kv.WriteBatch{Ops: []kv.Op{{Key: formatKey(), Value: []byte{shardFormat}}}}); err != nil {
			return false, err
		}
		ctx.Logger().Info("shard storage format recorded", "from", v[0], "to", shardFormat)
		return false, nil
	}
	if v[0] < shardFormat {
		ctx.Logger().Info("shard storage is in an older format: its rows are upgraded when the catalog is loaded", "format", v[0], "to", shardFormat)
	}
	return v[0] < shardFormat, nil
}

// storedStateForeign reports whether a stored view's state, with marker
// value marker, must be rebuilt by this build: its format record differs
// from v's, or it reads a view that is being (re)built from scratch
// (fresh). reason says why, for the log.
func storedStateForeign(marker []byte, v *installedView, fresh map[catalog.ID]bool) (string, bool) {
	for _, s := range v.sources {
		if fresh[s] {
			return "it reads view " + s.String() + ", which is being rebuilt", true
		}
	}
	current := v.marker()
	if bytes.Equal(marker, current) {
		return "", false
	}
	return circuit.FormatDifference(marker, current), true
}

// marker is the format record stored beside a view's state: its circuit's
// state format, and, once the view was recompiled, the plan that built the
// state. NB: a recompiled plan may have the shape of the old one (only a
// constant changed), and state built by one must never be read by the
// other; a view never recompiled keeps the record earlier builds wrote.
func (v *installedView) marker() []byte {
	f := v.circuit.StateFormat()
	if v.rel.Plan != 0 {
		f = append(append([]byte(nil), f...), fmt.Sprintf(" | plan %d", v.rel.Plan)...)
	}
	if v.spread != nil {
		// NB: a spread view's parts are the rows its inputs' keys deal
		// to this shard: dealt out otherwise (another build, other
		// shards), its state is another part's.
		f = append(append([]byte(nil), f...), spreadMarker(v.spread.m)...)
	}
	return f
}
