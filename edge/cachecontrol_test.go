package edge

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestClassReadVariesOnAuthorization checks D45 for an API token: the class read's body
// depends on the caller (a student's JWT gets two fields more), so every answer of it, the
// token's too, says Vary: Authorization; a private cache keyed without it would hand a
// student the token's copy, or the reverse.
func TestClassReadVariesOnAuthorization(t *testing.T) {
	ts := startLocalA(t)
	const class = "/api/v2/public/class/7"
	tag := ts.get(http.MethodGet, class, nil, "ETag").Headers["ETag"]
	gzTag := ts.get(http.MethodGet, class, map[string]string{"Accept-Encoding": "gzip"}, "ETag").Headers["ETag"]
	for _, tt := range []struct {
		method string
		hdr    map[string]string
		status int
	}{
		{http.MethodGet, nil, 200},
		{http.MethodHead, nil, 200},
		{http.MethodGet, map[string]string{"Accept-Encoding": "gzip"}, 200},
		{http.MethodGet, map[string]string{"If-None-Match": tag}, 304},
		{http.MethodGet, map[string]string{"If-None-Match": gzTag, "Accept-Encoding": "gzip"}, 304},
	} {
		got := ts.get(tt.method, class, tt.hdr, "Vary")
		want := response{Status: tt.status, Headers: map[string]string{"Vary": "Authorization, Accept-Encoding"}}
		got.Body = ""
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s %s with %q mismatch (-want +got):\n%s", tt.method, class, tt.hdr, diff)
		}
	}
	// A course's body is the same for every caller: it varies on the encoding alone.
	if got := ts.get(http.MethodGet, "/api/v2/public/course/1", nil, "Vary"); got.Headers["Vary"] != "Accept-Encoding" {
		t.Errorf("GET a course: Vary %q, want Accept-Encoding", got.Headers["Vary"])
	}
}

// TestErrorsAreNotStored checks D45's second half: every error says Cache-Control:
// no-store, so that a cache in front (a CDN's default lifetime, a browser) never keeps a
// 404, a 429 or a 503 and answers with it after the cause is gone. It also checks the
// search's Cache-Control, which the partner's guide promises: a private cache may reuse an answer
// for edge.search_cache, as the edge itself does.
func TestErrorsAreNotStored(t *testing.T) {
	st := openStore(t, testkit.NewLocalStore(t))
	publish(t, st, fixtureA())
	ts := newTestServer(t, st, testConfig())
	limitedCfg := testConfig()
	limitedCfg.Edge.RateLimit = 1
	limited := newTestServer(t, st, limitedCfg)
	if got := limited.get(http.MethodGet, "/api/v2/public/course/1", nil); got.Status != 200 {
		t.Fatalf("first request to the limited server: %d", got.Status)
	}
	empty := newTestServer(t, openStore(t, testkit.NewLocalStore(t)), testConfig())
	anonymous := map[string]string{"Authorization": ""}
	for _, tt := range []struct {
		s      testServer
		method string
		target string
		hdr    map[string]string
		status int
	}{
		{ts, http.MethodGet, "/api/v2/public/class/8", nil, 404},
		{ts, http.MethodHead, "/api/v2/public/course/8", nil, 404},
		{ts, http.MethodGet, "/api/v2/public/nope", nil, 404},
		{ts, http.MethodGet, "/nope", anonymous, 404},
		{ts, http.MethodGet, "/api/v2/public/courses", anonymous, 401},
		{ts, http.MethodPost, "/api/v2/public/courses", nil, 405},
		{ts, http.MethodGet, "/api/v2/public/courses?type=Bogus", nil, 400},
		{ts, http.MethodGet, "/api/v2/public/classes?limit=x", nil, 400},
		{ts, http.MethodGet, "/api/v2/public/classes?start=tomorrow", nil, 500},
		{limited, http.MethodGet, "/api/v2/public/class/7", nil, 429},
		{empty, http.MethodGet, "/api/v2/public/class/7", nil, 503},
		{empty, http.MethodGet, "/readyz", anonymous, 503},
	} {
		got := tt.s.get(tt.method, tt.target, tt.hdr, "Cache-Control")
		got.Body = ""
		want := response{Status: tt.status, Headers: map[string]string{"Cache-Control": "no-store"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s %s mismatch (-want +got):\n%s", tt.method, tt.target, diff)
		}
	}
}

// TestSearchCacheControl checks the search's Cache-Control: private (it answers a request
// with a token), reusable for edge.search_cache in whole seconds, as long as the edge
// reuses it itself, and never reused (max-age=0) with the edge's cache off.
func TestSearchCacheControl(t *testing.T) {
	st := openStore(t, testkit.NewLocalStore(t))
	publish(t, st, fixtureA())
	for _, tt := range []struct {
		edit func(*config.Config)
		want string
	}{
		{func(*config.Config) {}, "private, max-age=5"},
		{func(c *config.Config) { c.Edge.SearchCache = 0 }, "private, max-age=0"},
	} {
		cfg := testConfig()
		tt.edit(&cfg)
		ts := newTestServer(t, st, cfg)
		for _, target := range []string{"/api/v2/public/classes", "/api/v2/public/course/1/classes"} {
			if got := ts.get(http.MethodGet, target, nil, "Cache-Control"); got.Status != 200 || got.Headers["Cache-Control"] != tt.want {
				t.Errorf("GET %s (search_cache %s): %d, Cache-Control %q; want 200 with %q", target, cfg.Edge.SearchCache,
					got.Status, got.Headers["Cache-Control"], tt.want)
			}
		}
	}
}

// TestHeadOfAnError checks that HEAD of an error answers like GET without the body (RFC 9110
// 9.3.2): the same status, Content-Type and Content-Length, through a real HTTP server, which
// is what sets a GET's Content-Length when the handler does not.
func TestHeadOfAnError(t *testing.T) {
	st := openStore(t, testkit.NewLocalStore(t))
	publish(t, st, fixtureA())
	ts := newTestServer(t, st, testConfig())
	srv := httptest.NewServer(ts.Handler())
	t.Cleanup(srv.Close)
	send := func(method, target string, auth bool) (*http.Response, string) {
		req, err := http.NewRequest(method, srv.URL+target, nil)
		if err != nil {
			t.Fatal(err)
		}
		if auth {
			req.Header.Set("Authorization", "Bearer "+ts.token)
		}
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	for _, tt := range []struct {
		target string
		auth   bool
		status int
	}{
		{"/api/v2/public/class/8", true, 404},
		{"/api/v2/public/courses", false, 401},
		{"/api/v2/public/courses?type=Bogus", true, 400},
		{"/api/v2/public/classes?limit=x", true, 400},
		{"/api/v2/public/classes?date=tomorrow", true, 500},
		{"/nope", false, 404},
	} {
		get, body := send(http.MethodGet, tt.target, tt.auth)
		head, headBody := send(http.MethodHead, tt.target, tt.auth)
		if get.StatusCode != tt.status || head.StatusCode != tt.status || headBody != "" {
			t.Errorf("%s: GET %d, HEAD %d with %d bytes; want %d both, HEAD without a body", tt.target,
				get.StatusCode, head.StatusCode, len(headBody), tt.status)
			continue
		}
		want := map[string]string{"Content-Type": "application/json", "Content-Length": strconv.Itoa(len(body))}
		for name, w := range want {
			if g, h := get.Header.Get(name), head.Header.Get(name); g != w || h != w {
				t.Errorf("%s: %s of GET %q, of HEAD %q; want %q for both", tt.target, name, g, h, w)
			}
		}
	}
}
