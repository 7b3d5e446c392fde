package edge

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/apitoken"
	"github.com/trainingco/catalogue/config"
)

// generatedID is the form of an id the edge makes: the process's random prefix and a counter.
var generatedID = regexp.MustCompile(`^[0-9a-f]{12}-[0-9]+$`)

// TestRequestID: a sane X-Request-ID from the client is kept, anything else is replaced by a
// fresh id, and every response carries it, errors included.
func TestRequestID(t *testing.T) {
	env := newAuthEnv(t, nil)
	long := strings.Repeat("x", 65)
	tests := []struct {
		name   string
		target string
		sent   []string
		keep   bool
	}{
		{"sane id kept", course1, []string{"abc-123"}, true},
		{"sane id kept on a 401", "/api/v2/public/courses", []string{"req.42"}, true},
		{"sane id kept on a 404", "/nope", []string{"req:43"}, true},
		{"no id", course1, nil, false},
		{"too long", course1, []string{long}, false},
		{"bad characters", course1, []string{"a b"}, false},
		{"two ids", course1, []string{"one", "two"}, false},
		{"an API token", course1, []string{env.token}, false},
		{"the first part of a JWT", course1, []string{"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"}, false},
		{"the claims of a JWT", course1, []string{"eyJzdWIiOiI0MiJ9"}, false},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		r := httptest.NewRequest(http.MethodGet, tt.target, nil)
		r.Header.Set("Authorization", "Bearer "+env.token)
		for _, id := range tt.sent {
			r.Header.Add("X-Request-ID", id)
		}
		rec := httptest.NewRecorder()
		env.s.Handler().ServeHTTP(rec, r)
		got := rec.Result().Header.Values("X-Request-ID")
		if len(got) != 1 {
			t.Errorf("%s: X-Request-ID %q, want exactly one", tt.name, got)
			continue
		}
		switch {
		case tt.keep && got[0] != tt.sent[0]:
			t.Errorf("%s: X-Request-ID %q, want %q", tt.name, got[0], tt.sent[0])
		case !tt.keep && !generatedID.MatchString(got[0]):
			t.Errorf("%s: X-Request-ID %q, want a generated id", tt.name, got[0])
		case !tt.keep && seen[got[0]]:
			t.Errorf("%s: X-Request-ID %q was already given to another request", tt.name, got[0])
		}
		seen[got[0]] = true
	}
}

// TestRequestLogLine: one JSON line per request with the route pattern, the path without
// its query string, the status, body size, duration, request id and client address.
func TestRequestLogLine(t *testing.T) {
	env := newAuthEnv(t, nil)
	tests := []struct {
		r    req
		want map[string]any
	}{
		{
			req{target: course1 + "?search=private+text", auth: env.bearer(), remote: "198.51.100.7:4000",
				header: map[string]string{"X-Request-ID": "line-1"}},
			map[string]any{"level": "INFO", "msg": "request", "method": "GET", "route": "/api/v2/public/course/:id",
				"path": course1, "status": 200.0, "bytes": 23.0, "request_id": "line-1", "remote_addr": "198.51.100.7"},
		},
		{
			req{target: "/api/v2/public/courses", remote: "[2001:db8::1]:443", header: map[string]string{"X-Request-ID": "line-2"}},
			map[string]any{"level": "INFO", "msg": "request", "method": "GET", "route": "/api/v2/public/courses",
				"path": "/api/v2/public/courses", "status": 401.0, "bytes": 31.0, "request_id": "line-2", "remote_addr": "2001:db8::1"},
		},
		{
			req{target: "/no/such/path", header: map[string]string{"X-Request-ID": "line-3"}},
			map[string]any{"level": "INFO", "msg": "request", "method": "GET", "route": "unmatched",
				"path": "/no/such/path", "status": 404.0, "bytes": 25.0, "request_id": "line-3", "remote_addr": "192.0.2.1"},
		},
	}
	for _, tt := range tests {
		before := len(env.logs.String())
		env.send(tt.r)
		lines := strings.Split(strings.TrimSpace(env.logs.String()[before:]), "\n")
		if len(lines) != 1 {
			t.Errorf("GET %s wrote %d log lines, want 1:\n%s", tt.r.target, len(lines), strings.Join(lines, "\n"))
			continue
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
			t.Fatalf("log line is not JSON: %v\n%s", err, lines[0])
		}
		if d, ok := got["duration_ms"].(float64); !ok || d < 0 {
			t.Errorf("GET %s: duration_ms %v, want a number >= 0", tt.r.target, got["duration_ms"])
		}
		delete(got, "duration_ms")
		delete(got, "time")
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("log line of GET %s mismatch (-want +got):\n%s", tt.r.target, diff)
		}
	}
}

// TestTokenNeverLogged: nothing the edge logs, whatever happens to a request made with a
// real token, contains that token or its random part.
func TestTokenNeverLogged(t *testing.T) {
	env := newAuthEnv(t, func(c *config.Config) { c.Edge.RateLimit = 3 })
	tok := env.token
	flipped := tok[:len(tok)-1] + map[bool]string{true: "B", false: "A"}[tok[len(tok)-1] == 'A']
	requests := []req{
		{target: course1, auth: env.bearer()},
		{target: "/api/v2/public/course/999", auth: env.bearer()},
		{target: "/api/v2/public/classes?start=13-45-2027", auth: env.bearer()}, // 500 by D8
		{target: course1, auth: env.bearer()},
		{target: course1, auth: env.bearer()}, // 429
		{target: course1 + "?token=" + tok + "&api_token=" + tok},
		{target: "/api/v2/public/popular", auth: []string{"Bearer " + tok + " " + tok}},
		{target: course1, auth: []string{"Bearer " + flipped}},
		{target: course1, auth: []string{"Basic " + tok}},
		{target: course1, auth: env.bearer(), header: map[string]string{"X-Request-ID": tok}},
	}
	for _, r := range requests {
		env.send(r)
	}
	if err := apitoken.Revoke(context.Background(), env.conn, env.tokenID); err != nil {
		t.Fatal(err)
	}
	env.refreshTokens(t)
	env.send(req{target: course1, auth: env.bearer()})
	dropDatabase(t, env.dbURL)
	_ = env.s.auth.Refresh(context.Background())
	env.send(req{target: "/api/v2/public/classes", auth: env.bearer()})

	logs := env.logs.String()
	if n := strings.Count(logs, `"msg":"request"`); n != len(requests)+2 {
		t.Fatalf("log holds %d request lines, want %d:\n%s", n, len(requests)+2, logs)
	}
	random := strings.TrimPrefix(tok, apitoken.Prefix)
	for _, secret := range []string{tok, random, random[:20], random[20:]} {
		if strings.Contains(logs, secret) {
			t.Errorf("log contains %q of the token:\n%s", secret, logs)
		}
	}
}

// TestRequestLogThroughLogger: without Options.RequestLog, request lines go through the
// Logger, with the same fields.
func TestRequestLogThroughLogger(t *testing.T) {
	env := newAuthEnvWith(t, nil, func(o *Options) { o.RequestLog = nil })
	env.send(req{target: "/no/such/path", header: map[string]string{"X-Request-ID": "via-slog"}})
	logs := env.logs.String()
	for _, want := range []string{`"msg":"request","method":"GET","route":"unmatched","path":"/no/such/path","status":404,"bytes":25,"duration_ms":`,
		`,"request_id":"via-slog","remote_addr":"192.0.2.1"}`} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %s:\n%s", want, logs)
		}
	}
}
