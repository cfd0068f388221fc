package gateway

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/errcode"
)

// Options configures a Server.
type Options struct {
	// Users maps user name → password for password authentication. When
	// empty, every connection is trusted (and the server refuses a
	// non-loopback listener unless AllowInsecureNonLoopback).
	Users map[string]string
	// Roles, when set, authenticates every connection against the roles it
	// serves (rockstream start --auth=password); it takes precedence over
	// Users. Unknown users and wrong passwords fail alike (28P01).
	Roles RoleSource
	// SuperuserReservedConnections keeps this many of MaxConnections for
	// superusers (PostgreSQL's superuser_reserved_connections); 0: none.
	SuperuserReservedConnections int
	// TrustLoopback trusts loopback (and Unix socket) connections even when
	// Users is set.
	TrustLoopback bool
	// AllowCleartextOverTLS offers cleartext password authentication
	// instead of SCRAM-SHA-256 on TLS connections (never without TLS).
	AllowCleartextOverTLS bool
	// AllowInsecureNonLoopback lets the server listen on a non-loopback
	// address without password authentication.
	AllowInsecureNonLoopback bool
	// TLS, when set, answers SSLRequest with 'S' and upgrades the
	// connection; otherwise SSLRequest is answered 'N'.
	TLS *tls.Config
	// MaxConnections bounds concurrent connections (0 = 1000), counting
	// sockets still in their startup phase. A client over the limit gets
	// 53300 and is disconnected.
	MaxConnections int
	// StartupTimeout bounds the time from accept to the end of
	// authentication (0 = 60 s, PostgreSQL's authentication_timeout); a
	// socket that has not finished by then is closed.
	StartupTimeout time.Duration
	// Logger receives connection, panic and error logs (nil: slog.Default()).
	Logger *slog.Logger
}

const (
	// defaultMaxConnections is Options.MaxConnections' default: enough for
	// pools of many clients, small enough that goroutines and buffers stay
	// bounded.
	defaultMaxConnections = 1000
	// defaultStartupTimeout is Options.StartupTimeout's default,
	// PostgreSQL's authentication_timeout.
	defaultStartupTimeout = 60 * time.Second
	// acceptRetryDelayMin and acceptRetryDelayMax bound the back-off after
	// a temporary accept error (out of file descriptors, a connection
	// aborted before accept): the delay doubles from min to max, as in
	// net/http's Server, so a server out of descriptors neither exits nor
	// spins while it waits for connections to close.
	acceptRetryDelayMin = 5 * time.Millisecond
	acceptRetryDelayMax = time.Second
	// rejectingMax bounds the goroutines answering clients over
	// MaxConnections with 53300; beyond it a new socket is closed at once.
	rejectingMax = 64
	// rejectTimeout bounds the time such a client gets to send its startup
	// packet before it is refused.
	rejectTimeout = 5 * time.Second
)

// Server serves the PostgreSQL wire protocol for one Engine.
type Server struct {
	engine Engine
	opts   Options
	log    *slog.Logger

	mu sync.Mutex
	// conns maps BackendKeyData process ids to live connections, for
	// CancelRequest.
	conns map[uint32]*conn
	wg    sync.WaitGroup
	// notifyHub holds the LISTENing sessions (notify.go).
	notifyHub notifyHub
	// roles authenticates users (nil: every connection is trusted);
	// mockSecret keys the mock verifiers of unknown users (auth.go).
	roles      RoleSource
	mockSecret [32]byte
	// open counts accepted sockets not yet closed (startup phase
	// included); rejecting counts the goroutines refusing clients over
	// the limit.
	open, rejecting int
}

// NewServer checks opts and returns a server.
func NewServer(engine Engine, opts Options) *Server {
	if opts.MaxConnections <= 0 {
		opts.MaxConnections = defaultMaxConnections
	}
	if opts.StartupTimeout <= 0 {
		opts.StartupTimeout = defaultStartupTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Server{engine: engine, opts: opts, log: log, conns: map[uint32]*conn{}, roles: opts.Roles}
	if s.roles == nil && len(opts.Users) > 0 {
		users, err := newUsersSource(opts.Users)
		if err != nil {
			panic(fmt.Sprintf("gateway: crypto/rand failed: %v", err))
		}
		s.roles = users
	}
	if _, err := rand.Read(s.mockSecret[:]); err != nil {
		panic(fmt.Sprintf("gateway: crypto/rand failed: %v", err))
	}
	return s
}

// Serve is NewServer(engine, opts).Serve(ctx, ln).
func Serve(ctx context.Context, ln net.Listener, engine Engine, opts Options) error {
	return NewServer(engine, opts).Serve(ctx, ln)
}

// CheckListenAddr refuses a non-loopback address without password
// authentication unless explicitly allowed (RS-2412). Serve calls it; a
// command line may call it before binding, to fail early.
func (o *Options) CheckListenAddr(addr net.Addr) error {
	if len(o.Users) > 0 || o.Roles != nil || o.AllowInsecureNonLoopback {
		return nil
	}
	if !isLoopback(addr) {
		return errcode.New(errcode.ListenWithoutAuth, "refusing to listen on %s without password authentication", addr)
	}
	return nil
}

func isLoopback(addr net.Addr) bool {
	switch a := addr.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Serve accepts connections on ln until ctx is cancelled, then closes ln and
// every connection and waits for their goroutines. It returns nil after a
// cancellation and the accept error otherwise; temporary accept errors
// (EMFILE and the like) are retried with back-off and logged once per
// burst.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := s.opts.CheckListenAddr(ln.Addr()); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range s.conns { //lint:maprange closing every connection; order cannot leak
			c.netConn.Close()
		}
		s.mu.Unlock()
	})
	defer stop()
	defer s.wg.Wait()
	var retryDelay time.Duration
	failures := 0
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if !temporaryAcceptError(err) {
				return err
			}
			if failures == 0 {
				s.log.Warn("gateway: accept failed; retrying with back-off (is the file descriptor limit too low? see ulimit -n)", "err", err)
			}
			failures++
			retryDelay = min(max(2*retryDelay, acceptRetryDelayMin), acceptRetryDelayMax)
			timer := time.NewTimer(retryDelay)
			select {
			case <-ctx.Done():
				timer.Stop()
				return nil
			case <-timer.C:
			}
			continue
		}
		if failures > 0 {
			s.log.Info("gateway: accepting again", "failed_accepts", failures)
			failures, retryDelay = 0, 0
		}
		s.admit(ctx, nc)
	}
}

// temporaryAcceptError reports accept errors that a later accept may not
// have: running out of file descriptors or buffers, a connection reset
// before it was accepted, timeouts, interruptions.
func temporaryAcceptError(err error) bool {
	if errors.Is(err, net.ErrClosed) {
		return false
	}
	for _, errno := range [...]syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EINTR, syscall.EAGAIN, syscall.EPROTO, syscall.EPERM} {
		if errors.Is(err, errno) {
			return true
		}
	}
	// NB: net.Error's Temporary is deprecated, but it is what accept errors
	// of other listeners (TLS, tests) report.
	var ne net.Error
	return errors.As(err, &ne) && (ne.Timeout() || ne.Temporary())
}

// admit starts serving nc, or refuses it when MaxConnections sockets are
// open already: a socket in its startup phase holds a slot too, so that
// idle sockets cannot pile up unbounded.
func (s *Server) admit(ctx context.Context, nc net.Conn) {
	s.mu.Lock()
	if s.open >= s.opts.MaxConnections {
		if s.rejecting >= rejectingMax {
			s.mu.Unlock()
			nc.Close()
			return
		}
		s.rejecting++
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.reject(nc)
			s.mu.Lock()
			s.rejecting--
			s.mu.Unlock()
		}()
		return
	}
	s.open++
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() {
			s.mu.Lock()
			s.open--
			s.mu.Unlock()
		}()
		s.serveConn(ctx, nc)
	}()
}

// reject answers a client over MaxConnections as PostgreSQL does: after
// its startup packet (so the client reads the error), FATAL 53300. A
// cancel request is still honoured, since it frees a busy session.
func (s *Server) reject(nc net.Conn) {
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(rejectTimeout))
	c := &conn{srv: s, netConn: nc, log: s.log}
	c.backend = pgproto3.NewBackend(nc, nc)
	c.backend.SetMaxBodyLen(messageBytesMax)
	for {
		msg, err := c.backend.ReceiveStartupMessage()
		if err != nil {
			return
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest, *pgproto3.GSSEncRequest:
			if _, err := nc.Write([]byte{'N'}); err != nil {
				return
			}
		case *pgproto3.CancelRequest:
			s.cancel(m.ProcessID, m.SecretKey)
			return
		default:
			c.fatal(errcode.New(errcode.TooManyConnections, "sorry, too many clients already"))
			return
		}
	}
}

// register assigns a unique process id and secret to c; an error (53300)
// when the server is full, or when only the slots reserved for superusers
// are left and c's role is not one.
func (s *Server) register(c *conn, superuser bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.conns) >= s.opts.MaxConnections {
		return errcode.New(errcode.TooManyConnections, "sorry, too many clients already")
	}
	if s.reservedSlotsFull(superuser) {
		return errcode.New(errcode.ReservedConnections, "remaining connection slots are reserved for non-replication superuser connections")
	}
	for {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			panic(fmt.Sprintf("gateway: crypto/rand failed: %v", err))
		}
		pid := binary.BigEndian.Uint32(b[:4]) & 0x7fffffff
		if _, taken := s.conns[pid]; taken || pid == 0 {
			continue
		}
		c.pid = pid
		c.secret = append([]byte(nil), b[4:]...)
		s.conns[pid] = c
		return nil
	}
}

func (s *Server) unregister(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns[c.pid] == c {
		delete(s.conns, c.pid)
	}
}

// cancel handles a CancelRequest: it cancels the running statement of the
// session with that key, if any. PostgreSQL sends no reply either way.
func (s *Server) cancel(pid uint32, secret []byte) {
	s.mu.Lock()
	c := s.conns[pid]
	s.mu.Unlock()
	if c == nil || subtle.ConstantTimeCompare(c.secret, secret) != 1 {
		s.log.Info("gateway: cancel request for unknown session", "pid", pid)
		return
	}
	c.cancelRunning()
}

// TLSFromFiles loads a PEM certificate and key for Options.TLS.
func TLSFromFiles(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("gateway: loading TLS certificate %s and key %s: %w", certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}
