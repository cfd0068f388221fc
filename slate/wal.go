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
// epoch | u64 wal id | u32 crc32c | body.
//
// Format 3 (written): a data object's body is its rows (appendRow, seq
// order) as one compressed body (compress.go); a fence has none. The
// crc32c covers every byte of the object except itself, so the stored
// (compressed) bytes are verified before anything is decompressed.
// Format 2 (still read): the body is the rows as they are, with the same
// checksum. Format 1 (still read): the checksum covered the rows only, so
// the kind byte could be damaged into "fence" and a commit vanished
// silently; decodeWAL therefore also requires that a fence holds no rows
// and a data object holds some (see checksum.go).
//
// NB: (epoch, id, kind) is the object's put id: one writer epoch writes a slot
// at most once with fixed bytes, so reading back identical bytes after an
// ambiguous create proves the create was ours.

const (
	walMagic         = "RSWL"
	walFormatVersion = 3
	// walFormatRawRows: format 2, whose rows are not compressed.
	walFormatRawRows = 2
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

// encodeWAL encodes a WAL object of the current format; c compresses a
// data object's rows.
func encodeWAL(c *compressor, kind byte, epoch, id uint64, rows []row) []byte {
	size := 0
	for _, r := range rows {
		size += r.encodedSize()
	}
	header := func(dst []byte) []byte {
		copy(dst, walMagic)
		binary.BigEndian.PutUint16(dst[4:], walFormatVersion)
		dst[6] = kind
		binary.BigEndian.PutUint64(dst[7:], epoch)
		binary.BigEndian.PutUint64(dst[15:], id)
		return dst
	}
	// NB: exact allocations; growing a multi-megabyte slice by appends
	// dominated the write path's CPU (page faults on every regrowth).
	var out []byte
	switch {
	case kind == walKindFence:
		// INVARIANT: a fence has no body at all (callers pass no rows).
		out = header(make([]byte, walHeaderBytes))
	case c.codec == codecNone:
		out = header(make([]byte, walHeaderBytes, walHeaderBytes+size+1))
		for _, r := range rows {
			out = appendRow(out, r)
		}
		out = append(out, codecNone)
	default:
		raw := c.rows[:0]
		if cap(raw) < size {
			raw = make([]byte, 0, size)
		}
		for _, r := range rows {
			raw = appendRow(raw, r)
		}
		if body, ok := c.appendLarge(header(make([]byte, walHeaderBytes)), raw); ok {
			out = body
		} else if body, compressed := c.compress(raw); compressed {
			out = header(make([]byte, walHeaderBytes, walHeaderBytes+len(body)+compressTrailerBytes))
			out = appendCompressedTrailer(append(out, body...), len(raw), c.codec)
		} else {
			out = header(make([]byte, walHeaderBytes, walHeaderBytes+len(raw)+1))
			out = append(append(out, raw...), codecNone)
		}
		c.keep(raw)
	}
	binary.BigEndian.PutUint32(out[walChecksumOffset:], checksumAround(out, walChecksumOffset))
	return out
}

type walObject struct {
	fence bool
	epoch uint64
	rows  []row
}

// decodeWAL decodes WAL object id (data, stored at key) of any format this
// build reads; d decompresses its rows.
func decodeWAL(d *decompressor, key string, id uint64, data []byte) (walObject, error) {
	var w walObject
	if len(data) < walHeaderBytes || string(data[:4]) != walMagic {
		return w, corruptErr(key, "not a WAL object (bad magic or %d bytes)", len(data))
	}
	payload := data[walHeaderBytes:]
	version := binary.BigEndian.Uint16(data[4:6])
	if err := checkFormatChecksum(key, "WAL", data, version, walChecksumOffset, payload, walFormatVersion, walFormatRawRows, walFormatPayloadChecksum); err != nil {
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
	// owned: the rows' bytes are a decompressed copy, not the caller's data.
	owned := false
	if version == walFormatVersion {
		rows, err := d.decodeBody(key, "WAL rows", payload)
		if err != nil {
			return w, err
		}
		if len(rows) == 0 {
			return w, corruptErr(key, "WAL data object holds no rows")
		}
		owned = len(rows) > 0 && &rows[0] != &payload[0]
		payload = rows
	}
	for p := payload; len(p) > 0; {
		r, rest, err := decodeRow(p)
		if err != nil {
			return w, corruptErr(key, "WAL row: %v", err)
		}
		if !owned {
			r.key = append([]byte(nil), r.key...)
			r.value = append([]byte(nil), r.value...)
		}
		w.rows = append(w.rows, r)
		p = rest
	}
	return w, nil
}
