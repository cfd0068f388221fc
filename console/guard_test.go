package console

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestGuard checks the requests a browser makes for another site are
// refused before any session is opened.
func TestGuard(t *testing.T) {
	trust := Handler(Options{PgwireAddr: func() string { return "" }})
	authenticated := Handler(Options{PgwireAddr: func() string { return "" }, Authenticate: true})
	json := map[string]string{"Content-Type": "application/json"}
	for _, tc := range []struct {
		name    string
		handler http.Handler
		method  string
		host    string
		path    string
		headers map[string]string
		status  int
		body    string
	}{
		{"rebound host name", trust, "GET", "evil.example:6876", "/", nil, 403, "RS-2491"},
		{"rebound host on the API", trust, "POST", "evil.example", "/console/api/sql", json, 403, "RS-2491"},
		{"other origin", trust, "POST", "127.0.0.1:6876", "/console/api/sql", map[string]string{"Content-Type": "application/json", "Origin": "http://evil.example"}, 403, "RS-2491"},
		{"cross-site fetch", authenticated, "POST", "db.example:6876", "/console/api/sql", map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}, 403, "RS-2491"},
		{"form post", trust, "POST", "localhost:6876", "/console/api/sql", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, "RS-2492"},
		{"same origin, server starting", trust, "POST", "127.0.0.1:6876", "/console/api/sql", map[string]string{"Content-Type": "application/json", "Origin": "http://127.0.0.1:6876"}, 200, "RS-2490"},
		{"public host with authentication", authenticated, "GET", "db.example:6876", "/console/assets/console.js", nil, 200, "server-sent events"},
		{"progress for another site", trust, "GET", "127.0.0.1:6876", "/console/part/progress", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, "RS-2491"},
		{"dataflow for another origin", authenticated, "GET", "db.example:6876", "/console/part/dataflow?view=v", map[string]string{"Origin": "http://evil.example"}, 403, "RS-2491"},
		{"progress, server starting", trust, "GET", "127.0.0.1:6876", "/console/part/progress", map[string]string{"Sec-Fetch-Site": "same-origin"}, 200, "RS-2490"},
		{"unknown path", trust, "GET", "[::1]:6876", "/nope", nil, 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := strings.NewReader(`{"sql": "SELECT 1"}`)
			r := httptest.NewRequest(tc.method, "http://"+tc.host+tc.path, body)
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			tc.handler.ServeHTTP(w, r)
			if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.body) {
				t.Fatalf("%s %s (Host %s): got %d %q, want %d containing %q", tc.method, tc.path, tc.host, w.Code, w.Body.String(), tc.status, tc.body)
			}
		})
	}
}

func TestFirstWord(t *testing.T) {
	for sql, want := range map[string]string{
		"SELECT 1":                           "select",
		"  -- note\n  /* c */ (SUBSCRIBE v)": "subscribe",
		"copy t from stdin":                  "copy",
		"/* unterminated":                    "",
		"\tInsert_x":                         "insert_x",
	} {
		if got := firstWord(sql); got != want {
			t.Errorf("firstWord(%q) = %q, want %q", sql, got, want)
		}
	}
}
