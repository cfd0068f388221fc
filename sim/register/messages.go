package register

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/actors/wire"
	"github.com/rockstream/rockstream/internal/assert"
	"github.com/rockstream/rockstream/runtime"
)

// Stamp orders writes: a counter, ties broken by the writer's name, so two
// writers never produce the same stamp.
type Stamp struct {
	Counter uint64
	Writer  string
}

// Less is the total order of stamps.
func (s Stamp) Less(o Stamp) bool {
	if s.Counter != o.Counter {
		return s.Counter < o.Counter
	}
	return s.Writer < o.Writer
}

// queryRequest asks a replica for its stamp and value (phase one).
type queryRequest struct{ Op uint64 }

// queryReply answers a queryRequest.
type queryReply struct {
	Op    uint64
	Stamp Stamp
	Value int
}

// storeRequest asks a replica to adopt (stamp, value) if it is newer
// (phase two: a write, or a read's write-back).
type storeRequest struct {
	Op    uint64
	Stamp Stamp
	Value int
}

// storeAck confirms that the replica holds (stamp, value) or newer,
// durably (unless the replica is the buggy AckBeforeDurable variant).
type storeAck struct{ Op uint64 }

// Timer messages.
type (
	loadTick    struct{}
	persistTick struct{}
	retryTick   struct {
		Op    uint64
		Phase int
	}
	nextOpTick  struct{}
	opDeadline  struct{ Op uint64 }
	getState    struct{}
	stateResult struct {
		Stamp Stamp
		Value int
	}
)

// codec carries the messages between clients and replicas (timers stay in
// their actor).
//
//lint:immutable built once from a fixed list; a Codec is never changed.
var codec = mustCodec(queryRequest{}, queryReply{}, storeRequest{}, storeAck{}, getState{}, stateResult{}, runtime.Started{}, runtime.Stopping{})

func mustCodec(samples ...runtime.Message) *wire.Codec {
	c, err := wire.NewCodec(samples...)
	// INVARIANT: the register's messages are values.
	assert.NoError(err, "register message codec")
	return c
}

// encodeState is the durable form of a replica's state.
func encodeState(stamp Stamp, value int) []byte {
	assert.That(!strings.Contains(stamp.Writer, "|"), "writer name %q contains the separator", stamp.Writer)
	return []byte(fmt.Sprintf("%d|%s|%d", stamp.Counter, stamp.Writer, value))
}

// decodeState parses encodeState's output; corruption is an assertion
// (paired with the assertion in encodeState, STYLE.md 9).
func decodeState(data []byte) (Stamp, int) {
	parts := strings.Split(string(data), "|")
	assert.Equal(len(parts), 3, "fields of a durable register state")
	counter, err := strconv.ParseUint(parts[0], 10, 64)
	assert.NoError(err, "durable register counter")
	value, err := strconv.Atoi(parts[2])
	assert.NoError(err, "durable register value")
	return Stamp{Counter: counter, Writer: parts[1]}, value
}
