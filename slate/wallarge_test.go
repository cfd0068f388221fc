package slate

import (
	"bytes"
	"fmt"
	"testing"
)

// TestLargeWALRoundTrip: a WAL object larger than the buffers a compressor
// keeps (compressed where it goes, appendLarge) reads back as written, with
// every codec, and is stored compressed with the codecs that compress.
func TestLargeWALRoundTrip(t *testing.T) {
	var rows []row
	size := 0
	for i := 0; size <= 2*compressKeepBytesMax; i++ {
		r := row{key: fmt.Appendf(nil, "table/%09d", i), seq: 7, kind: KindValue, value: fmt.Appendf(nil, "value %d of a row", i%1000)}
		if i%97 == 0 {
			r.kind, r.value = KindTombstone, nil
		}
		rows = append(rows, r)
		size += r.encodedSize()
	}
	for _, c := range []Compression{CompressionS2, CompressionSnappy, CompressionZstd, CompressionNone} {
		comp := newCompressor(c)
		data := encodeWAL(comp, walKindData, 3, 42, rows)
		if c != CompressionNone && len(data) > size/2 {
			t.Fatalf("compression %d: %d bytes stored for %d raw", c, len(data), size)
		}
		w, err := decodeWAL(&decompressor{}, "wal", 42, data)
		if err != nil {
			t.Fatalf("compression %d: %v", c, err)
		}
		if w.epoch != 3 || len(w.rows) != len(rows) {
			t.Fatalf("compression %d: epoch %d, %d rows, want 3 and %d", c, w.epoch, len(w.rows), len(rows))
		}
		for i, r := range w.rows {
			if !bytes.Equal(r.key, rows[i].key) || !bytes.Equal(r.value, rows[i].value) || r.kind != rows[i].kind || r.seq != rows[i].seq {
				t.Fatalf("compression %d: row %d reads %+v, wrote %+v", c, i, r, rows[i])
			}
		}
	}
}
