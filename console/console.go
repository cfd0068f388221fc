package console

import (
	"context"
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/errcode"
)

// Options configure the console.
type Options struct {
	// PgwireAddr returns the pgwire listener's address ("" while the
	// server is still starting): the console's sessions connect to it.
	PgwireAddr func() string
	// Authenticate is set under --auth=password: every request must carry
	// HTTP basic credentials of a role that can log in, and its sessions
	// run as that role. Otherwise sessions run as the trusted superuser
	// and only loopback Host headers are served.
	Authenticate bool
	Logger       *slog.Logger
}

// Limits of one console request.
const (
	// statementTimeout bounds one POST of the SQL box: a statement that
	// runs longer is cancelled (the box is for interactive statements;
	// long jobs belong in psql).
	statementTimeout = 60 * time.Second
	// pageTimeout bounds the catalog queries behind one page.
	pageTimeout = 20 * time.Second
	// connectTimeout bounds opening a session on the pgwire listener.
	connectTimeout = 10 * time.Second
	// defaultDatabase is the namespace pages and statements use when the
	// request names none (the one psql's default URL connects to).
	defaultDatabase = "default"
	// trustUser is the user of sessions under trust authentication.
	trustUser = "rockstream"
)

//go:embed assets
var assets embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{"bytes": formatBytes}).ParseFS(assets, "assets/*.html"))

// Handler serves the console: mount it at "/" (it answers / and
// /console/..., and 404 for anything else).
func Handler(opts Options) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	c := &console{opts: opts, subscriptions: make(chan struct{}, subscriptionsMax)}
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded directory exists at build time
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", c.overview)
	mux.HandleFunc("GET /console/view", c.view)
	mux.HandleFunc("POST /console/api/sql", c.sql)
	mux.HandleFunc("GET /console/api/subscribe", c.subscribe)
	mux.HandleFunc("GET /console/part/progress", c.progress)
	mux.HandleFunc("GET /console/part/dataflow", c.dataflow)
	mux.Handle("GET /console/assets/", http.StripPrefix("/console/assets/", http.FileServerFS(static)))
	return c.guard(mux)
}

type console struct {
	opts Options
	// subscriptions holds one token per open SUBSCRIBE stream.
	subscriptions chan struct{}
	// tabs are the SQL boxes' sessions.
	tabs tabSessions
}

// connect opens a session for request r in database db; onNotice, when
// set, receives the session's notices (warnings).
func (c *console) connect(ctx context.Context, r *http.Request, db string, onNotice pgconn.NoticeHandler) (*pgconn.PgConn, error) {
	addr := c.opts.PgwireAddr()
	if addr == "" {
		return nil, errcode.New(errcode.ConsoleUnavailable, "the server is still starting: pgwire is not listening yet")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, errcode.Wrap(errcode.ConsoleUnavailable, err, "bad pgwire address %q", addr)
	}
	// NB: a listener on every interface is reached on loopback.
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if ip.To4() != nil {
			host = "127.0.0.1"
		} else {
			host = "::1"
		}
	}
	// NB: the configuration is built by hand, not parsed from a URL, so
	// that no PG* environment variable or service file of the server's
	// process changes where or as whom the console connects.
	cfg, err := pgconn.ParseConfig("sslmode=disable")
	if err != nil {
		return nil, errcode.Wrap(errcode.ConsoleUnavailable, err, "cannot configure the console's session")
	}
	portNumber, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, errcode.Wrap(errcode.ConsoleUnavailable, err, "bad pgwire port %q", port)
	}
	cfg.Host, cfg.Port, cfg.Database = host, uint16(portNumber), db
	cfg.User, cfg.Password = trustUser, ""
	cfg.TLSConfig, cfg.Fallbacks = nil, nil
	cfg.ConnectTimeout = connectTimeout
	cfg.RuntimeParams = map[string]string{"application_name": "rockstream console"}
	cfg.OnNotice = onNotice
	if c.opts.Authenticate {
		user, password, _ := r.BasicAuth()
		cfg.User, cfg.Password = user, password
	}
	return pgconn.ConnectConfig(ctx, cfg)
}

// database is the namespace a request names (?db=), "default" if none.
func database(r *http.Request) string {
	if db := strings.TrimSpace(r.FormValue("db")); db != "" {
		return db
	}
	return defaultDatabase
}

// formatBytes shows a byte count the way operators read it.
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	value, suffix := float64(n), ""
	for _, s := range []string{"KiB", "MiB", "GiB", "TiB"} {
		value /= unit
		suffix = s
		if value < unit {
			break
		}
	}
	return strconv.FormatFloat(value, 'f', 1, 64) + " " + suffix
}

// render executes a page template, or answers 500 if it fails.
func (c *console) render(w http.ResponseWriter, name string, data any) {
	var buf strings.Builder
	if err := pages.ExecuteTemplate(&buf, name, data); err != nil {
		c.opts.Logger.Error("console: rendering a page failed", "page", name, "err", err)
		http.Error(w, "rendering the page failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(buf.String()))
}
