package gateway

import (
	"bytes"
	"testing"
)

// BenchmarkCopyDecodeLongField decodes one record with a 1 or 10 MiB field
// arriving in 64 KiB CopyData messages, as psql sends them: the time must
// grow linearly with the field (it grew quadratically before the decoder
// resumed its scan).
func BenchmarkCopyDecodeLongField(b *testing.B) {
	for _, format := range []copyFormat{copyText, copyCSV} {
		name := "text"
		if format == copyCSV {
			name = "csv"
		}
		for _, size := range []int{1 << 20, 10 << 20} {
			data := append(append([]byte("1\t"), bytes.Repeat([]byte("x"), size)...), '\n')
			if format == copyCSV {
				data = append(append([]byte("1,"), bytes.Repeat([]byte("x"), size)...), '\n')
			}
			b.Run(name+"/"+itoa(int64(size>>20))+"MiB", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					d := &copyDecoder{spec: &copySpec{format: format, delimiter: '\t', quote: '"', escape: '"'}}
					if format == copyCSV {
						d.spec.delimiter = ','
					}
					for off := 0; off < len(data); off += 65536 {
						recs, err := d.feed(data[off:min(off+65536, len(data))], false)
						if err != nil {
							b.Fatal(err)
						}
						_ = recs
					}
				}
			})
		}
	}
}
