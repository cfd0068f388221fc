package engine

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rockstream/rockstream/actors/storage"
	"github.com/rockstream/rockstream/console"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/gateway"
)

// Default addresses: pgwire on 6875 so it never clashes with a local
// PostgreSQL on 5432; HTTP (metrics, health) one port above.
const (
	DefaultListen  = "127.0.0.1:6875"
	DefaultHTTP    = "127.0.0.1:6876"
	DefaultStorage = "./data"
)

// ServerOptions configure `rockstream start`.
type ServerOptions struct {
	// Storage is a directory, file:///path, s3://bucket/prefix or memory://.
	Storage string
	Listen  string
	HTTP    string
	Logger  *slog.Logger
	// Out receives the human "ready" line.
	Out io.Writer
	// Ready, when set, is called with the bound pgwire address once the
	// server accepts connections (tests use it to learn the port).
	Ready func(pgAddr, httpAddr string)
	// Gateway carries auth/TLS settings.
	Gateway gateway.Options
	// MemoryBudgetBytes bounds the process's memory: the Go heap limit and
	// every slate budget are derived from it (0: DefaultMemoryBudget).
	MemoryBudgetBytes int64
	// Shards lays a new store out over this many shards (Config.Shards).
	Shards int
	// PartitionTables: Config.PartitionTables (experimental).
	PartitionTables bool
	// ExchangeStages: Config.ExchangeStages (experimental).
	ExchangeStages bool
	// Takeover claims the storage even from a live holder (holder.go).
	Takeover bool
	// Clock is the server's time source (Config.Clock; nil: the wall
	// clock). Tests drive time with it.
	Clock func() time.Time
	// Auth is "trust" (the default: every connection is a superuser; only
	// loopback addresses may be bound) or "password" (SCRAM-SHA-256
	// against the roles in the control DB; roles and GRANTs apply).
	Auth string
	// TLSCertFile and TLSKeyFile, both or neither, turn on TLS for pgwire
	// (sslmode=require).
	TLSCertFile, TLSKeyFile string
	// BootstrapPassword is the password of the superuser role rockstream,
	// used only when that role does not exist yet (first start with
	// --auth=password).
	BootstrapPassword string
}

// Authentication modes of ServerOptions.Auth.
const (
	AuthTrust    = "trust"
	AuthPassword = "password"
)

// superuserReservedConnections is PostgreSQL's default
// superuser_reserved_connections: slots only superusers may take, so an
// administrator can still connect when applications use up the rest.
const superuserReservedConnections = 3

// checkAuthOptions validates the authentication and TLS options and, with
// trust authentication, refuses any address that is not loopback, for
// pgwire and for HTTP alike (RS-2412): /metrics and the SQL port are only
// open to the network when connections authenticate.
func (o *ServerOptions) checkAuthOptions() (*tls.Config, error) {
	switch o.Auth {
	case "":
		o.Auth = AuthTrust
	case AuthTrust, AuthPassword:
	default:
		return nil, errcode.New(errcode.InvalidConfiguration, "--auth must be trust or password, not %q", o.Auth)
	}
	if o.Auth == AuthTrust {
		for _, a := range []struct{ flag, addr string }{{"--listen", o.Listen}, {"--http", o.HTTP}} {
			if a.addr == "" {
				continue
			}
			if !LoopbackAddress(a.addr) {
				return nil, errcode.New(errcode.ListenWithoutAuth, "refusing to listen on %s (%s) without password authentication", a.addr, a.flag)
			}
		}
	}
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		return nil, errcode.New(errcode.InvalidConfiguration, "--tls-cert and --tls-key must be given together")
	}
	if o.TLSCertFile == "" {
		return nil, nil
	}
	cfg, err := gateway.TLSFromFiles(o.TLSCertFile, o.TLSKeyFile)
	if err != nil {
		return nil, errcode.Wrap(errcode.InvalidConfiguration, err, "cannot use the TLS certificate")
	}
	return cfg, nil
}

// metricsAuth guards /metrics with HTTP basic authentication by a role
// that can log in (its password checked against its SCRAM verifier), so
// that --auth=password protects the HTTP port too; /healthz and /readyz
// stay open for probes.
func metricsAuth(engine func() *Engine, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, password, ok := r.BasicAuth()
		if ok {
			if e := engine(); e != nil {
				role, found, err := e.LookupRole(r.Context(), user)
				if err == nil && found && role.Login && gateway.VerifyPassword(role.Verifier, password) {
					next.ServeHTTP(w, r)
					return
				}
			}
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="rockstream", charset="UTF-8"`)
		http.Error(w, "authentication required: use the user name and password of a role that can log in", http.StatusUnauthorized)
	})
}

// LoopbackAddress reports whether every address host:port may bind to is
// a loopback one (an empty host or 0.0.0.0 binds every interface).
func LoopbackAddress(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil || host == "" {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// DefaultMemoryBudget is the embedded server's default memory budget.
const DefaultMemoryBudget = 2 << 30

// memoryBudgetMin is the smallest budget that leaves room for the Go
// runtime, the gateway and two databases' minimal memtables.
const memoryBudgetMin = 64 << 20

// budgets splits a memory budget: the control DB and the shards each get a
// memtable of budget/16, unflushed data up to budget/8 and a block cache of
// budget/16 (together at most half the budget; the shards split their
// share, shardStorage); the Go heap limit is set
// to the budget so the collector works harder before the process outgrows
// it. The rest is for sessions, operator caches and the runtime.
func budgets(budget int64) storage.Options {
	return storage.Options{
		MemtableBytesMax:  budget / 16,
		UnflushedBytesMax: budget / 8,
		BlockCacheBytes:   budget / 16,
	}
}

// serverGCPercent is the server's garbage-collection target (Go's GOGC,
// which wins when set): a collection once the heap grew by twice what the
// last one kept, not once. The memory limit (the budget, SetMemoryLimit)
// still makes the collector work harder before the process outgrows it;
// below it, a COPY's and an epoch step's short-lived rows cost fewer
// collections. Measured (rockstream bench nexmark --events=200000,
// 1 shard, GOGC=100 vs 200 back to back): CPU per event q4 -8%, q9 -7 to
// -20%, q0 unchanged; peak RSS +30% (q9 323 -> 446 MB).
const serverGCPercent = 200

// stepBytesMax is the share of a memory budget one evaluation step's
// deltas may hold: a quarter, beside the half the storage budgets take,
// since the estimate it is checked against (op.RowBytes) leaves out the
// garbage the collector has not reclaimed yet.
func stepBytesMax(budget int64) int64 { return budget / 4 }

// StorageURL turns a --storage value into an object-store URL: a plain path
// means the local filesystem.
func StorageURL(storage string) (string, error) {
	if strings.Contains(storage, "://") {
		return storage, nil
	}
	abs, err := filepath.Abs(storage)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", errcode.Wrap(errcode.StorageUnavailable, err, "cannot create the storage directory %s", abs)
	}
	return "file://" + abs, nil
}

// RedactStorageURL masks the credentials in a storage URL (a password in
// the user info, S3 keys and tokens in the query) so that logs, the ready
// line and errors never print them.
func RedactStorageURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparsable storage URL>"
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	q := u.Query()
	masked := false
	for k := range q {
		switch strings.ToLower(k) {
		case "secret_access_key", "session_token", "password", "token":
			q.Set(k, "xxxxx")
			masked = true
		}
	}
	if masked {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// Serve runs the embedded server until ctx ends (SIGINT/SIGTERM in the
// binary), then shuts down gracefully.
func Serve(ctx context.Context, opts ServerOptions) error {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	started := time.Now()
	// The last log lines are kept for support bundles (/debug/logs).
	logs := &recentLogs{}
	opts.Logger = withRecentLogs(opts.Logger, logs)
	if opts.Out == nil {
		opts.Out = os.Stdout
	}
	tlsConfig, err := opts.checkAuthOptions()
	if err != nil {
		return err
	}
	u, err := StorageURL(opts.Storage)
	if err != nil {
		return err
	}
	shown := RedactStorageURL(u)
	store, err := OpenStore(ctx, u)
	if err != nil {
		return errcode.Wrap(errcode.StorageUnavailable, err, "cannot open storage %s", shown)
	}
	reg := prometheus.NewRegistry()
	metered := newMeteredStore(store, reg)
	store = metered
	// One writer per store: claim it before opening anything in it, so a
	// second server refuses to start without disturbing the first.
	ctx, lose := context.WithCancelCause(ctx)
	defer lose(nil)
	hold, err := acquireHolder(ctx, store, holderOptions{Takeover: opts.Takeover, StorageName: shown, Logger: opts.Logger, OnLost: lose})
	if err != nil {
		return err
	}
	defer hold.Release(context.Background())
	// Health answers while recovering (readyz says 503 until hydrated).
	// NB: the HTTP handlers run on their own goroutines while Open sets
	// the engine, so they read it through an atomic pointer.
	var opened atomic.Pointer[Engine]
	readiness := func() string {
		eng := opened.Load()
		switch {
		case eng == nil:
			return "recovering: catalog or views not hydrated yet"
		case hold.Lost() != nil:
			return hold.Lost().Error()
		}
		if why := eng.Unready(); why != "" {
			return why
		}
		return metered.Failing()
	}
	var httpLn net.Listener
	// NB: set once pgwire listens; the console's handlers read it.
	var pgwireAddr atomic.Pointer[string]
	if opts.HTTP != "" {
		httpLn, err = net.Listen("tcp", opts.HTTP)
		if err != nil {
			return errcode.Wrap(errcode.ListenFailed, err, "cannot listen on %s for HTTP", opts.HTTP)
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
		mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
			if why := readiness(); why != "" {
				http.Error(w, why, http.StatusServiceUnavailable)
				return
			}
			fmt.Fprintln(w, "ready")
		})
		var metrics http.Handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
		if opts.Auth == AuthPassword {
			metrics = metricsAuth(opened.Load, metrics)
		}
		mux.Handle("/metrics", metrics)
		reg.MustRegister(newCollector(opened.Load))
		// The Go runtime's and the process's own numbers (heap, GC,
		// goroutines, CPU, RSS, open files) beside RockStream's.
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		// NB: profiles show query text and data in stacks and heap
		// samples, so they are served on a loopback listener only.
		if ip := net.ParseIP(hostOf(httpLn.Addr().String())); ip != nil && ip.IsLoopback() {
			mux.HandleFunc("/debug/pprof/", pprof.Index)
			mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
			mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
			mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
			mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		}
		// The web console runs SQL as a client of the pgwire listener:
		// as the trusted superuser, so only on a loopback listener (like
		// the profiles), or as the role of the request's basic credentials.
		if consoleServed(httpLn.Addr(), opts.Auth) {
			// The support bundle's server parts: served where the console
			// is, behind the same credentials.
			wrap := func(h http.Handler) http.Handler { return h }
			if opts.Auth == AuthPassword {
				wrap = func(h http.Handler) http.Handler { return metricsAuth(opened.Load, h) }
			}
			debugHandlers(mux, wrap, opts, shown, started, &opened, logs)
			var handler http.Handler = console.Handler(console.Options{PgwireAddr: func() string {
				if p := pgwireAddr.Load(); p != nil {
					return *p
				}
				return ""
			}, Authenticate: opts.Auth == AuthPassword, Logger: opts.Logger})
			if opts.Auth == AuthPassword {
				handler = metricsAuth(opened.Load, handler)
			}
			mux.Handle("/", handler)
		}
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(httpLn) }()
		defer srv.Close()
	}
	if opts.MemoryBudgetBytes == 0 {
		opts.MemoryBudgetBytes = DefaultMemoryBudget
	}
	if opts.MemoryBudgetBytes < memoryBudgetMin {
		return errcode.New(errcode.InvalidConfiguration, "--memory-budget %d is below the minimum of %d bytes", opts.MemoryBudgetBytes, memoryBudgetMin)
	}
	debug.SetMemoryLimit(opts.MemoryBudgetBytes)
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(serverGCPercent)
	}
	opts.Logger.Info("opening storage", "url", shown, "memory_budget_bytes", opts.MemoryBudgetBytes)
	eng, err := Open(ctx, Config{Store: store, Logger: opts.Logger, Storage: budgets(opts.MemoryBudgetBytes), StepBytesMax: stepBytesMax(opts.MemoryBudgetBytes), Shards: opts.Shards, PartitionTables: opts.PartitionTables, ExchangeStages: opts.ExchangeStages, Clock: opts.Clock})
	if err != nil {
		return err
	}
	opened.Store(eng)
	gwOpts := opts.Gateway
	gwOpts.Logger = opts.Logger
	gwOpts.SuperuserReservedConnections = superuserReservedConnections
	if tlsConfig != nil {
		gwOpts.TLS = tlsConfig
	}
	if opts.Auth == AuthPassword {
		if err := eng.EnsureBootstrapRole(ctx, opts.BootstrapPassword); err != nil {
			eng.Close(context.Background())
			return err
		}
		gwOpts.Roles = eng
	}
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		eng.Close(context.Background())
		return errcode.Wrap(errcode.ListenFailed, err, "cannot listen on %s for pgwire", opts.Listen)
	}
	pgAddr := ln.Addr().String()
	pgwireAddr.Store(&pgAddr)
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	httpAddr := ""
	if httpLn != nil {
		httpAddr = httpLn.Addr().String()
	}
	query := ""
	if tlsConfig != nil {
		query = "?sslmode=require"
	}
	fmt.Fprintf(opts.Out, "RockStream ready (storage %s, auth %s). Connect with: psql \"postgres://rockstream@%s:%s/default%s\"\n", shown, opts.Auth, host, port, query)
	if httpAddr != "" {
		fmt.Fprintf(opts.Out, "Metrics and health on http://%s/metrics, /healthz, /readyz\n", httpAddr)
		if consoleServed(httpLn.Addr(), opts.Auth) {
			fmt.Fprintf(opts.Out, "Web console on http://%s/\n", httpAddr)
		}
	}
	if opts.Ready != nil {
		opts.Ready(ln.Addr().String(), httpAddr)
	}
	gw := gateway.NewServer(eng, gwOpts)
	eng.gateway.Store(gw)
	serveErr := gw.Serve(ctx, ln)
	stopping := time.Now()
	opts.Logger.Info("shutting down: connections closed, flushing storage", "reason", context.Cause(ctx))
	closeCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	closeErr := eng.Close(closeCtx)
	if closeErr != nil {
		opts.Logger.Error("shutdown: storage did not close cleanly", "err", closeErr, "took", time.Since(stopping))
	} else {
		opts.Logger.Info("stopped: storage flushed and closed", "took", time.Since(stopping))
	}
	if lost := hold.Lost(); lost != nil {
		return lost
	}
	if serveErr != nil && !errors.Is(serveErr, context.Canceled) && ctx.Err() == nil {
		return serveErr
	}
	return closeErr
}

// hostOf is the host part of a host:port address ("" if it has none).
func hostOf(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	return host
}

// consoleServed reports whether the web console is mounted on the HTTP
// listener at addr: always under password authentication (it asks for a
// role's credentials), and on a loopback listener under trust.
func consoleServed(addr net.Addr, auth string) bool {
	if auth == AuthPassword {
		return true
	}
	ip := net.ParseIP(hostOf(addr.String()))
	return ip != nil && ip.IsLoopback()
}
