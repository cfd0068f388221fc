package types

import "testing"

// TestJSONValueRoundTrip: parsing canonical jsonb text and rendering it
// again gives the same text, and the hash text reduces only numbers.
func TestJSONValueRoundTrip(t *testing.T) {
	cases := []struct{ in, canonical, hash string }{
		{`{"b": 1,  "a":[1.50, 1e2, -0], "aa": {"z":null,"y":true}}`, `{"a": [1.50, 100, 0], "b": 1, "aa": {"y": true, "z": null}}`, `{"a": [1.5, 100, 0], "b": 1, "aa": {"y": true, "z": null}}`},
		{`"a\"\\\n\u0001é\ud83d\ude00"`, `"a\"\\\n\u0001é😀"`, `"a\"\\\n\u0001é😀"`},
		{`[]`, `[]`, `[]`},
		{`{"a":1,"a":2.0}`, `{"a": 2.0}`, `{"a": 2}`},
	}
	for _, c := range cases {
		d, err := ParseJSONB(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if d.(string) != c.canonical {
			t.Errorf("ParseJSONB(%s) = %s, want %s", c.in, d, c.canonical)
		}
		v, err := ParseJSONValue(d.(string))
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		if got := v.JSONBText(); got != c.canonical {
			t.Errorf("round trip of %s = %s", c.canonical, got)
		}
		if got := JSONBHashText(c.canonical); got != c.hash {
			t.Errorf("JSONBHashText(%s) = %s, want %s", c.canonical, got, c.hash)
		}
	}
	for _, bad := range []string{`{"a" 1}`, `[1,]`, `nul`, `"x`, `[1] x`} {
		if _, err := ParseJSONValue(bad); err == nil {
			t.Errorf("ParseJSONValue(%s) succeeded", bad)
		}
	}
}
