package slate

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// WAL objects live at wal/<20-digit id>.sst; ids are dense and every slot is
// created once with put-if-absent, which is what fences a zombie writer.
//
// Encoding: "RSWL" | u16 format | u8 kind (0 data, 1 fence) | u64 writer
// epoch | u64 wal id | u32 crc32c(rows) | rows (appendRow, seq order).
//
// NB: (epoch, id, kind) is the object's put id: one writer epoch writes a slot
// at most once with fixed bytes, so reading back identical bytes after an
// ambiguous create proves the create was ours.

const (
	walMagic         = "RSWL"
	walFormatVersion = 1
	walHeaderBytes   = 4 + 2 + 1 + 8 + 8 + 4
	walKindData      = 0
	walKindFence     = 1
)

func walKey(id uint64) string { return fmt.Sprintf("wal/%020d.sst", id) }

func parseWALKey(key string) (uint64, bool) {
	if !strings.HasPrefix(key, "wal/") || !strings.HasSuffix(key, ".sst") {
		return 0, false
	}
	id, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(key, "wal/"), ".sst"), 10, 64)
	return id, err == nil
}

func encodeWAL(kind byte, epoch, id uint64, rows []row) []byte {
	size := walHeaderBytes
	for _, r := range rows {
		size += r.encodedSize()
	}
	// NB: one exact allocation; growing a multi-megabyte slice by appends
	// dominated the write path's CPU (page faults on every regrowth).
	out := make([]byte, walHeaderBytes, size)
	copy(out, walMagic)
	binary.BigEndian.PutUint16(out[4:], walFormatVersion)
	out[6] = kind
	binary.BigEndian.PutUint64(out[7:], epoch)
	binary.BigEndian.PutUint64(out[15:], id)
	for _, r := range rows {
		out = appendRow(out, r)
	}
	binary.BigEndian.PutUint32(out[23:], checksum(out[walHeaderBytes:]))
	return out
}

type walObject struct {
	fence bool
	epoch uint64
	rows  []row
}

func decodeWAL(key string, id uint64, data []byte) (walObject, error) {
	var w walObject
	if len(data) < walHeaderBytes || string(data[:4]) != walMagic {
		return w, corruptErr(key, "not a WAL object (bad magic or %d bytes)", len(data))
	}
	if v := binary.BigEndian.Uint16(data[4:6]); v != walFormatVersion {
		return w, formatErr(key, "WAL format version %d, this build reads %d", v, walFormatVersion)
	}
	kind := data[6]
	w.epoch = binary.BigEndian.Uint64(data[7:15])
	if got := binary.BigEndian.Uint64(data[15:23]); got != id {
		return w, corruptErr(key, "WAL object says id %d", got)
	}
	payload := data[walHeaderBytes:]
	if checksum(payload) != binary.BigEndian.Uint32(data[23:27]) {
		return w, corruptErr(key, "WAL checksum mismatch")
	}
	switch kind {
	case walKindFence:
		w.fence = true
		return w, nil
	case walKindData:
	default:
		return w, corruptErr(key, "unknown WAL object kind %d", kind)
	}
	for p := payload; len(p) > 0; {
		r, rest, err := decodeRow(p)
		if err != nil {
			return w, corruptErr(key, "WAL row: %v", err)
		}
		r.key = append([]byte(nil), r.key...)
		r.value = append([]byte(nil), r.value...)
		w.rows = append(w.rows, r)
		p = rest
	}
	return w, nil
}
