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
	// MaxConnections bounds concurrent connections (0 = 1000). A client
	// over the limit gets 53300 and is disconnected.
	MaxConnections int
	// Logger receives connection, panic and error logs (nil: slog.Default()).
	Logger *slog.Logger
}

// defaultMaxConnections is Options.MaxConnections' default: enough for
// pools of many clients, small enough that goroutines and buffers stay
// bounded.
const defaultMaxConnections = 1000

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
}

// NewServer checks opts and returns a server.
func NewServer(engine Engine, opts Options) *Server {
	if opts.MaxConnections <= 0 {
		opts.MaxConnections = defaultMaxConnections
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
// cancellation and the accept error otherwise.
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
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(ctx, nc)
		}()
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
