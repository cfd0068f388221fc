package gateway

import (
	"testing"

	"pgregory.net/rapid"
)

// TestCopySplitTextMatchesByteWalk: splitText (which jumps to a field's
// delimiter when the field has no backslash) splits every line as a walk
// byte by byte does, escaped delimiters, NULL markers and empty fields
// included.
func TestCopySplitTextMatchesByteWalk(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		line := rapid.SliceOfN(rapid.SampledFrom([]byte{'a', 'b', '\t', '\\', 'N', 'n', '0'}), 0, 24).Draw(t, "line")
		d := &copyDecoder{spec: &copySpec{format: copyText, delimiter: '\t', null: `\N`}}
		got, gotErr := d.splitText(string(line), line)
		want, wantErr := splitByteWalk(d, string(line))
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("%q: error %v, want %v", line, gotErr, wantErr)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d fields, want %d", line, len(got), len(want))
		}
		for i := range got {
			if (got[i] == nil) != (want[i] == nil) || (got[i] != nil && *got[i] != *want[i]) {
				t.Fatalf("%q: field %d differs", line, i)
			}
		}
	})
}

// splitByteWalk is the text format's split walked byte by byte.
func splitByteWalk(d *copyDecoder, text string) ([]*string, error) {
	var fields []*string
	start := 0
	for i := 0; i <= len(text); i++ {
		if i < len(text) && text[i] == '\\' {
			i++
			continue
		}
		if i == len(text) || text[i] == d.spec.delimiter {
			raw := text[start:min(i, len(text))]
			if raw == d.spec.null {
				fields = append(fields, nil)
			} else {
				v, err := unescapeCopyText(raw)
				if err != nil {
					return nil, err
				}
				fields = append(fields, &v)
			}
			start = i + 1
		}
	}
	return fields, nil
}
