package console

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/rockstream/rockstream/errcode"
)

// guard refuses requests a browser makes on behalf of another site.
//
// Under trust authentication anyone who can reach the port is a superuser,
// which is acceptable only because the listener is loopback: a page of
// another site, open in a browser on this machine, must not be able to use
// that. So (1) the Host header must name a loopback address, which defeats
// DNS rebinding (a hostile name resolving to 127.0.0.1 keeps its own name
// in Host); and (2) statements, streams and the parts a page reloads
// (progress, dataflow) are refused when the browser says the request
// comes from another origin (Origin, Sec-Fetch-Site), and the SQL endpoint
// only takes application/json, which a cross-site form cannot send
// without a CORS preflight the console never grants.
// Under password authentication (1) is dropped (the port may be public);
// (2) still applies, since a browser replays cached basic credentials.
func (c *console) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !c.opts.Authenticate && !loopbackHost(r.Host) {
			refuse(w, r, http.StatusForbidden, errcode.New(errcode.ConsoleCrossOrigin,
				"the console answers only requests to a loopback address under trust authentication, not to host %q", r.Host))
			return
		}
		if (strings.HasPrefix(r.URL.Path, "/console/api/") || strings.HasPrefix(r.URL.Path, "/console/part/")) && crossOrigin(r) {
			refuse(w, r, http.StatusForbidden, errcode.New(errcode.ConsoleCrossOrigin,
				"refusing a request from another origin (%s)", r.Header.Get("Origin")))
			return
		}
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
		next.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether a Host header names a loopback address.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// crossOrigin reports whether the browser marked r as coming from a page
// of another origin. Clients that are not browsers send neither header.
func crossOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		return true
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	u, err := url.Parse(origin)
	return err != nil || !strings.EqualFold(u.Host, r.Host)
}

// refuse answers an error as JSON for the API and as text for pages.
func refuse(w http.ResponseWriter, r *http.Request, status int, err *errcode.Error) {
	if strings.HasPrefix(r.URL.Path, "/console/api/") {
		writeJSON(w, status, sqlResponse{Error: describeError(err)})
		return
	}
	http.Error(w, err.Error()+"\n"+err.NextSteps(), status)
}
