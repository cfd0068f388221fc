package slate

import (
	"encoding/binary"
	"hash/crc32"
)

// Every byte of every object slate stores is covered by a CRC32C or compared
// exactly against a constant, so damage is reported (RS-5002, naming the
// object) instead of being read as other data:
//
//	WAL       (formats 2 and 3) one checksum over the whole object but the
//	          checksum field itself: magic, format, kind, epoch, id and rows
//	          (format 3: compressed rows and their codec trailer).
//	manifest  (format 2) the same: magic, format and the JSON body.
//	SST       a checksum per data block (format 2: over the compressed block
//	          and its codec trailer), per filter and index block, and
//	          one over the footer (which holds the format and magic); the
//	          blocks tile the object, and the index that locates them is
//	          itself checksummed.
//	GC boundary (format 1) magic, format, value, checksum.
//	instances/<n>  empty: only the key matters.
//
// Format 1 WAL objects and manifests (checksum over the payload only) are
// still read, so a store written by an older build opens; what their
// checksum did not cover is checked structurally (a fence holds no rows, a
// data object holds some). A format-2 object whose format field is damaged
// into 1 fails the format-1 checksum (the stored value covers other bytes),
// so no single damaged byte makes an object decode under the wrong layout.
//
// A format number this build does not know is reported as RS-5001 (written
// by another version) only when the checksum over the object, computed as
// this build lays it out, still matches; otherwise the format field is
// damaged like any other byte and the object is reported corrupt (RS-5002).

//lint:immutable the CRC table is computed once and only read.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

func checksum(b []byte) uint32 { return crc32.Checksum(b, crcTable) }

// checksumAround is the checksum of data without the 4-byte checksum field
// at offset at: data[:at] followed by data[at+4:].
func checksumAround(data []byte, at int) uint32 {
	return crc32.Update(crc32.Checksum(data[:at], crcTable), crcTable, data[at+4:])
}

// storedChecksumAroundOK reports whether the checksum field at offset at
// matches checksumAround.
func storedChecksumAroundOK(data []byte, at int) bool {
	return checksumAround(data, at) == binary.BigEndian.Uint32(data[at:at+4])
}

// checkFormatChecksum verifies an object whose u16 format field is version
// and whose u32 checksum field is at offset at: formats oldestAround to
// current cover every byte but the field, format payloadOnly (the format
// before them) covers payload only, and any other format is
// unknownFormatErr.
func checkFormatChecksum(objectKey, what string, data []byte, version uint16, at int, payload []byte, current, oldestAround, payloadOnly uint16) error {
	stored := binary.BigEndian.Uint32(data[at:])
	var ok bool
	switch {
	case version >= oldestAround && version <= current:
		ok = checksumAround(data, at) == stored
	case version == payloadOnly:
		ok = checksum(payload) == stored
	default:
		return unknownFormatErr(objectKey, what, version, current, storedChecksumAroundOK(data, at))
	}
	if !ok {
		return corruptErr(objectKey, "%s checksum mismatch", what)
	}
	return nil
}

// unknownFormatErr reports an object whose format field holds a version this
// build does not read: RS-5001 if the rest of the object is intact under
// this build's layout (checksumOK), else RS-5002 (the field is damaged).
func unknownFormatErr(objectKey, what string, version uint16, newest uint16, checksumOK bool) error {
	if checksumOK {
		return formatErr(objectKey, "%s format version %d, this build reads 1 to %d", what, version, newest)
	}
	return corruptErr(objectKey, "%s format version %d is unknown and the checksum does not match: the object is damaged", what, version)
}
