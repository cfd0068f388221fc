package circuit

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/op"
)

// State format records. A circuit's stored state (operator arrangements,
// view outputs and errors, state statistics) is only readable by a build
// that encodes it the same way and lays the circuit out the same way (op
// ids are node positions). StateFormat describes both; the owner of the
// state stores it in the same write batch as the state it describes and
// compares it with the new build's on every later install (actors/shard
// keeps it in the view's installed marker), rebuilding the view from its
// inputs when they differ instead of misreading the state.
//
//	rockstream.circuit/3 | keys=bucketed/2 | sink=weights.words/2 | 1:source 5 | 2:aggregate<1> aggregate.words/3[ci8] | …
//
// RULE: a change to how sinks, errors or statistics are stored bumps
// sinkFormat (or circuitFormat); a change to the key layout of every
// arrangement bumps arrange.KeyFormat; a change to an operator's state
// bumps that operator's version (op.StateFormat).
const (
	// circuitFormat versions the record itself and the circuit-wide keys
	// (0x06 'S' statistics): 3 added the arrangement key layout
	// (arrange.KeyFormat), when keys began to carry their bucket.
	circuitFormat = "rockstream.circuit/3"
	// sinkFormat versions the view output encoding: rows → one-word
	// kv.TagAddWords weights (2; 1 stored zset-encoded weights).
	sinkFormat = "sink=weights.words/2"
)

// StateFormat returns the circuit's state format record: the record
// version, the sink format, and per node its position, label, inputs and
// the state format of its operator (op.StateFormat), as declared (fusion
// does not change it). It is a function of the build and the plan only,
// so the same build planning the same view gives the same record.
func (c *Circuit) StateFormat() []byte { return c.format }

func (c *Circuit) stateFormat() []byte {
	var b bytes.Buffer
	b.WriteString(circuitFormat)
	b.WriteString(" | ")
	b.WriteString(arrange.KeyFormat)
	b.WriteString(" | ")
	b.WriteString(sinkFormat)
	for i, n := range c.nodes {
		fmt.Fprintf(&b, " | %d:%s", i+1, n.label)
		if len(n.inputs) > 0 {
			b.WriteByte('<')
			for j, in := range n.inputs {
				if j > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "%d", in+1)
			}
			b.WriteByte('>')
		}
		if f := op.StateFormat(n.operator); f != "" {
			b.WriteByte(' ')
			b.WriteString(f)
		}
	}
	return b.Bytes()
}

// FormatDifference describes how a stored state format record differs
// from this build's (for the log line and error that name a rebuilt view):
// the first differing part of the two records.
func FormatDifference(stored, current []byte) string {
	if len(stored) == 0 || !bytes.HasPrefix(stored, []byte("rockstream.circuit/")) {
		return fmt.Sprintf("the state was written before state formats were recorded (record %q), this build writes %s", truncate(string(stored)), circuitFormat)
	}
	s := strings.Split(string(stored), " | ")
	c := strings.Split(string(current), " | ")
	for i := range max(len(s), len(c)) {
		var a, b string
		if i < len(s) {
			a = s[i]
		}
		if i < len(c) {
			b = c[i]
		}
		if a != b {
			return fmt.Sprintf("stored %q, this build %q", truncate(a), truncate(b))
		}
	}
	return "identical records"
}

func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
