package gateway

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// TestCopyFeedChunking: the records COPY text decodes to do not depend on
// how the client split the data into CopyData messages (the decoder
// consumes records from the front of its buffer and compacts once per
// message).
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
	data := []byte(sb.String() + "\\.\nignored\n")
	decode := func(chunks [][]byte) [][]*string {
		d := &copyDecoder{spec: &copySpec{format: copyText, delimiter: '\t', null: `\N`}}
		var out [][]*string
		for i, c := range chunks {
			recs, err := d.feed(c, i == len(chunks)-1)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, recs...)
		}
		return out
	}
	flat := func(recs [][]*string) []string {
		var out []string
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
		return out
	}
	want := flat(decode([][]byte{data}))
	if len(want) != 300 || want[0] != "1|one|<null>" || want[1] != "22|tab\there|x" || want[2] != "||" || want[3] != `333|back\slash|new`+"\n"+"line" {
		t.Fatalf("one-shot decode: %d records, first %q", len(want), want[:4])
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 50; round++ {
		var chunks [][]byte
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 1+rng.IntN(200))
			chunks = append(chunks, append([]byte(nil), rest[:n]...))
			rest = rest[n:]
		}
		if got := flat(decode(chunks)); !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: chunked decode differs", round)
		}
	}
}
