package slate

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Compression is the codec slate compresses SST data blocks and WAL objects
// with (Options.Compression). The codec is recorded in every compressed
// body, so objects written with different codecs (or none, by an older
// build) are read side by side: changing the option needs no migration.
type Compression uint8

const (
	// CompressionDefault is CompressionS2.
	CompressionDefault Compression = iota
	// CompressionNone stores bodies as they are.
	CompressionNone
	// CompressionS2 (klauspost/compress/s2, fastest mode): the least CPU
	// per byte, both ways.
	CompressionS2
	// CompressionSnappy: Snappy's format (s2's "better" Snappy encoder);
	// smaller than S2's fastest mode at about twice its encoding CPU.
	CompressionSnappy
	// CompressionZstd (klauspost/compress/zstd, its fastest level): the
	// smallest bodies, at several times S2's CPU.
	CompressionZstd
	// CompressionLZ4 (pierrec/lz4 block format).
	CompressionLZ4
)

func (c Compression) String() string {
	switch c {
	case CompressionDefault:
		return "default"
	case CompressionNone:
		return "none"
	case CompressionS2:
		return "s2"
	case CompressionSnappy:
		return "snappy"
	case CompressionZstd:
		return "zstd"
	case CompressionLZ4:
		return "lz4"
	}
	return fmt.Sprintf("compression(%d)", uint8(c))
}

// Codec ids as stored (a body's last byte). They are part of the on-disk
// format: never renumber one, only add.
const (
	codecNone   byte = 0
	codecS2     byte = 1
	codecSnappy byte = 2
	codecZstd   byte = 3
	codecLZ4    byte = 4
	codecMax         = codecLZ4
)

// codecOf is the stored codec id of an option value (defaults resolved).
func codecOf(c Compression) byte {
	switch c {
	case CompressionNone:
		return codecNone
	case CompressionSnappy:
		return codecSnappy
	case CompressionZstd:
		return codecZstd
	case CompressionLZ4:
		return codecLZ4
	}
	return codecS2
}

// A compressed body (an SST data block of format 2, a WAL object's rows
// from format 3 on) is
//
//	compressed bytes | u32 raw length | u8 codec
//
// or, when the codec is codecNone,
//
//	raw bytes | u8 codecNone
//
// The codec comes last so a block built in place (sstBuilder) is stored
// raw by appending one byte. The enclosing checksum covers all of it, so
// damage is found before anything is decompressed; a body that passes its
// checksum and still fails to decompress to its stated length is corrupt
// too (RS-5002), and an unknown codec id with a good checksum was written
// by a newer build (RS-5001).
const (
	// compressTrailerBytes: raw length and codec.
	compressTrailerBytes = 4 + 1
	// compressSrcBytesMax: larger inputs are stored raw (the raw length is
	// a u32, and s2 and lz4 refuse blocks near 4 GiB).
	compressSrcBytesMax = 1 << 30
	// compressMinSavingsDivisor: a body is stored compressed only if that
	// saves at least 1/8 of it (as in RocksDB), so reads do not pay
	// decompression for nearly incompressible blocks.
	compressMinSavingsDivisor = 8
	// compressKeepBytesMax bounds the buffers a compressor keeps for reuse
	// (a WAL object's rows and their compressed form): one giant batch
	// must not pin its size for the life of the database.
	compressKeepBytesMax = 8 << 20
)

// compressor compresses bodies with one codec. Not safe for concurrent use
// (slate calls it from its owner's goroutine only).
type compressor struct {
	codec byte
	// zstd is made on first use (an encoder holds tens of KiB of tables).
	zstd *zstd.Encoder
	// lz4 is made on first use (its hash table is 128 KiB).
	lz4 *lz4.Compressor
	// scratch holds the compressed form before it is copied into place.
	scratch []byte
	// rows holds a WAL object's encoded rows before they are compressed.
	rows []byte
}

// keep keeps rows (a WAL object's encoded rows) for the next object's.
func (c *compressor) keep(rows []byte) {
	if cap(rows) <= compressKeepBytesMax {
		c.rows = rows[:0]
	}
}

func newCompressor(c Compression) *compressor { return &compressor{codec: codecOf(c)} }

// compress returns src compressed with the codec, or false when the codec
// is none, src is too large, or compression would not save enough. The
// result is in c.scratch (valid until the next call).
func (c *compressor) compress(src []byte) ([]byte, bool) {
	if c.codec == codecNone || len(src) == 0 || len(src) > compressSrcBytesMax {
		return nil, false
	}
	var out []byte
	switch c.codec {
	case codecS2:
		out = s2.Encode(c.scratch[:cap(c.scratch)], src)
	case codecSnappy:
		out = s2.EncodeSnappyBetter(c.scratch[:cap(c.scratch)], src)
	case codecZstd:
		if c.zstd == nil {
			enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest),
				zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
			if err != nil {
				panic(fmt.Sprintf("slate: zstd encoder: %v", err)) // only invalid options fail
			}
			c.zstd = enc
		}
		out = c.zstd.EncodeAll(src, c.scratch[:0])
	case codecLZ4:
		bound := lz4.CompressBlockBound(len(src))
		if cap(c.scratch) < bound {
			c.scratch = make([]byte, bound)
		}
		if c.lz4 == nil {
			c.lz4 = &lz4.Compressor{}
		}
		n, err := c.lz4.CompressBlock(src, c.scratch[:bound])
		if err != nil || n == 0 {
			return nil, false // incompressible
		}
		out = c.scratch[:n]
	default:
		panic(fmt.Sprintf("slate: compressor with unknown codec %d", c.codec))
	}
	if cap(out) > cap(c.scratch) && cap(out) <= compressKeepBytesMax {
		c.scratch = out[:0]
	}
	if len(out)+compressTrailerBytes > len(src)-len(src)/compressMinSavingsDivisor {
		return nil, false
	}
	return out, true
}

// appendLarge appends src compressed, with its trailer, to dst when src
// is larger than the buffers the compressor keeps and the codec can
// compress into dst's spare room (s2, Snappy): a large WAL object (a
// COPY's commit, a hundred megabytes) is then compressed where it goes
// instead of into a buffer of its own copied after the header. ok is
// false (dst unchanged) otherwise, or when compression saves too little.
func (c *compressor) appendLarge(dst, src []byte) (out []byte, ok bool) {
	if (c.codec != codecS2 && c.codec != codecSnappy) || len(src) <= compressKeepBytesMax || len(src) > compressSrcBytesMax {
		return dst, false
	}
	room := s2.MaxEncodedLen(len(src))
	if room < 0 {
		return dst, false
	}
	buf := slices.Grow(dst, room+compressTrailerBytes)
	at := len(buf)
	var enc []byte
	if c.codec == codecS2 {
		enc = s2.Encode(buf[at:at+room], src)
	} else {
		enc = s2.EncodeSnappyBetter(buf[at:at+room], src)
	}
	if len(enc)+compressTrailerBytes > len(src)-len(src)/compressMinSavingsDivisor {
		return dst, false
	}
	if len(enc) > 0 && &enc[0] != &buf[at : at+1][0] {
		// NB: an encoder that wrote elsewhere after all.
		return appendCompressedTrailer(append(buf[:at], enc...), len(src), c.codec), true
	}
	return appendCompressedTrailer(buf[:at+len(enc)], len(src), c.codec), true
}

// appendBody appends src as a compressed body to dst. src must not
// overlap dst's spare capacity.
func (c *compressor) appendBody(dst, src []byte) []byte {
	out, ok := c.compress(src)
	if !ok {
		return append(append(dst, src...), codecNone)
	}
	return appendCompressedTrailer(append(dst, out...), len(src), c.codec)
}

// compressInPlace turns buf[off:] (raw bytes) into a compressed body.
func (c *compressor) compressInPlace(buf []byte, off int) []byte {
	raw := len(buf) - off
	out, ok := c.compress(buf[off:])
	if !ok {
		return append(buf, codecNone)
	}
	return appendCompressedTrailer(append(buf[:off], out...), raw, c.codec)
}

func appendCompressedTrailer(dst []byte, rawBytes int, codec byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(rawBytes))
	return append(dst, codec)
}

// decompressor decodes compressed bodies of any codec. Not safe for
// concurrent use.
type decompressor struct {
	zstd *zstd.Decoder
}

// decodeBody returns the raw bytes of body (a compressed body whose
// checksum was verified): an alias of body for codecNone, else a new
// slice. what names the body in errors.
func (d *decompressor) decodeBody(objectKey, what string, body []byte) ([]byte, error) {
	if len(body) == 0 {
		return nil, corruptErr(objectKey, "%s: empty body (no codec byte)", what)
	}
	codec := body[len(body)-1]
	if codec == codecNone {
		return body[: len(body)-1 : len(body)-1], nil
	}
	if codec > codecMax {
		return nil, formatErr(objectKey, "%s is compressed with codec %d, this build reads 0 to %d", what, codec, codecMax)
	}
	if len(body) < compressTrailerBytes {
		return nil, corruptErr(objectKey, "%s: compressed body of %d bytes is shorter than its trailer", what, len(body))
	}
	rawBytes := int(binary.BigEndian.Uint32(body[len(body)-compressTrailerBytes:]))
	src := body[:len(body)-compressTrailerBytes]
	if rawBytes > compressSrcBytesMax {
		return nil, corruptErr(objectKey, "%s: raw length %d is above the most slate compresses", what, rawBytes)
	}
	dst := make([]byte, rawBytes)
	var out []byte
	var err error
	switch codec {
	case codecS2, codecSnappy:
		// NB: s2's decoder reads Snappy's format too.
		var n int
		if n, err = s2.DecodedLen(src); err == nil && n != rawBytes {
			err = fmt.Errorf("s2 header says %d bytes", n)
		}
		if err == nil {
			out, err = s2.Decode(dst, src)
		}
	case codecZstd:
		if d.zstd == nil {
			dec, derr := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
				zstd.WithDecoderMaxMemory(compressSrcBytesMax))
			if derr != nil {
				panic(fmt.Sprintf("slate: zstd decoder: %v", derr)) // only invalid options fail
			}
			d.zstd = dec
		}
		out, err = d.zstd.DecodeAll(src, dst[:0])
	case codecLZ4:
		var n int
		n, err = lz4.UncompressBlock(src, dst)
		out = dst[:n]
	}
	if err != nil {
		return nil, corruptErr(objectKey, "%s: codec %d: %v", what, codec, err)
	}
	if len(out) != rawBytes {
		return nil, corruptErr(objectKey, "%s: decompressed to %d bytes, the trailer says %d", what, len(out), rawBytes)
	}
	return out, nil
}
