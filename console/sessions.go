package console

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// The SQL box of a browser tab keeps one session across its statements,
// so SET, BEGIN ... COMMIT over several runs and temporary state behave as
// at a psql prompt. The page holds the session's token (in sessionStorage:
// per tab, gone with it) and sends it with every statement.
const (
	// tabSessionsMax bounds the sessions the SQL boxes hold open at once
	// (each is a connection slot); opening one more closes the least
	// recently used.
	tabSessionsMax = 8
	// tabSessionIdleTimeout closes a session nobody used for this long,
	// rolling back its open transaction, so a tab left open, or closed
	// inside BEGIN, does not hold a connection and its locks forever.
	tabSessionIdleTimeout = 10 * time.Minute
)

// tabSession is one SQL box's session.
type tabSession struct {
	// running is held while a statement runs: one at a time per session.
	running sync.Mutex
	conn    *pgconn.PgConn
	// user and db are what the session was opened for: a request with
	// other credentials or another database never gets it.
	user, db string
	// notices collects the running statement's notices (OnNotice runs on
	// the goroutine that reads the statement's result).
	notices []sqlError
	// lastUsed and idle are guarded by tabSessions.mu.
	lastUsed time.Time
	idle     *time.Timer
}

// tabSessions are the open SQL box sessions by token.
type tabSessions struct {
	mu      sync.Mutex
	byToken map[string]*tabSession
}

// take returns the session of token for r and db, opened anew (with a new
// token) when there is none, it belongs to other credentials, or its
// connection is gone. The caller holds its running lock until done.
func (c *console) take(ctx context.Context, r *http.Request, token, db string) (*tabSession, string, bool, error) {
	user := trustUser
	if c.opts.Authenticate {
		user, _, _ = r.BasicAuth()
	}
	pool := &c.tabs
	pool.mu.Lock()
	s, ok := pool.byToken[token]
	if ok && (s.user != user || s.db != db) {
		ok = false
	}
	if ok {
		s.lastUsed = time.Now()
		s.idle.Reset(tabSessionIdleTimeout)
	}
	pool.mu.Unlock()
	if ok {
		s.running.Lock()
		if !s.conn.IsClosed() {
			return s, token, false, nil
		}
		s.running.Unlock()
		c.drop(token, s)
	}
	s = &tabSession{user: user, db: db}
	conn, err := c.connect(ctx, r, db, func(_ *pgconn.PgConn, n *pgconn.Notice) {
		s.notices = append(s.notices, *describeError((*pgconn.PgError)(n)))
	})
	if err != nil {
		return nil, "", false, err
	}
	s.conn = conn
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		conn.Close(context.Background())
		return nil, "", false, err
	}
	token = hex.EncodeToString(raw[:])
	s.running.Lock()
	pool.mu.Lock()
	if pool.byToken == nil {
		pool.byToken = map[string]*tabSession{}
	}
	if len(pool.byToken) >= tabSessionsMax {
		oldestToken, oldest := "", (*tabSession)(nil)
		for t, other := range pool.byToken { //lint:maprange the least recently used is unique up to ties, and any of those may go
			if oldest == nil || other.lastUsed.Before(oldest.lastUsed) {
				oldestToken, oldest = t, other
			}
		}
		delete(pool.byToken, oldestToken)
		oldest.idle.Stop()
		go closeWhenDone(oldest)
	}
	s.lastUsed = time.Now()
	s.idle = time.AfterFunc(tabSessionIdleTimeout, func() { c.expire(token, s) })
	pool.byToken[token] = s
	pool.mu.Unlock()
	return s, token, true, nil
}

// expire closes s if it has been idle for the timeout (a use since reset
// the timer, but a timer that fired already cannot be called back).
func (c *console) expire(token string, s *tabSession) {
	c.tabs.mu.Lock()
	if time.Since(s.lastUsed) < tabSessionIdleTimeout || c.tabs.byToken[token] != s {
		c.tabs.mu.Unlock()
		return
	}
	delete(c.tabs.byToken, token)
	c.tabs.mu.Unlock()
	closeWhenDone(s)
}

// drop forgets s (its connection is gone).
func (c *console) drop(token string, s *tabSession) {
	c.tabs.mu.Lock()
	if c.tabs.byToken[token] == s {
		delete(c.tabs.byToken, token)
		s.idle.Stop()
	}
	c.tabs.mu.Unlock()
	closeWhenDone(s)
}

// closeWhenDone closes s's connection once its running statement, if any,
// has finished.
func closeWhenDone(s *tabSession) {
	s.running.Lock()
	defer s.running.Unlock()
	s.conn.Close(context.Background())
}
