package gateway

import (
	"encoding/binary"
	"fmt"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/types"
)

// COPY ... WITH (FORMAT binary): PostgreSQL's binary COPY format, which
// pgx's CopyFrom and other bulk loaders send.
//
//	signature  "PGCOPY\n\377\r\n\0" (11 bytes)
//	flags      int32 (bit 16: OIDs included, refused; other high bits must be 0)
//	extension  int32 length, then that many bytes (skipped)
//	tuple      int16 field count, then per field int32 length (-1 = NULL) and
//	           the value in the column type's binary representation
//	trailer    int16 -1 (optional: the end of the data at a tuple boundary
//	           ends the COPY too)

// copyBinarySignature starts every binary COPY stream.
const copyBinarySignature = "PGCOPY\n\377\r\n\x00"

// copyBinaryDecoder turns the CopyData byte stream into typed rows. Data may
// split anywhere, so undecoded bytes wait in pending.
type copyBinaryDecoder struct {
	cols    types.Schema
	table   string
	pending []byte
	// headerDone is set once signature, flags and extension were read;
	// ended once the trailer was.
	headerDone, ended bool
	// tuples counts the tuples decoded (for error context, 1-based).
	tuples int64
}

func (d *copyBinaryDecoder) fail(format string, args ...any) error {
	e := errcode.New(errcode.CopyBadBinaryFormat, format, args...)
	e.Detail = fmt.Sprintf("COPY %s, tuple %d", d.table, d.tuples+1)
	return e
}

// feed appends data and returns the rows of every complete tuple; final is
// set at CopyDone, when a partial tuple or a missing trailer is an error.
func (d *copyBinaryDecoder) feed(data []byte, final bool) ([]types.Row, error) {
	if d.ended {
		if len(data) > 0 {
			return nil, d.fail("unexpected data after the binary COPY trailer")
		}
		return nil, nil
	}
	d.pending = append(d.pending, data...)
	buf := d.pending
	var rows []types.Row
	if !d.headerDone {
		if len(buf) < len(copyBinarySignature)+8 {
			if final {
				return nil, d.fail("COPY file signature not recognized")
			}
			return nil, nil
		}
		if string(buf[:len(copyBinarySignature)]) != copyBinarySignature {
			return nil, d.fail("COPY file signature not recognized")
		}
		flags := binary.BigEndian.Uint32(buf[len(copyBinarySignature):])
		if flags&(1<<16) != 0 {
			return nil, d.fail("binary COPY with OIDs is not supported")
		}
		if flags&0xfffe0000 != 0 {
			return nil, d.fail("unrecognized critical flags in COPY file header")
		}
		ext := int(binary.BigEndian.Uint32(buf[len(copyBinarySignature)+4:]))
		start := len(copyBinarySignature) + 8
		if ext < 0 || ext > copyLineBytesMax {
			return nil, d.fail("invalid COPY file header (wrong length)")
		}
		if len(buf) < start+ext {
			if final {
				return nil, d.fail("invalid COPY file header (wrong length)")
			}
			return nil, nil
		}
		buf = buf[start+ext:]
		d.headerDone = true
	}
	for len(buf) >= 2 {
		count := int16(binary.BigEndian.Uint16(buf))
		if count == -1 {
			d.ended = true
			buf = buf[2:]
			if len(buf) > 0 {
				return nil, d.fail("unexpected data after the binary COPY trailer")
			}
			break
		}
		if int(count) != len(d.cols) {
			return nil, d.fail("row field count is %d, expected %d", count, len(d.cols))
		}
		row, n, err := d.tuple(buf[2:])
		if err != nil {
			return nil, err
		}
		if n < 0 {
			break // incomplete: wait for more data
		}
		rows = append(rows, row)
		d.tuples++
		buf = buf[2+n:]
	}
	// NB: keep the undecoded tail in a buffer of its own, so the rows'
	// values (decoded copies) never alias the next CopyData message.
	d.pending = append(d.pending[:0], buf...)
	// NB: like PostgreSQL, the end of the data at a tuple boundary ends the
	// COPY even without the trailer (pgx's CopyFrom sends none).
	if final && len(d.pending) > 0 {
		return nil, d.fail("unexpected EOF in COPY data")
	}
	if len(d.pending) > copyLineBytesMax {
		return nil, d.fail("binary COPY tuple longer than %d bytes", copyLineBytesMax)
	}
	return rows, nil
}

// tuple decodes one tuple's fields from buf; n is the bytes used, or -1
// when buf does not hold the whole tuple yet.
func (d *copyBinaryDecoder) tuple(buf []byte) (types.Row, int, error) {
	row := make(types.Row, len(d.cols))
	off := 0
	for i, col := range d.cols {
		if len(buf)-off < 4 {
			return nil, -1, nil
		}
		size := int32(binary.BigEndian.Uint32(buf[off:]))
		off += 4
		if size == -1 {
			continue
		}
		if size < 0 {
			return nil, 0, d.fail("invalid field size %d for column %s", size, col.Name)
		}
		if len(buf)-off < int(size) {
			return nil, -1, nil
		}
		v, err := decodeBinary(col.Type, buf[off:off+int(size)])
		if err != nil {
			e := errcode.New(errcode.CopyInvalidValue, "%v", err)
			if inner, ok := errcode.As(err); ok {
				e.Message, e.SQLState = inner.Message, inner.State()
			} else {
				// PostgreSQL: invalid_binary_representation.
				e.SQLState = "22P03"
			}
			e.Detail = fmt.Sprintf("COPY %s, tuple %d, column %s", d.table, d.tuples+1, col.Name)
			return nil, 0, e
		}
		row[i] = v
		off += int(size)
	}
	return row, off, nil
}

// appendCopyBinaryHeader starts a binary COPY TO stream.
func appendCopyBinaryHeader(buf []byte) []byte {
	buf = append(buf, copyBinarySignature...)
	return binary.BigEndian.AppendUint64(buf, 0) // flags, extension length
}

// appendCopyBinaryRow appends one tuple in binary COPY format.
func appendCopyBinaryRow(buf []byte, row types.Row, cols []types.Column) ([]byte, error) {
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(cols)))
	for i, col := range cols {
		if row[i] == nil {
			buf = binary.BigEndian.AppendUint32(buf, 0xffffffff)
			continue
		}
		at := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		var err error
		if buf, err = appendBinary(buf, col.Type, row[i]); err != nil {
			return nil, err
		}
		binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
	}
	return buf, nil
}

// appendCopyBinaryTrailer ends a binary COPY TO stream.
func appendCopyBinaryTrailer(buf []byte) []byte { return append(buf, 0xff, 0xff) }
