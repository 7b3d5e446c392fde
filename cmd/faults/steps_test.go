package faults

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trainingco/catalogue/cmd/internal/cmdtest"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// holdProxy is an HTTP proxy in front of MinIO that holds the first request matching its
// rule, tells the test, and once the test has killed the client drops the request without
// forwarding it: the client died before its request reached the store. Every other request
// goes through. S3 signatures cover the Host header, which the proxy keeps, so MinIO accepts
// the requests signed for the proxy's address.
type holdProxy struct {
	srv     *httptest.Server
	mu      sync.Mutex
	rule    func(*http.Request) bool // nil: hold nothing
	held    chan struct{}            // closed when a request is held
	release chan struct{}            // closed by the test to drop the held request
}

func newHoldProxy(t testing.TB, endpoint string) *holdProxy {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	p := &holdProxy{}
	fwd := httputil.NewSingleHostReverseProxy(target)
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if held, release := p.take(r); held != nil {
			close(held)
			select {
			case <-release:
			case <-r.Context().Done():
			}
			http.Error(w, "dropped by the test", http.StatusServiceUnavailable)
			return
		}
		fwd.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// arm makes the proxy hold the next request that rule matches.
func (p *holdProxy) arm(rule func(*http.Request) bool) (held, release chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rule, p.held, p.release = rule, make(chan struct{}), make(chan struct{})
	return p.held, p.release
}

// take returns the channels of the hold when r is the request to hold, and disarms.
func (p *holdProxy) take(r *http.Request) (held, release chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rule == nil || !p.rule(r) {
		return nil, nil
	}
	p.rule = nil
	return p.held, p.release
}

func put(sub string) func(*http.Request) bool {
	return func(r *http.Request) bool { return r.Method == http.MethodPut && strings.Contains(r.URL.Path, sub) }
}

// deletion matches S3's DeleteObjects (POST ?delete) and DeleteObject.
func deletion(r *http.Request) bool {
	return r.Method == http.MethodDelete || (r.Method == http.MethodPost && r.URL.Query().Has("delete"))
}

// TestKilledAtEachStep kills the real builder run with SIGKILL at chosen steps of its
// publication (issue 4, guarantee 1): while a document object is being stored, while the
// manifest is, while the pointer is (the moment random kills almost never hit: one small
// write), and while old snapshots are being collected after the pointer. The store is
// MinIO behind a proxy that holds the step's first request until the builder is dead. The
// pointer must stay on the previous snapshot, or name the new one, complete, when the
// pointer was written; the edge serves accordingly; the next run publishes normally.
func TestKilledAtEachStep(t *testing.T) {
	t.Parallel()
	st := testkit.NewS3Store(t)
	// With builder.keep 1 and a grace period shorter than a run every publication collects
	// the one before.
	rig := newKillRig(t, st, map[string]string{config.EnvName("builder.keep"): "1", config.EnvName("builder.collect_grace"): "1ms"},
		"--courses", "10", "--classes", "200", "--registrations", "500", "--seed", "8")
	env, in, d, token := rig.env, rig.in, rig.edge, rig.token
	proxy := newHoldProxy(t, st.Endpoint)
	proxied := &cmdtest.Env{DatabaseURL: env.DatabaseURL, Store: st, Extra: env.Extra}
	proxied.Store.Endpoint = proxy.srv.URL
	steps := []struct {
		name      string
		rule      func(*http.Request) bool
		published bool // the pointer was written before the kill
	}{
		{"storing an object", put("/objects/"), false},
		{"writing the manifest", put("/snapshots/"), false},
		{"writing the pointer", put("/current.json"), false},
		{"collecting old snapshots", deletion, true},
	}
	for _, s := range steps {
		rig.gen++
		changeData(t, env, rig.gen)
		before := in.contents(t)
		killHeld(t, proxied, proxy, s.name, s.rule)
		after := in.contents(t)
		ptr := in.pointer(t)
		if s.published == (ptr == rig.prev) {
			t.Fatalf("%s: pointer = %s after the kill (previous %s); want it moved: %v", s.name, ptr, rig.prev, s.published)
		}
		if s.name == "writing the pointer" && len(after.manifests) != len(before.manifests)+1 {
			t.Errorf("%s: manifests %d before the run, %d after; want the new manifest left behind", s.name, len(before.manifests), len(after.manifests))
		}
		in.complete(t, ptr, after.objects)
		d.WaitSnapshot(t, ptr, 30*time.Second)
		want := rig.gen - 1
		if s.published {
			want = rig.gen
		}
		checkServed(t, d, token, ptr, want)
		// The next run publishes normally, and collects what the killed run left.
		rig.publish(t)
	}
}

// killHeld starts builder run in env, whose store is behind proxy, waits until the proxy
// holds the request rule matches, kills the run with SIGKILL and then drops the request.
func killHeld(t *testing.T, env *cmdtest.Env, proxy *holdProxy, step string, rule func(*http.Request) bool) {
	t.Helper()
	held, release := proxy.arm(rule)
	defer close(release)
	var out, errOut bytes.Buffer
	cmd := startRun(t, env, &out, &errOut)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-held:
		_ = cmd.Process.Kill()
		<-exited
	case err := <-exited:
		t.Fatalf("%s: the run ended (%v) before the step\n%s", step, err, errOut.String())
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		<-exited
		t.Fatalf("%s: the run did not reach the step within 2 minutes", step)
	}
}
