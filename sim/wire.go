package sim

import (
	"fmt"

	"github.com/rockstream/rockstream/runtime"
)

// Codec turns messages into bytes and back (actors/wire implements it for
// every RockStream message; sim does not import the actors).
//
// With Options.Codec set, every message that crosses actors — a Send to
// another actor, an Ask from outside, every reply — is encoded when it is
// sent and its receiver gets the decoded copy: the receiver never shares
// memory with the sender, as across a process boundary, and a message the
// codec cannot carry (a func, a pointer to someone's state, an unregistered
// type) fails the run at once. Timers and messages an actor sends itself
// stay in its memory and are not encoded. The real runtime never encodes.
type Codec interface {
	Encode(runtime.Message) ([]byte, error)
	Decode([]byte) (runtime.Message, error)
}

// overWire carries msg through the codec, if there is one.
func (s *Sim) overWire(what string, msg runtime.Message) runtime.Message {
	if s.codec == nil {
		return msg
	}
	b, err := s.codec.Encode(msg)
	if err != nil {
		s.Fail(fmt.Errorf("sim: %s: %T cannot cross the wire: %w", what, msg, err))
		return msg
	}
	out, err := s.codec.Decode(b)
	if err != nil {
		s.Fail(fmt.Errorf("sim: %s: %T does not decode from its own encoding: %w", what, msg, err))
		return msg
	}
	s.stats.Encoded++
	s.stats.EncodedBytes += len(b)
	return out
}
