package real

import (
	"context"
	"sync"

	"github.com/rockstream/rockstream/runtime"
)

// Mailbox limits (STYLE.md 10).
const (
	// MailboxMessagesMaxDefault is the soft bound of one actor's mailbox:
	// callers outside the actor system (Ask, Tell) wait while a mailbox holds
	// this many messages. It is large enough to absorb a burst of one epoch's
	// messages and small enough that a stalled actor stops its producers
	// within milliseconds.
	MailboxMessagesMaxDefault = 1024
	// MailboxOverflowMessagesMaxDefault is how far past the soft bound sends
	// from inside actors may go. Actors never wait on another mailbox (a
	// cycle of actors waiting on each other would deadlock); beyond this
	// hard bound a send from an actor is dropped and counted, which the
	// at-most-once contract of runtime.Context.Send allows.
	MailboxOverflowMessagesMaxDefault = 4 * MailboxMessagesMaxDefault
)

// envelopeKind says how the actor loop treats an envelope.
type envelopeKind uint8

const (
	envelopeMessage envelopeKind = iota
	envelopeTimer
	envelopeStop
)

// envelope is one queued delivery.
type envelope struct {
	kind  envelopeKind
	from  runtime.ActorID
	msg   runtime.Message
	reply *askWaiter // set for Ask; nil otherwise
	timer runtime.TimerID
}

// mailbox is a FIFO queue with a soft bound (external senders wait) and a
// hard bound (actor senders drop). Safe for concurrent use.
//
// INVARIANT: len(queue) <= softMax + overflowMax, except for the single stop
// envelope, which is always accepted.
type mailbox struct {
	mu          sync.Mutex
	queue       []envelope
	softMax     int
	overflowMax int
	closed      bool
	// notEmpty has capacity 1: a token means "look at the queue again".
	notEmpty chan struct{}
	// spaceFreed is closed (and replaced on demand) when a message is taken
	// from a mailbox at or above its soft bound, waking waiting senders.
	spaceFreed chan struct{}
}

func newMailbox(softMax, overflowMax int) *mailbox {
	return &mailbox{softMax: softMax, overflowMax: overflowMax, notEmpty: make(chan struct{}, 1)}
}

func (m *mailbox) signal() {
	select {
	case m.notEmpty <- struct{}{}:
	default:
	}
}

// pushWait appends e, waiting while the mailbox is at its soft bound. It
// returns runtime.ErrActorGone if the mailbox closes, or goctx's error.
func (m *mailbox) pushWait(goctx context.Context, e envelope) error {
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return runtime.ErrActorGone
		}
		if len(m.queue) < m.softMax {
			m.queue = append(m.queue, e)
			m.mu.Unlock()
			m.signal()
			return nil
		}
		if m.spaceFreed == nil {
			m.spaceFreed = make(chan struct{})
		}
		wait := m.spaceFreed
		m.mu.Unlock()
		select {
		case <-wait:
		case <-goctx.Done():
			return goctx.Err()
		}
	}
}

// pushNoWait appends e unless the mailbox is past its hard bound (or
// closed); it never blocks. force ignores the bound (stop envelopes).
func (m *mailbox) pushNoWait(e envelope, force bool) (accepted bool) {
	m.mu.Lock()
	if m.closed || (!force && len(m.queue) >= m.softMax+m.overflowMax) {
		m.mu.Unlock()
		return false
	}
	m.queue = append(m.queue, e)
	m.mu.Unlock()
	m.signal()
	return true
}

// pop waits for the next envelope. It returns false once the mailbox is
// closed.
func (m *mailbox) pop() (envelope, bool) {
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return envelope{}, false
		}
		if len(m.queue) > 0 {
			e := m.queue[0]
			m.queue[0] = envelope{}
			m.queue = m.queue[1:]
			if m.spaceFreed != nil && len(m.queue) < m.softMax {
				close(m.spaceFreed)
				m.spaceFreed = nil
			}
			m.mu.Unlock()
			return e, true
		}
		m.mu.Unlock()
		<-m.notEmpty
	}
}

// close rejects further pushes, wakes waiters, and returns the envelopes
// that were never delivered.
func (m *mailbox) close() []envelope {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	rest := m.queue
	m.queue = nil
	if m.spaceFreed != nil {
		close(m.spaceFreed)
		m.spaceFreed = nil
	}
	m.signal()
	return rest
}

func (m *mailbox) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.queue)
}
