package gateway

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// TestCopyFeedChunking: the records COPY text decodes to do not depend on
// how the client split the data into CopyData messages (the decoder
// consumes records from the front of its buffer, compacts once per
// message, and resumes its search for a record's end where the previous
// message left it).
func TestCopyFeedChunking(t *testing.T) {
	var sb strings.Builder
	for i := 0; i < 300; i++ {
		switch i % 5 {
		case 0:
			sb.WriteString("1\tone\t\\N\n")
		case 1:
			sb.WriteString("22\ttab\\there\tx\r\n")
		case 2:
			sb.WriteString("\t\t\n")
		case 3:
			sb.WriteString("333\tback\\\\slash\tnew\\nline\n")
		default:
			sb.WriteString(strings.Repeat("w", i) + "\tend\t\\N\n")
		}
	}
	want := checkChunking(t, copySpec{format: copyText, delimiter: '\t', null: `\N`}, []byte(sb.String()+"\\.\nignored\n"))
	if len(want) != 300 || want[0] != "1|one|<null>" || want[1] != "22|tab\there|x" || want[2] != "||" || want[3] != `333|back\slash|new`+"\n"+"line" {
		t.Fatalf("one-shot decode: %d records, first %q", len(want), want[:4])
	}
}

// TestCopyFeedUnterminated: a last line without its newline is a record
// (its text is not part of the copy of the complete lines the others are
// cut from), however the data is split.
func TestCopyFeedUnterminated(t *testing.T) {
	want := checkChunking(t, copySpec{format: copyText, delimiter: '\t', null: `\N`}, []byte("1\ta\n22\tbb\r\n333\tccc"))
	if !reflect.DeepEqual(want, []string{"1|a", "22|bb", "333|ccc"}) {
		t.Fatalf("records %q", want)
	}
}

// TestCopyFeedChunkingCSV: the same for CSV, where a record's end depends
// on quote state carried across messages (quoted newlines, doubled quotes,
// and an ESCAPE other than the quote that may end a message).
func TestCopyFeedChunkingCSV(t *testing.T) {
	var sb strings.Builder
	for i := 0; i < 200; i++ {
		switch i % 4 {
		case 0:
			sb.WriteString("1,\"multi\nline\",\n")
		case 1:
			sb.WriteString("2,\"say \\\"hi\\\" \\\\ there\",x\n")
		case 2:
			sb.WriteString("3,\"" + strings.Repeat("q,", i) + "\",\"\"\n")
		default:
			sb.WriteString(strings.Repeat("w", i) + ",plain,\n")
		}
	}
	spec := copySpec{format: copyCSV, delimiter: ',', quote: '"', escape: '\\'}
	want := checkChunking(t, spec, []byte(sb.String()))
	if len(want) != 200 || want[0] != "1|multi\nline|<null>" || want[1] != `2|say "hi" \ there|x` {
		t.Fatalf("one-shot decode: %d records, first %q", len(want), want[:2])
	}
}

// checkChunking decodes data in one piece and in random splits (down to
// one byte), requires the same records every time, and returns them
// flattened ("a|b|<null>").
func checkChunking(t *testing.T, spec copySpec, data []byte) []string {
	t.Helper()
	decode := func(chunks [][]byte) []string {
		s := spec
		d := &copyDecoder{spec: &s}
		var out []string
		for i, c := range chunks {
			recs, err := d.feed(c, i == len(chunks)-1)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				var f []string
				for _, v := range r {
					if v == nil {
						f = append(f, "<null>")
					} else {
						f = append(f, *v)
					}
				}
				out = append(out, strings.Join(f, "|"))
			}
		}
		return out
	}
	want := decode([][]byte{data})
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 50; round++ {
		maxChunk := []int{1, 3, 200}[round%3]
		var chunks [][]byte
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 1+rng.IntN(maxChunk))
			chunks = append(chunks, append([]byte(nil), rest[:n]...))
			rest = rest[n:]
		}
		if got := decode(chunks); !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d (chunks ≤ %d bytes): chunked decode differs", round, maxChunk)
		}
	}
	return want
}

// TestCopyFeedLinearWork: a record much longer than a CopyData message costs
// the decoder work linear in its size. The decoder counts the bytes it
// examines looking for a record's end and the bytes it moves to the front
// of its buffer; rescanning or moving the incomplete record on every
// message (the quadratic form) makes that count grow with size²/message.
func TestCopyFeedLinearWork(t *testing.T) {
	const msg = 64 << 10
	for _, tc := range []struct {
		name string
		spec copySpec
		rec  string
	}{
		{"text", copySpec{format: copyText, delimiter: '\t', null: `\N`}, "1\t" + strings.Repeat("x", 4<<20) + "\n"},
		{"text-escapes", copySpec{format: copyText, delimiter: '\t', null: `\N`}, "2\t" + strings.Repeat(`ab\n`, 1<<20) + "\n"},
		{"csv", copySpec{format: copyCSV, delimiter: ',', quote: '"', escape: '"'}, "3,\"" + strings.Repeat("a\"\"b\n", 1<<20) + "\"\n"},
		{"csv-escape", copySpec{format: copyCSV, delimiter: ',', quote: '"', escape: '\\'}, "4,\"" + strings.Repeat(`a\"\\`, 1<<20) + "\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Short lines first, so that the long record starts mid-message.
			data := []byte(strings.Repeat("0,x\n", 1000) + tc.rec + strings.Repeat("5,y\n", 1000))
			if tc.spec.format == copyText {
				data = []byte(strings.Repeat("0\tx\n", 1000) + tc.rec + strings.Repeat("5\ty\n", 1000))
			}
			spec := tc.spec
			d := &copyDecoder{spec: &spec}
			n := 0
			for off := 0; off < len(data); off += msg {
				end := min(off+msg, len(data))
				recs, err := d.feed(data[off:end], end == len(data))
				if err != nil {
					t.Fatal(err)
				}
				n += len(recs)
			}
			if n != 2001 {
				t.Fatalf("decoded %d records, want 2001", n)
			}
			if limit := 2 * int64(len(data)); d.work > limit {
				t.Fatalf("decoding %d bytes in %d-byte messages examined or moved %d bytes (limit %d): not linear in the record's size", len(data), msg, d.work, limit)
			}
		})
	}
}
