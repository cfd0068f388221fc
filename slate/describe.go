package slate

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/rockstream/rockstream/slate/objstore"
)

// Describe prints a database's state for operators: the current manifest
// (epochs, WAL bounds, watermarks), L0 and sorted runs with per-SST key
// counts, checkpoints, in-progress compactions, and the WAL objects above the
// replay point with their row counts. It only reads.
func Describe(ctx context.Context, store objstore.Store, path string, w io.Writer) error {
	store = objstore.Prefixed(store, path)
	var decomp decompressor
	m, err := latestManifest(ctx, store)
	if err != nil {
		return err
	}
	if m == nil {
		fmt.Fprintf(w, "database %q: no manifest (empty or not a slate database)\n", path)
		return nil
	}
	manifests, err := store.List(ctx, "manifest/")
	if err != nil {
		return storeErr(err, "list manifests")
	}
	boundary, _, err := readBoundary(ctx, store, manifestBoundaryKey)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "database %q\n", path)
	fmt.Fprintf(w, "manifest            %d (%d stored, gc boundary %d)\n", m.ID, len(manifests), boundary)
	fmt.Fprintf(w, "writer epoch        %d\n", m.WriterEpoch)
	fmt.Fprintf(w, "compactor epoch     %d\n", m.CompactorEpoch)
	fmt.Fprintf(w, "replay after WAL    %d (last seen %d)\n", m.ReplayAfterWALID, m.WALIDLastSeen)
	fmt.Fprintf(w, "last L0 seq         %d\n", m.LastL0Seq)
	fmt.Fprintf(w, "snapshot min seq    %d\n", m.RecentSnapshotMinSeq)
	var totalRows, totalTomb, totalMerge int
	var totalBytes int64
	sst := func(indent string, s SSTInfo) {
		fmt.Fprintf(w, "%s%s  %d bytes  rows=%d tombstones=%d merges=%d  seq=[%d,%d]  keys=[%q, %q]\n",
			indent, s.Key, s.Size, s.Rows, s.Tombstones, s.Merges, s.MinSeq, s.MaxSeq, s.FirstKey, s.LastKey)
		totalRows += s.Rows
		totalTomb += s.Tombstones
		totalMerge += s.Merges
		totalBytes += s.Size
	}
	fmt.Fprintf(w, "L0 (%d SSTs, newest first)\n", len(m.L0))
	for _, s := range m.L0 {
		sst("  ", s)
	}
	fmt.Fprintf(w, "sorted runs (%d, newest first)\n", len(m.SortedRuns))
	for _, r := range m.SortedRuns {
		fmt.Fprintf(w, "  run %d: %d SSTs, %d bytes\n", r.ID, len(r.SSTs), r.Bytes())
		for _, s := range r.SSTs {
			sst("    ", s)
		}
	}
	fmt.Fprintf(w, "SST totals          %d bytes, rows=%d tombstones=%d merges=%d\n", totalBytes, totalRows, totalTomb, totalMerge)
	fmt.Fprintf(w, "checkpoints (%d)\n", len(m.Checkpoints))
	for _, cp := range m.Checkpoints {
		expire := "never"
		if cp.ExpireMillis != 0 {
			expire = fmt.Sprintf("%d", cp.ExpireMillis)
		}
		fmt.Fprintf(w, "  %s name=%q manifest=%d created=%d expires=%s\n", cp.ID, cp.Name, cp.ManifestID, cp.CreatedMillis, expire)
	}
	if len(m.Compactions) > 0 {
		fmt.Fprintf(w, "compactions in progress (%d)\n", len(m.Compactions))
		for _, j := range m.Compactions {
			fmt.Fprintf(w, "  %s started=%d\n", j.ID, j.StartedMillis)
		}
	}
	wal, err := store.List(ctx, "wal/")
	if err != nil {
		return storeErr(err, "list WAL")
	}
	var lo, hi uint64
	var replayRows, fences int
	var lines []string
	for _, o := range wal {
		id, ok := parseWALKey(o.Key)
		if !ok {
			continue
		}
		if lo == 0 || id < lo {
			lo = id
		}
		hi = max(hi, id)
		if id <= m.ReplayAfterWALID {
			continue
		}
		obj, err := store.Get(ctx, o.Key)
		if err != nil {
			lines = append(lines, fmt.Sprintf("  %s: %v", o.Key, err))
			continue
		}
		wo, err := decodeWAL(&decomp, o.Key, id, obj.Data)
		switch {
		case err != nil:
			lines = append(lines, fmt.Sprintf("  %s: %v", o.Key, err))
		case wo.fence:
			fences++
			lines = append(lines, fmt.Sprintf("  %s: fence (epoch %d)", o.Key, wo.epoch))
		default:
			replayRows += len(wo.rows)
			lines = append(lines, fmt.Sprintf("  %s: %d rows (epoch %d)", o.Key, len(wo.rows), wo.epoch))
		}
	}
	fmt.Fprintf(w, "WAL objects         %d stored, ids [%d, %d]; to replay: %d rows, %d fences\n", len(wal), lo, hi, replayRows, fences)
	fmt.Fprintln(w, strings.Join(lines, "\n"))
	return nil
}
