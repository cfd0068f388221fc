package engine

import (
	"encoding/json"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rockstream/rockstream/internal/version"
)

// debugConfig is /debug/config: the server's effective settings and
// process, for support bundles. Secrets are left out: the storage URL is
// redacted and the bootstrap password and TLS key are not named.
type debugConfig struct {
	Version           string
	GoVersion         string
	Module            string `json:",omitempty"`
	Revision          string `json:",omitempty"`
	PID               int
	Host              string
	Started           time.Time
	GOMAXPROCS        int
	NumCPU            int
	Storage           string
	Listen            string
	HTTP              string
	Auth              string
	TLS               bool
	MemoryBudgetBytes int64
	ShardsRequested   int
	// Shards is the store's layout (it keeps the one it was created with).
	Shards   int
	Takeover bool
	Ready    bool
}

// debugHandlers serves /debug/config and /debug/logs (the last lines of
// the server's log, as text), which `rockstream debug bundle` collects.
func debugHandlers(mux *http.ServeMux, wrap func(http.Handler) http.Handler, opts ServerOptions, shownStorage string, started time.Time, opened *atomic.Pointer[Engine], logs *recentLogs) {
	mux.Handle("/debug/config", wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		host, _ := os.Hostname()
		c := debugConfig{
			Version: version.Server, GoVersion: runtime.Version(), PID: os.Getpid(), Host: host, Started: started.UTC(),
			GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU(),
			Storage: shownStorage, Listen: opts.Listen, HTTP: opts.HTTP, Auth: opts.Auth, TLS: opts.TLSCertFile != "",
			MemoryBudgetBytes: opts.MemoryBudgetBytes, ShardsRequested: opts.Shards, Takeover: opts.Takeover,
		}
		if c.MemoryBudgetBytes == 0 {
			c.MemoryBudgetBytes = DefaultMemoryBudget
		}
		if c.Auth == "" {
			c.Auth = AuthTrust
		}
		if info, ok := debug.ReadBuildInfo(); ok {
			c.Module = info.Main.Path + " " + info.Main.Version
			for _, s := range info.Settings {
				if s.Key == "vcs.revision" {
					c.Revision = s.Value
				}
			}
		}
		if e := opened.Load(); e != nil {
			c.Shards = len(e.router.Shards())
			c.Ready = e.ready.Load()
		}
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(c)
	})))
	mux.Handle("/debug/logs", wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		lines := logs.Lines()
		if len(lines) > 0 {
			_, _ = w.Write([]byte(strings.Join(lines, "\n") + "\n"))
		}
	})))
}
