package sim

import (
	"container/heap"
	"time"

	"github.com/rockstream/rockstream/runtime"
)

// eventKind says what an event does when its time comes.
type eventKind uint8

const (
	// eventArrive: a message crossing the network arrives at an actor's
	// inbox (whatever incarnation of the actor is alive then).
	eventArrive eventKind = iota + 1
	// eventRun: an actor takes the next message from its inbox.
	eventRun
	// eventTimer: a timer fires for one actor instance.
	eventTimer
	// eventCallback: a function scheduled with At.
	eventCallback
	// eventNemesis: the nemesis considers a fault.
	eventNemesis
	// eventRestart: a crashed process restarts.
	eventRestart
)

// event is one entry of the event queue, ordered by (at, seq).
type event struct {
	at   time.Duration
	seq  uint64
	kind eventKind

	to       runtime.ActorID
	from     runtime.ActorID
	msg      runtime.Message
	instance uint64 // eventRun, eventTimer: the actor instance it belongs to
	timer    runtime.TimerID
	process  string
	fn       func()
}

// eventQueue is a min-heap on (at, seq): the sequence number makes the order
// of simultaneous events the order they were scheduled in, never a
// heap-implementation accident.
type eventQueue []*event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return e
}

func (q *eventQueue) push(e *event) { heap.Push(q, e) }
func (q *eventQueue) pop() *event   { return heap.Pop(q).(*event) }
func (q eventQueue) peek() *event   { return q[0] }
