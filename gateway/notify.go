package gateway

import (
	"sync"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/errcode"
)

// LISTEN / UNLISTEN / NOTIFY / pg_notify() within one RockStream process,
// with PostgreSQL's semantics:
//
//   - LISTEN and UNLISTEN take effect when the transaction commits;
//   - NOTIFY (and pg_notify, evaluated by the engine through
//     ExecuteRequest.Notify) queues a notification that is delivered when
//     the transaction commits, to every session listening on the channel —
//     the sender included — and dropped if it rolls back (or rolls back to
//     a savepoint set before it); equal channel-and-payload pairs of one
//     transaction are delivered once, in first-notified order;
//   - a session receives notifications as NotificationResponse messages
//     between transactions: at once if it is idle waiting for the client,
//     else just before its next ReadyForQuery outside a transaction block.
//
// Delivery to an idle connection writes to its socket from a short-lived
// goroutine, never from the notifier's, so a slow client cannot stall the
// committing session. The conn goroutine holds ioMu whenever it is not
// blocked reading the client, so the two never write at once.
//
//	notifier commit ──publish──▶ listener.inbox ──(idle?)──▶ go deliver ─▶ socket
//	                                              └─(busy)──▶ drained at its next ReadyForQuery

// notifyChannelMax is PostgreSQL's limit on channel names (NAMEDATALEN-1
// bytes); notifyPayloadMax its payload limit (bytes, exclusive).
const (
	notifyChannelMax = 63
	notifyPayloadMax = 8000
)

// notifyInboxMax bounds the notifications waiting for one session (a
// session inside a long transaction receives none until it ends). Past
// it, new notifications for that session are dropped and logged: the
// notifier's transaction has committed and cannot fail any more.
const notifyInboxMax = 10_000

// notification is one NOTIFY.
type notification struct {
	pid              uint32
	channel, payload string
}

// listenAction is a pending LISTEN (listen true) or UNLISTEN (all: *).
type listenAction struct {
	channel string
	listen  bool
	all     bool
}

// notifyHub is the server's table of listening sessions.
type notifyHub struct {
	mu        sync.Mutex
	listeners map[string]map[*conn]bool
}

// apply registers a committed LISTEN / UNLISTEN of c.
func (h *notifyHub) apply(c *conn, a listenAction) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.listeners == nil {
		h.listeners = map[string]map[*conn]bool{}
	}
	switch {
	case a.all:
		for ch, set := range h.listeners { //lint:maprange deleting from every set
			delete(set, c)
			if len(set) == 0 {
				delete(h.listeners, ch)
			}
		}
	case a.listen:
		set := h.listeners[a.channel]
		if set == nil {
			set = map[*conn]bool{}
			h.listeners[a.channel] = set
		}
		set[c] = true
	default:
		if set := h.listeners[a.channel]; set != nil {
			delete(set, c)
			if len(set) == 0 {
				delete(h.listeners, a.channel)
			}
		}
	}
}

// publish hands committed notifications to every listening session.
func (h *notifyHub) publish(ns []notification) {
	for _, n := range ns {
		h.mu.Lock()
		targets := make([]*conn, 0, len(h.listeners[n.channel]))
		for c := range h.listeners[n.channel] { //lint:maprange each target gets its own copy; order between sessions is not observable
			targets = append(targets, c)
		}
		h.mu.Unlock()
		for _, c := range targets {
			c.receiveNotification(n)
		}
	}
}

// notifyState is a connection's side of LISTEN/NOTIFY.
type notifyState struct {
	// txMu guards the transaction's pending notifications (pg_notify may
	// queue from the engine's evaluation goroutine).
	txMu      sync.Mutex
	txNotify  []notification
	txListens []listenAction

	// inboxMu guards inbox and waiting.
	inboxMu sync.Mutex
	inbox   []notification
	// waiting is set while the conn goroutine waits for the client (and
	// does not hold ioMu).
	waiting bool
	// ioMu is held by the conn goroutine except while it waits for the
	// client; a delivery takes it to write.
	ioMu sync.Mutex
}

// queueNotify is NOTIFY channel, payload in the current transaction.
func (c *conn) queueNotify(channel, payload string) error {
	if channel == "" {
		return errcode.New(errcode.InvalidParameterValue, "channel name cannot be empty")
	}
	if len(channel) > notifyChannelMax {
		return errcode.New(errcode.InvalidParameterValue, "channel name too long")
	}
	if len(payload) >= notifyPayloadMax {
		return errcode.New(errcode.InvalidParameterValue, "payload string too long")
	}
	c.notify.txMu.Lock()
	c.notify.txNotify = append(c.notify.txNotify, notification{pid: c.pid, channel: channel, payload: payload})
	c.notify.txMu.Unlock()
	return nil
}

// queueListen is LISTEN / UNLISTEN in the current transaction.
func (c *conn) queueListen(a listenAction) {
	c.notify.txMu.Lock()
	c.notify.txListens = append(c.notify.txListens, a)
	c.notify.txMu.Unlock()
}

// notifyMark is how far the transaction's LISTEN/NOTIFY lists had grown
// at a savepoint.
type notifyMark struct{ notifies, listens int }

func (c *conn) notifyMark() notifyMark {
	c.notify.txMu.Lock()
	defer c.notify.txMu.Unlock()
	return notifyMark{notifies: len(c.notify.txNotify), listens: len(c.notify.txListens)}
}

// rollbackNotifyTo drops what was queued after m (ROLLBACK TO SAVEPOINT).
func (c *conn) rollbackNotifyTo(m notifyMark) {
	c.notify.txMu.Lock()
	defer c.notify.txMu.Unlock()
	if m.notifies < len(c.notify.txNotify) {
		c.notify.txNotify = c.notify.txNotify[:m.notifies]
	}
	if m.listens < len(c.notify.txListens) {
		c.notify.txListens = c.notify.txListens[:m.listens]
	}
}

// notifyTxEnded applies a committed transaction's LISTEN/UNLISTEN and
// publishes its notifications (each distinct channel and payload once),
// or drops them all when it rolled back.
func (c *conn) notifyTxEnded(committed bool) {
	c.notify.txMu.Lock()
	ns, ls := c.notify.txNotify, c.notify.txListens
	c.notify.txNotify, c.notify.txListens = nil, nil
	c.notify.txMu.Unlock()
	if !committed || (len(ns) == 0 && len(ls) == 0) {
		return
	}
	hub := &c.srv.notifyHub
	for _, a := range ls {
		hub.apply(c, a)
	}
	if len(ns) == 0 {
		return
	}
	type key struct{ channel, payload string }
	seen := make(map[key]bool, len(ns))
	unique := ns[:0]
	for _, n := range ns {
		k := key{n.channel, n.payload}
		if !seen[k] {
			seen[k] = true
			unique = append(unique, n)
		}
	}
	hub.publish(unique)
}

// receiveNotification queues n for c and delivers it at once if c is
// idle waiting for its client.
func (c *conn) receiveNotification(n notification) {
	c.notify.inboxMu.Lock()
	if len(c.notify.inbox) >= notifyInboxMax {
		c.notify.inboxMu.Unlock()
		c.log.Warn("gateway: notification dropped, the session's queue is full", "channel", n.channel, "limit", notifyInboxMax)
		return
	}
	c.notify.inbox = append(c.notify.inbox, n)
	idle := c.notify.waiting
	c.notify.inboxMu.Unlock()
	if idle {
		go c.deliverIdle()
	}
}

// deliverIdle writes c's queued notifications if it is still idle outside
// a transaction block (otherwise its own goroutine will).
func (c *conn) deliverIdle() {
	c.notify.ioMu.Lock()
	defer c.notify.ioMu.Unlock()
	c.notify.inboxMu.Lock()
	defer c.notify.inboxMu.Unlock()
	if !c.notify.waiting || c.state != txIdle || len(c.notify.inbox) == 0 {
		return
	}
	c.sendInboxLocked()
	_ = c.backend.Flush()
}

// sendInboxLocked sends the queued notifications (inboxMu and the right
// to write held).
func (c *conn) sendInboxLocked() {
	for _, n := range c.notify.inbox {
		c.backend.Send(&pgproto3.NotificationResponse{PID: n.pid, Channel: n.channel, Payload: n.payload})
	}
	c.notify.inbox = nil
}

// sendNotifications sends the queued notifications before a ReadyForQuery
// outside a transaction block.
func (c *conn) sendNotifications() {
	if c.state != txIdle {
		return
	}
	c.notify.inboxMu.Lock()
	c.sendInboxLocked()
	c.notify.inboxMu.Unlock()
}

// awaitClient marks c idle before it blocks reading the client, first
// sending what arrived since its ReadyForQuery, and gives up ioMu.
func (c *conn) awaitClient() {
	c.notify.inboxMu.Lock()
	if c.state == txIdle && len(c.notify.inbox) > 0 {
		c.sendInboxLocked()
		_ = c.backend.Flush()
	}
	c.notify.waiting = true
	c.notify.inboxMu.Unlock()
	c.notify.ioMu.Unlock()
}

// clientSpoke takes ioMu back when a message arrived.
func (c *conn) clientSpoke() {
	c.notify.ioMu.Lock()
	c.notify.inboxMu.Lock()
	c.notify.waiting = false
	c.notify.inboxMu.Unlock()
}

// stopListening removes c from every channel (disconnect).
func (c *conn) stopListening() {
	c.srv.notifyHub.apply(c, listenAction{all: true})
}
