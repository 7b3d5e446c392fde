package edge

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestNotReadyThenReady: with no snapshot anywhere the static reads and /readyz answer 503;
// once one is published and loaded, 200.
func TestNotReadyThenReady(t *testing.T) {
	const unavailable = `{"message":"The catalogue is not loaded yet. Try again shortly."}` + "\n"
	st := openStore(t, testkit.NewLocalStore(t))
	ts := newTestServer(t, st, testConfig())
	keep := []string{"Content-Type", "Retry-After"}
	json := map[string]string{"Content-Type": "application/json"}
	retry := map[string]string{"Content-Type": "application/json", "Retry-After": "3600"}
	before := []struct {
		target string
		want   response
	}{
		{"/healthz", response{200, json, `{"status":"ok"}` + "\n"}},
		{"/readyz", response{503, json, `{"message":"No catalogue snapshot is loaded yet."}` + "\n"}},
		{"/api/v2/public/courses", response{503, retry, unavailable}},
		{"/api/v2/public/courses?type=Online", response{503, retry, unavailable}},
		{"/api/v2/public/popular", response{503, retry, unavailable}},
		{"/api/v2/public/course/1", response{503, retry, unavailable}},
		{"/api/v2/public/class/7", response{503, retry, unavailable}},
		// What is wrong with the request itself is said without a snapshot too.
		{"/api/v2/public/class/x", response{404, json, `{"message":"Class not found."}` + "\n"}},
		{"/api/v2/public/courses?type=x", response{400, json, `{"message":"The selected type is invalid. Allowed types: Online, Brick and Mortar, Blended."}` + "\n"}},
	}
	for _, tt := range before {
		if diff := cmp.Diff(tt.want, ts.get("GET", tt.target, nil, keep...)); diff != "" {
			t.Errorf("before: GET %s mismatch (-want +got):\n%s", tt.target, diff)
		}
	}

	publish(t, st, fixtureA())
	refresh(t, ts.Server)
	after := []struct {
		target string
		want   response
	}{
		{"/healthz", response{200, json, `{"status":"ok"}` + "\n"}},
		{"/readyz", response{200, json, `{"snapshot":"snap-a","status":"ok"}` + "\n"}},
		{"/api/v2/public/course/1", response{200, json, `{"id":1,"snapshot":"snap-a"}`}},
	}
	for _, tt := range after {
		if diff := cmp.Diff(tt.want, ts.get("GET", tt.target, nil, keep...)); diff != "" {
			t.Errorf("after: GET %s mismatch (-want +got):\n%s", tt.target, diff)
		}
	}

	// Told to stop, the edge says so to readiness probes, so that load balancers take it
	// out of rotation, and goes on serving what they still send it meanwhile.
	ts.Drain()
	draining := []struct {
		target string
		want   response
	}{
		{"/healthz", response{200, json, `{"status":"ok"}` + "\n"}},
		{"/readyz", response{503, json, `{"message":"The server is shutting down."}` + "\n"}},
		{"/api/v2/public/course/1", response{200, json, `{"id":1,"snapshot":"snap-a"}`}},
	}
	for _, tt := range draining {
		if diff := cmp.Diff(tt.want, ts.get("GET", tt.target, nil, keep...)); diff != "" {
			t.Errorf("draining: GET %s mismatch (-want +got):\n%s", tt.target, diff)
		}
	}
}

// TestNotReadyWithoutTokens: an edge that has its snapshot but could not read the token set
// (its replica unreachable at start) refuses every authenticated request, so /readyz says
// 503 and a load balancer keeps it out (D26); the failed probe is logged at debug, not as an
// error; /healthz still says the process runs.
func TestNotReadyWithoutTokens(t *testing.T) {
	env := newAuthEnv(t, nil)
	dropDatabase(t, env.dbURL)
	var logs lockedBuffer
	s, err := New(Options{Config: env.s.opts.Config, Store: env.s.opts.Store, Replica: env.replica,
		Templates: env.s.opts.Templates, Now: env.clock.now,
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.Start(ctx)
	if s.docs.Current() == nil {
		t.Fatal("the snapshot is not loaded: this test needs one")
	}
	json := map[string]string{"Content-Type": "application/json"}
	for _, tt := range []struct {
		target string
		want   response
	}{
		{"/healthz", response{200, json, `{"status":"ok"}` + "\n"}},
		{"/readyz", response{503, json, `{"message":"The token list is not loaded yet."}` + "\n"}},
	} {
		if diff := cmp.Diff(tt.want, do(s.Handler(), "GET", tt.target, nil, "Content-Type")); diff != "" {
			t.Errorf("GET %s mismatch (-want +got):\n%s", tt.target, diff)
		}
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, `"path":"/readyz"`) && !strings.Contains(line, `"msg":"request"`) &&
			!strings.Contains(line, `"level":"DEBUG"`) {
			t.Errorf("the failed probe is logged above debug: %s", line)
		}
	}
	if !strings.Contains(logs.String(), `"level":"DEBUG","msg":"not ready"`) {
		t.Errorf("log lacks the failed probe at debug:\n%s", logs.String())
	}
}
