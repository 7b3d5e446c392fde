package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/cmd/internal/cmdtest"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

// base is the default base path (edge.base_path), which the tests leave unchanged.
const base = "/api/v2"

// readyWithin bounds the wait for the edge to serve a snapshot it can already read.
const readyWithin = 15 * time.Second

// fixture is one installation under test: the dataset published by builder run and an edge
// serving it. Its subtests share it; those that change it (revocation, rebuild) run last.
type fixture struct {
	clock
	env      *cmdtest.Env
	schema   testkit.Schema // the provider's schema the dataset is loaded into
	edge     *cmdtest.Edge
	token    string // issued before the edge started
	snapshot string // the id builder run printed

	emptyStore func() config.Store // a fresh store of the same kind, nothing published
}

// TestEdge runs every end-to-end check once per kind of store on the reference schema, and
// once on the worked example of a provider's own schema (templates/testdata/laravel) with
// the same data: the same bodies must come out of both.
func TestEdge(t *testing.T) {
	type setup struct {
		store  string
		schema testkit.Schema
	}
	for name, s := range map[string]setup{
		"local": {"local", testkit.Reference()}, "s3": {"s3", testkit.Reference()},
		"laravel": {"local", testkit.Laravel(t)},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, testkit.Stores(t)[s.store], s.schema)
			f.emptyStore = func() config.Store { return testkit.Stores(t)[s.store] }
			for _, s := range []struct {
				name string
				test func(*testing.T)
			}{
				{"courses", f.testCourses},
				{"popular", f.testPopular},
				{"course", f.testCourse},
				{"class", f.testClass},
				{"search", f.testSearch},
				{"search/filters", f.testSearchFilters},
				{"search/pagination", f.testPagination},
				{"search/errors", f.testSearchErrors},
				{"course classes", f.testCourseClasses},
				{"auth", f.testAuth},
				{"http", f.testHTTP},
				{"conditional", f.testConditional},
				{"guide conditional", f.testGuideConditional},
				{"guide requests", f.testGuideRequests},
				{"generated client", f.testGeneratedClient},
				{"gzip", f.testGzip},
				{"unversioned", f.testUnversioned},
				{"not ready", f.testNotReady},
				{"rate limit", f.testRateLimit},
				{"graceful shutdown", f.testGracefulShutdown},
				{"revoke", f.testRevoke},
				{"feeds validator", f.testFeedsValidator},
				{"feeds guide mirror", f.testGuideMirror},
				{"feeds guide node", f.testGuideNode},
				{"feeds guide mirrors wait", f.testGuideMirrorsWait},
				{"rebuild", f.testRebuild}, // last: it changes the data
			} {
				t.Run(s.name, s.test)
			}
		})
	}
}

// newFixture loads the dataset into a fresh installation publishing to st, builds it,
// issues a token and starts an edge that serves the snapshot.
func newFixture(t *testing.T, st config.Store, s testkit.Schema) *fixture {
	t.Helper()
	f := &fixture{clock: newClock(time.Now()), env: cmdtest.NewEnvSchema(t, st, s), schema: s}
	f.env.Extra["CATALOGUE_TIMEZONE"] = f.zone
	f.env.Exec(t, s.Load(f.expand(dataset)))
	f.snapshot = f.env.Run(t)
	f.token = f.env.Token(t, "e2e")
	f.edge = f.env.StartEdge(t, map[string]string{
		// High enough for every request of the tests on one token; the limit itself is
		// tested on an edge of its own (testRateLimit).
		"CATALOGUE_EDGE_RATE_LIMIT":    "10000",
		"CATALOGUE_EDGE_TOKEN_REFRESH": "1s",
		"CATALOGUE_EDGE_POLL_INTERVAL": "200ms",
	})
	f.edge.WaitSnapshot(t, f.snapshot, readyWithin)
	return f
}

// get sends GET base+path with the fixture's token and checks what every response must
// carry: X-Content-Type-Options: nosniff (D25).
func (f *fixture) get(t *testing.T, path string, header ...string) *cmdtest.Response {
	t.Helper()
	r := checked(t, f.edge.Get(t, base+path, f.token, header...))
	// D23: every authenticated response, errors included, carries the limit and what is
	// left of it.
	if _, err := strconv.Atoi(r.Header.Get("X-RateLimit-Remaining")); err != nil || r.Header.Get("X-RateLimit-Limit") != "10000" {
		t.Errorf("GET %s: X-RateLimit-Limit %q, X-RateLimit-Remaining %q; want 10000 and a number",
			path, r.Header.Get("X-RateLimit-Limit"), r.Header.Get("X-RateLimit-Remaining"))
	}
	return r
}

// checked fails the test when r lacks nosniff (D25), when a 200 GET is not JSON, or when an error body is not a JSON object with a message and the JSON content
// type (D24).
func checked(t *testing.T, r *cmdtest.Response) *cmdtest.Response {
	t.Helper()
	if got := r.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("%s %s: X-Content-Type-Options = %q, want nosniff", r.Request.Method, r.Request.URL.Path, got)
	}
	if r.StatusCode == http.StatusOK && r.Request.Method == http.MethodGet && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Errorf("GET %s: 200 with Content-Type %q, want application/json", r.Request.URL, r.Header.Get("Content-Type"))
	}
	if r.StatusCode >= 400 && r.Request.Method != http.MethodHead {
		if ct := r.Header.Get("Content-Type"); ct != "application/json" && ct != "application/json; charset=UTF-8" {
			t.Errorf("%s %s: %s with Content-Type %q, want application/json", r.Request.Method, r.Request.URL, r.Status, ct)
		}
		var body struct{ Message *string }
		if err := json.Unmarshal(r.Data, &body); err != nil || body.Message == nil || *body.Message == "" {
			t.Errorf("%s %s: %s body %s, want {\"message\": \"...\"}", r.Request.Method, r.Request.URL, r.Status, r.Data)
		}
	}
	return r
}

// wantJSON checks that r is 200 with a body equal to want, a JSON text whose @+N dates are
// expanded. Numbers stay json.Number on both sides, so "12" and 12 differ (D29).
func (f *fixture) wantJSON(t *testing.T, r *cmdtest.Response, want string) {
	t.Helper()
	if r.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %s, want 200\n%s", r.Request.URL, r.Status, r.Data)
		return
	}
	if diff := cmp.Diff(decode(t, f.expand(want)), r.JSON(t)); diff != "" {
		t.Errorf("GET %s mismatch (-want +got):\n%s", r.Request.URL, diff)
	}
}

// wantError checks that r has the status and, when message is not empty, the body
// {"message": message}.
func wantError(t *testing.T, r *cmdtest.Response, status int, message string) {
	t.Helper()
	if r.StatusCode != status {
		t.Errorf("GET %s: %s, want %d\n%s", r.Request.URL, r.Status, status, r.Data)
		return
	}
	if message == "" {
		return
	}
	want := map[string]any{"message": message}
	if diff := cmp.Diff(want, r.JSON(t)); diff != "" {
		t.Errorf("GET %s body mismatch (-want +got):\n%s", r.Request.URL, diff)
	}
}

// decode parses a JSON text written in a test, numbers as json.Number.
func decode(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("expected value is not JSON: %v\n%s", err, s)
	}
	return v
}

// jsonDiff compares two JSON texts as values.
func jsonDiff(t *testing.T, want, got string) string {
	t.Helper()
	return cmp.Diff(decode(t, want), decode(t, got))
}
