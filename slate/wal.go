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
// epoch | u64 wal id | u32 crc32c | rows (appendRow, seq order).
//
// Format 2 (written): the crc32c covers every byte of the object except
// itself. Format 1 (still read): it covered the rows only, so the kind byte
// could be damaged into "fence" and a commit vanished silently; decodeWAL
// therefore also requires that a fence holds no rows and a data object
// holds some (see checksum.go).
//
// NB: (epoch, id, kind) is the object's put id: one writer epoch writes a slot
// at most once with fixed bytes, so reading back identical bytes after an
// ambiguous create proves the create was ours.

const (
	walMagic         = "RSWL"
	walFormatVersion = 2
	// walFormatPayloadChecksum: format 1, whose checksum covers the rows only.
	walFormatPayloadChecksum = 1
	walHeaderBytes           = 4 + 2 + 1 + 8 + 8 + 4
	walChecksumOffset        = walHeaderBytes - 4
	walKindData              = 0
	walKindFence             = 1
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
	binary.BigEndian.PutUint32(out[walChecksumOffset:], checksumAround(out, walChecksumOffset))
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
	payload := data[walHeaderBytes:]
	version := binary.BigEndian.Uint16(data[4:6])
	if err := checkFormatChecksum(key, "WAL", data, version, walChecksumOffset, payload, walFormatVersion, walFormatPayloadChecksum); err != nil {
		return w, err
	}
	kind := data[6]
	w.epoch = binary.BigEndian.Uint64(data[7:15])
	if got := binary.BigEndian.Uint64(data[15:23]); got != id {
		return w, corruptErr(key, "WAL object says id %d", got)
	}
	// INVARIANT: seal never writes an empty data object and a fence never
	// holds rows. Checked for every format, and what keeps a format-1
	// object's kind byte (outside its checksum) from being misread.
	switch kind {
	case walKindFence:
		if len(payload) > 0 {
			return w, corruptErr(key, "WAL fence object holds %d bytes of rows", len(payload))
		}
		w.fence = true
		return w, nil
	case walKindData:
		if len(payload) == 0 {
			return w, corruptErr(key, "WAL data object holds no rows")
		}
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
