package edge

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"github.com/trainingco/catalogue/scripts/testkit"
)

func TestMethodNotAllowed(t *testing.T) {
	ts := startLocalA(t)
	want := response{Status: 405, Body: `{"message":"Method Not Allowed."}` + "\n", Headers: map[string]string{
		"Allow": "GET, HEAD", "Content-Type": "application/json", "X-Content-Type-Options": "nosniff"}}
	for _, method := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "PROPFIND", "BREW"} {
		for _, target := range []string{"/api/v2/public/courses", "/api/v2/public/course/1", "/api/v2/public/classes",
			"/healthz", "/metrics", "/nope"} {
			got := ts.get(method, target, nil, "Allow", "Content-Type", "X-Content-Type-Options")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s %s mismatch (-want +got):\n%s", method, target, diff)
			}
		}
	}
}

// TestNosniffEverywhere: X-Content-Type-Options on successes and on every kind of error (D25).
func TestNosniffEverywhere(t *testing.T) {
	ts := startLocalA(t)
	empty := newTestServer(t, openStore(t, testkit.NewLocalStore(t)), testConfig())
	tag := ts.get("GET", "/api/v2/public/popular", nil, "ETag").Headers["ETag"]
	for _, tt := range []struct {
		name   string
		s      testServer
		method string
		target string
		hdr    map[string]string
		status int
	}{
		{"static read", ts, "GET", "/api/v2/public/popular", nil, 200},
		{"not modified", ts, "GET", "/api/v2/public/popular", map[string]string{"If-None-Match": tag}, 304},
		{"head", ts, "HEAD", "/api/v2/public/class/7", nil, 200},
		{"bad type", ts, "GET", "/api/v2/public/courses?type=x", nil, 400},
		{"bad id", ts, "GET", "/api/v2/public/class/x", nil, 404},
		{"unknown path", ts, "GET", "/api/v2/public/x", nil, 404},
		{"no token", ts, "GET", "/api/v2/public/popular", map[string]string{"Authorization": ""}, 401},
		{"method", ts, "DELETE", "/api/v2/public/popular", nil, 405},
		{"no snapshot", empty, "GET", "/api/v2/public/popular", nil, 503},
		{"not ready", empty, "GET", "/readyz", nil, 503},
		{"healthz", empty, "GET", "/healthz", nil, 200},
	} {
		got := tt.s.get(tt.method, tt.target, tt.hdr, "X-Content-Type-Options")
		got.Body = ""
		want := response{Status: tt.status, Headers: map[string]string{"X-Content-Type-Options": "nosniff"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: %s %s mismatch (-want +got):\n%s", tt.name, tt.method, tt.target, diff)
		}
	}
}

func TestRecoverJSON(t *testing.T) {
	logs := &lockedBuffer{}
	st := openStore(t, testkit.NewLocalStore(t))
	publish(t, st, fixtureA())
	ts := newLoggedServer(t, st, testConfig(), logs)
	// Routes added after New still run through every middleware Use registered.
	ts.echo.GET("/test/panic", func(echo.Context) error { panic("boom") })
	ts.echo.GET("/test/panic-late", func(c echo.Context) error {
		_ = c.String(http.StatusOK, "partial")
		panic("late boom")
	})

	got := do(ts.Handler(), "GET", "/test/panic", nil, "Content-Type", "X-Content-Type-Options")
	want := response{Status: 500, Body: `{"message":"Server Error"}` + "\n", Headers: map[string]string{
		"Content-Type": "application/json", "X-Content-Type-Options": "nosniff"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GET /test/panic mismatch (-want +got):\n%s", diff)
	}
	got = do(ts.Handler(), "GET", "/test/panic-late", nil)
	if diff := cmp.Diff(response{Status: 200, Headers: map[string]string{}, Body: "partial"}, got); diff != "" {
		t.Errorf("GET /test/panic-late mismatch (-want +got):\n%s", diff)
	}
	for _, want := range []string{`panic: boom\n`, `panic: late boom\n`, `"msg":"panic after the response started"`, `goroutine `, `middleware_test.go`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q; log:\n%s", want, logs.String())
		}
	}
}

// TestRecoverRepanicsAbort: http.ErrAbortHandler is net/http's way to drop a connection, so
// it must reach net/http.
func TestRecoverRepanicsAbort(t *testing.T) {
	s := &Server{}
	e := echo.New()
	c := e.NewContext(httptest.NewRequest("GET", "/", nil), httptest.NewRecorder())
	defer func() {
		if r := recover(); r != http.ErrAbortHandler {
			t.Errorf("recovered %v, want http.ErrAbortHandler", r)
		}
	}()
	_ = s.call(c, func(echo.Context) error { panic(http.ErrAbortHandler) })
	t.Error("call swallowed http.ErrAbortHandler")
}

func TestCORS(t *testing.T) {
	cfg := testConfig()
	cfg.Edge.CORSOrigins = []string{"https://shop.example", "https://kiosk.example"}
	st := openStore(t, testkit.NewLocalStore(t))
	publish(t, st, fixtureA())
	withCORS := newTestServer(t, st, cfg)
	without := newTestServer(t, st, testConfig())
	keep := []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers",
		"Access-Control-Expose-Headers", "Access-Control-Max-Age", "Vary", "Allow"}
	preflight := map[string]string{"Origin": "https://shop.example", "Access-Control-Request-Method": "GET",
		"Access-Control-Request-Headers": "authorization", "Authorization": ""}
	for _, tt := range []struct {
		name   string
		s      testServer
		method string
		hdr    map[string]string
		want   response
	}{
		{"preflight", withCORS, "OPTIONS", preflight, response{Status: 204, Headers: map[string]string{
			"Access-Control-Allow-Origin":  "https://shop.example",
			"Access-Control-Allow-Methods": "GET,HEAD", "Access-Control-Allow-Headers": "Authorization,If-None-Match",
			"Access-Control-Max-Age": "600",
			"Vary":                   "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"}}},
		{"read from an allowed origin", withCORS, "GET", map[string]string{"Origin": "https://kiosk.example"}, response{Status: 200, Headers: map[string]string{
			"Access-Control-Allow-Origin":   "https://kiosk.example",
			"Access-Control-Expose-Headers": "ETag,X-Catalogue-Snapshot,X-RateLimit-Limit,X-RateLimit-Remaining,X-RateLimit-Reset,Retry-After",
			"Vary":                          "Origin, Accept-Encoding"}}},
		{"read from another origin", withCORS, "GET", map[string]string{"Origin": "https://evil.example"}, response{Status: 200, Headers: map[string]string{
			"Vary": "Origin, Accept-Encoding"}}},
		{"preflight without CORS", without, "OPTIONS", preflight, response{Status: 405, Headers: map[string]string{
			"Allow": "GET, HEAD"}}},
		{"read without CORS", without, "GET", map[string]string{"Origin": "https://shop.example"}, response{Status: 200, Headers: map[string]string{
			"Vary": "Accept-Encoding"}}},
	} {
		got := tt.s.get(tt.method, "/api/v2/public/course/1", tt.hdr, keep...)
		got.Body = ""
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestPreflightLimitedPerAddress checks D44 and D24 for OPTIONS when edge.cors_origins is
// set: a CORS preflight (Origin and Access-Control-Request-Method) is counted against its
// address like any anonymous request, so a flood of them is refused with 429 once the
// address's allowance is used up, sharing it with the address's failed authentications; an
// OPTIONS that is no preflight is a method the API does not answer: 405.
func TestPreflightLimitedPerAddress(t *testing.T) {
	cfg := testConfig()
	cfg.Edge.RateLimit = 3
	cfg.Edge.CORSOrigins = []string{"https://shop.example"}
	ts := newTestServer(t, openStore(t, testkit.NewLocalStore(t)), cfg)
	send := func(remote string, hdr map[string]string) response {
		req := httptest.NewRequest(http.MethodOptions, "/api/v2/public/course/1", nil)
		req.RemoteAddr = remote
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		ts.Handler().ServeHTTP(rec, req)
		got := response{Status: rec.Code, Headers: map[string]string{}}
		for _, k := range []string{"Allow", "Retry-After", "Access-Control-Allow-Origin"} {
			if v := rec.Header().Get(k); v != "" {
				got.Headers[k] = v
			}
		}
		return got
	}
	preflight := map[string]string{"Origin": "https://shop.example", "Access-Control-Request-Method": "GET",
		"Access-Control-Request-Headers": "authorization"}
	allowed := response{Status: 204, Headers: map[string]string{"Access-Control-Allow-Origin": "https://shop.example"}}
	for i := range 3 {
		if diff := cmp.Diff(allowed, send("192.0.2.1:1234", preflight)); diff != "" {
			t.Fatalf("preflight %d mismatch (-want +got):\n%s", i+1, diff)
		}
	}
	if diff := cmp.Diff(response{Status: 429, Headers: map[string]string{"Retry-After": "60"}}, send("192.0.2.1:1234", preflight)); diff != "" {
		t.Errorf("fourth preflight from the address mismatch (-want +got):\n%s", diff)
	}
	if got := do(ts.Handler(), http.MethodGet, "/api/v2/public/course/1", nil); got.Status != 429 {
		t.Errorf("an anonymous GET from the address after three preflights: status %d, want 429", got.Status)
	}
	if diff := cmp.Diff(allowed, send("198.51.100.7:4000", preflight)); diff != "" {
		t.Errorf("a preflight from another address mismatch (-want +got):\n%s", diff)
	}
	notAllowed := response{Status: 405, Headers: map[string]string{"Allow": "GET, HEAD"}}
	for name, hdr := range map[string]map[string]string{
		"no Origin":                          nil,
		"no Access-Control-Request-Method":   {"Origin": "https://shop.example"},
		"only Access-Control-Request-Method": {"Access-Control-Request-Method": "GET"},
	} {
		if diff := cmp.Diff(notAllowed, send("203.0.113.9:5000", hdr)); diff != "" {
			t.Errorf("OPTIONS with %s mismatch (-want +got):\n%s", name, diff)
		}
	}
}

// TestRequestHeadBound: a request whose line and headers take 32 KiB as sent is served; one
// byte more is 431 as JSON (D46, D24), counted on the exact bytes of the request.
func TestRequestHeadBound(t *testing.T) {
	ts := startLocalA(t)
	head := func(size int) string {
		start := "GET /api/v2/public/popular HTTP/1.1\r\nHost: example.com\r\nAuthorization: Bearer " + ts.token + "\r\nX-Padding: "
		end := "\r\n\r\n"
		return start + strings.Repeat("p", size-len(start)-len(end)) + end
	}
	for _, tt := range []struct {
		size   int
		status int
		body   string
	}{{32 << 10, 200, ""}, {32<<10 + 1, 431, `{"message":"Request Header Fields Too Large."}` + "\n"}} {
		raw := head(tt.size)
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
		if err != nil || len(raw) != tt.size {
			t.Fatalf("request of %d bytes (%d): %v", tt.size, len(raw), err)
		}
		rec := httptest.NewRecorder()
		ts.Handler().ServeHTTP(rec, req)
		if rec.Code != tt.status || (tt.body != "" && (rec.Body.String() != tt.body || rec.Header().Get("Cache-Control") != "no-store")) {
			t.Errorf("a request head of %d bytes: %d %q %v, want %d %q", tt.size, rec.Code, rec.Body.String(), rec.Header(), tt.status, tt.body)
		}
	}
}
