// Package wire is the codec of every message that crosses actors: the
// bytes a message becomes when it leaves its sender's memory (ARCHITECTURE
// "messages are values"; issue 16).
//
// Why here: the registry must name every message type of every actor
// (actors/shard, actors/control, the runtime's own Started/Stopping), so it
// sits above those packages and below everything that moves messages
// between memories: the simulator takes it through sim.Options.Codec (sim
// does not import actors), and the network transport (gRPC, issue D3) will
// encode with the same Codec. The real in-process runtime never encodes:
// a message is a value there already, and copying it would only cost.
//
// Walkthrough:
//
//	c := wire.Standard()                 // every RockStream message type
//	b, err := c.Encode(shard.Commit{...}) // tag "shard.Commit" + its fields
//	m, err := c.Decode(b)                 // a shard.Commit deep-equal to the original
//
// Format (deterministic: the same message is always the same bytes):
//
//	message    = any
//	any        = 0x00                              nil
//	           | 0x01 type-header datum-row        a SQL datum (ivm/types)
//	           | 0x02 error                        an error
//	           | 0x03 name value                   a registered message type
//	value      by the Go type, fields in declaration order:
//	             bool 1 byte; ints zigzag varint; uints uvarint; floats 8 bytes
//	             (IEEE bits); strings and []byte uvarint length + bytes;
//	             slices, maps, pointers: 0x00 nil | 0x01 contents (so nil and
//	             empty stay apart); maps sorted by encoded key; arrays their
//	             elements; interfaces: any
//	types.Row  0x00 nil | 0x01 n, one type header per column, then the
//	             ivm/keyenc row encoding (EncodeRow) of the row, length-prefixed
//	error      0x01 *errcode.Error: code id, SQLSTATE, message, detail, hint,
//	             position, cause (an error or nil)
//	           | 0x02 any other error: its text (decoded as *RemoteError)
//
// Rows reuse ivm/keyenc's compact row encoding (exact numerics, intervals),
// typed by a one-byte header per column derived from the datum's Go type
// (the keyenc encoding is not self-describing).
//
// What may be a message (lint.go, CheckValueType; enforced when a type is
// registered and by messagelint_test.go): exported fields only, no func,
// chan, unsafe.Pointer or uintptr anywhere inside, and pointers only to
// types that are values themselves — never to a type with hidden fields
// (that is shared state: a *control.Snapshot's maps, an actor). Interface
// fields may hold registered messages, errors or datums.
//
// Both sides must run the same build: field order is the schema. A
// versioned schema is the transport's concern when processes of different
// builds meet (rolling upgrades).
//
// Extending: add one line per new message type to Messages (messages.go).
package wire
