package slate

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
)

// Manifest is one full snapshot of a database's durable state, stored as
// manifest/<20-digit id>.manifest. The highest id is current. Several roles
// write manifests concurrently; each owns disjoint fields (see doc.go) and
// re-applies its own mutation to the newest manifest after a lost race.
//
// Encoding: "RSMF" | u16 format version | u32 crc32c | json. Format 2
// (written): the crc32c covers every byte but itself; format 1 (still read):
// the JSON only.
type Manifest struct {
	// ID is the manifest's own number (also in its key); checked on read.
	ID uint64 `json:"id"`
	// WriterEpoch and CompactorEpoch: fencing (owned by the writer and the
	// compactor respectively).
	WriterEpoch    uint64 `json:"writer_epoch"`
	CompactorEpoch uint64 `json:"compactor_epoch"`
	// ReplayAfterWALID: every WAL object at or below it is reflected in L0
	// and below; recovery replays from ReplayAfterWALID+1 (writer-owned).
	ReplayAfterWALID uint64 `json:"replay_after_wal_id"`
	// WALIDLastSeen: the highest WAL id the writer had flushed when it wrote
	// this manifest (writer-owned; bounds a checkpoint's WAL range).
	WALIDLastSeen uint64 `json:"wal_id_last_seen"`
	// LastL0Seq: the highest seq in L0 and below (writer-owned).
	LastL0Seq uint64 `json:"last_l0_seq"`
	// L0WatermarkMillis: creation time of the newest L0 SST the writer
	// flushed; GC never deletes SSTs created at or after it, which protects
	// an L0 uploaded but not yet published (writer-owned).
	L0WatermarkMillis int64 `json:"l0_watermark_millis"`
	// RecentSnapshotMinSeq: compaction keeps every version above it
	// (writer-owned, published at L0 flush).
	RecentSnapshotMinSeq uint64 `json:"recent_snapshot_min_seq"`
	// L0 SSTs, newest first (writer prepends; compactor removes).
	L0 []SSTInfo `json:"l0"`
	// SortedRuns, newest (highest id) first (compactor-owned).
	SortedRuns []SortedRun `json:"sorted_runs"`
	// Compactions in progress (compactor-owned); GC keeps SSTs created at or
	// after the oldest one's start.
	Compactions []CompactionJob `json:"compactions,omitempty"`
	// Checkpoints pin manifests (added/removed by anyone, by id).
	Checkpoints []Checkpoint `json:"checkpoints,omitempty"`
	// CreatedMillis: when this manifest was written (by the writer's clock).
	CreatedMillis int64 `json:"created_millis"`
	// PutID makes every manifest's bytes unique, so an ambiguous create can be
	// verified by reading it back.
	PutID string `json:"put_id"`
}

// SSTInfo describes one SST object.
type SSTInfo struct {
	Key        string `json:"key"`
	Size       int64  `json:"size"`
	Rows       int    `json:"rows"`
	Tombstones int    `json:"tombstones,omitempty"`
	Merges     int    `json:"merges,omitempty"`
	FirstKey   []byte `json:"first_key"`
	LastKey    []byte `json:"last_key"`
	MinSeq     uint64 `json:"min_seq"`
	MaxSeq     uint64 `json:"max_seq"`
	// FlushGroup (L0 only): the SSTs of one memtable flush share it (the
	// flushed memtable's highest seq). They do not overlap one another, so
	// L0 limits count groups, not SSTs.
	FlushGroup uint64 `json:"flush_group,omitempty"`
}

// SortedRun is a list of SSTs with disjoint, ascending key ranges.
type SortedRun struct {
	ID   uint32    `json:"id"`
	SSTs []SSTInfo `json:"ssts"`
}

// Bytes is the run's total size.
func (r SortedRun) Bytes() int64 {
	var n int64
	for _, s := range r.SSTs {
		n += s.Size
	}
	return n
}

// CompactionJob records a compaction whose outputs may be uploaded but not
// yet published.
type CompactionJob struct {
	ID            string `json:"id"`
	StartedMillis int64  `json:"started_millis"`
}

// Checkpoint pins manifest ManifestID (and everything it references) against
// GC until ExpireMillis (0 = never; delete explicitly).
type Checkpoint struct {
	ID            string `json:"id"`
	Name          string `json:"name,omitempty"`
	ManifestID    uint64 `json:"manifest_id"`
	CreatedMillis int64  `json:"created_millis"`
	ExpireMillis  int64  `json:"expire_millis"`
}

const (
	manifestMagic         = "RSMF"
	manifestFormatVersion = 2
	// manifestFormatPayloadChecksum: format 1, whose checksum covers the
	// JSON only.
	manifestFormatPayloadChecksum = 1
	manifestChecksumOffset        = 6
	manifestHeaderBytes           = manifestChecksumOffset + 4
)

func manifestKey(id uint64) string { return fmt.Sprintf("manifest/%020d.manifest", id) }

func encodeManifest(m *Manifest) []byte {
	js, err := json.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("slate: manifest does not marshal: %v", err)) // plain data: cannot happen
	}
	out := make([]byte, manifestHeaderBytes, manifestHeaderBytes+len(js))
	copy(out, manifestMagic)
	binary.BigEndian.PutUint16(out[4:], manifestFormatVersion)
	out = append(out, js...)
	binary.BigEndian.PutUint32(out[manifestChecksumOffset:], checksumAround(out, manifestChecksumOffset))
	return out
}

func decodeManifest(key string, id uint64, data []byte) (*Manifest, error) {
	if len(data) < manifestHeaderBytes || string(data[:4]) != manifestMagic {
		return nil, corruptErr(key, "not a manifest (bad magic or %d bytes)", len(data))
	}
	js := data[manifestHeaderBytes:]
	version := binary.BigEndian.Uint16(data[4:6])
	if err := checkFormatChecksum(key, "manifest", data, version, manifestChecksumOffset, js, manifestFormatVersion, manifestFormatVersion, manifestFormatPayloadChecksum); err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(js, &m); err != nil {
		return nil, corruptErr(key, "manifest does not decode: %v", err)
	}
	if m.ID != id {
		return nil, corruptErr(key, "manifest says id %d", m.ID)
	}
	return &m, nil
}

func (m *Manifest) clone() *Manifest {
	out, err := decodeManifest("clone", m.ID, encodeManifest(m))
	if err != nil {
		panic(err)
	}
	return out
}

func (m *Manifest) sortRuns() {
	sort.Slice(m.SortedRuns, func(i, j int) bool { return m.SortedRuns[i].ID > m.SortedRuns[j].ID })
}

// l0Groups counts the memtable flushes in L0.
func (m *Manifest) l0Groups() int {
	n := 0
	for i, s := range m.L0 {
		if i == 0 || s.FlushGroup == 0 || s.FlushGroup != m.L0[i-1].FlushGroup {
			n++
		}
	}
	return n
}

// allSSTs lists every SST the manifest references.
// maxSeq is the newest seq the manifest's SSTs hold: LastL0Seq, or above
// it where an ingest put SSTs newer than the memtables it left unflushed
// (DB.Ingest). An open continues the sequence from here.
func (m *Manifest) maxSeq() uint64 {
	seq := m.LastL0Seq
	for _, t := range m.L0 {
		seq = max(seq, t.MaxSeq)
	}
	for _, r := range m.SortedRuns {
		for _, t := range r.SSTs {
			seq = max(seq, t.MaxSeq)
		}
	}
	return seq
}

func (m *Manifest) allSSTs() []SSTInfo {
	out := append([]SSTInfo(nil), m.L0...)
	for _, r := range m.SortedRuns {
		out = append(out, r.SSTs...)
	}
	return out
}
