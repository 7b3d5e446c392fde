package faults

import (
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/cmd/internal/cmdtest"
	"github.com/trainingco/catalogue/config"
)

// searchTimeout is edge.search_timeout in these tests; slack is what a 503 may take beyond
// it on a loaded machine with -race binaries.
const (
	searchTimeout = 500 * time.Millisecond
	slack         = time.Second
	searchPath    = "/api/v2/public/classes?limit=5"
)

// tally counts the requests a test sent during faults and the answers that were wrong, and
// keeps the longest a search took to answer 503.
type tally struct {
	sent, wrong int
	slowest503  time.Duration
}

// edgeFixture is an edge with its own MinIO, a replica behind a proxy, and a cache folder.
type edgeFixture struct {
	env      *cmdtest.Env
	minio    *minio
	proxy    *tcpProxy
	in       *inspector
	token    string
	vars     map[string]string // the edge's environment, cache folder included
	cacheDir string
	static   []string // paths of static documents of every kind
	tally    tally
}

func newEdgeFixture(t *testing.T) *edgeFixture {
	m := startMinIO(t)
	f := &edgeFixture{minio: m, env: cmdtest.NewEnv(t, m.store("edge")), cacheDir: t.TempDir()}
	f.env.MustBuilder(t, "seed", "--courses", "20", "--classes", "300", "--registrations", "1000", "--seed", "7")
	changeData(t, f.env, 0)
	f.env.Run(t)
	f.in = newInspector(t, f.env.Store)
	f.static = staticPaths(f.in.current(t))
	f.token = f.env.Token(t, "edge faults")
	var replica string
	f.proxy, replica = proxyDatabase(t, f.env.DatabaseURL)
	f.vars = edgeVars(map[string]string{
		config.EnvName("replica.url"):         replica,
		config.EnvName("edge.cache_dir"):      f.cacheDir,
		config.EnvName("edge.search_timeout"): searchTimeout.String(),
		// Every search goes to the replica: a response cached before a cut would be a 200.
		config.EnvName("edge.search_cache"): "0",
	})
	return f
}

// staticPaths returns the edge paths of the course list, popular, the watched course and
// one class of snapshot m.
func staticPaths(m *snapshot.Manifest) []string {
	paths := []string{snapshot.RouteCourses, snapshot.RoutePopular, snapshot.CourseRoute(watchedCourse)}
	var classes []string
	for r := range m.Documents {
		if strings.HasPrefix(r, "/public/class/") {
			classes = append(classes, r)
		}
	}
	slices.Sort(classes)
	paths = append(paths, classes[0])
	for i, p := range paths {
		paths[i] = "/api/v2" + p
	}
	return paths
}

// readStatic sends n rounds of GETs of every static path, pause apart, and checks that each
// is 200 from snapshot id.
func (f *edgeFixture) readStatic(t *testing.T, d *cmdtest.Edge, id string, n int, pause time.Duration) {
	t.Helper()
	for range n {
		for _, p := range f.static {
			r := d.Get(t, p, f.token)
			f.tally.sent++
			if got := r.Header.Get("X-Catalogue-Snapshot"); r.StatusCode != http.StatusOK || got != id {
				f.tally.wrong++
				t.Errorf("GET %s: %s from snapshot %q, want 200 from %s\n%s", p, r.Status, got, id, r.Data)
			}
		}
		time.Sleep(pause) // spread the reads over several of the edge's polls of the store
	}
}

// search sends one class search and returns its status, body and duration.
func (f *edgeFixture) search(t *testing.T, d *cmdtest.Edge) (*cmdtest.Response, time.Duration) {
	t.Helper()
	began := time.Now()
	r := d.Get(t, searchPath, f.token)
	f.tally.sent++
	return r, time.Since(began)
}

// waitLog waits until the edge has logged a line containing each of subs.
func waitLog(t *testing.T, d *cmdtest.Edge, within time.Duration, subs ...string) {
	t.Helper()
	has := func() bool {
		for l := range strings.SplitSeq(d.Logs(), "\n") {
			if containsAll(l, subs) {
				return true
			}
		}
		return false
	}
	if !waitFor(within, has) {
		t.Fatalf("the edge logged no line with %q within %v; logs:\n%s", subs, within, d.Logs())
	}
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestEdgeDependenciesDown takes the edge's dependencies away under a running edge binary
// (issue 4, guarantee 3): the store (its own MinIO, stopped), the replica (a proxy that
// refuses or hangs), and the store again across restarts of the edge, with and without
// edge.cache_dir.
func TestEdgeDependenciesDown(t *testing.T) {
	t.Parallel()
	f := newEdgeFixture(t)
	d := f.env.StartEdge(t, f.vars)
	id := f.in.pointer(t)
	d.WaitSnapshot(t, id, time.Minute)
	if r, _ := f.search(t, d); r.StatusCode != http.StatusOK {
		t.Fatalf("search before any fault: %s\n%s", r.Status, r.Data)
	}
	id = f.storeDown(t, d, id)
	f.replicaDown(t, d, id)
	f.restartWhileStoreDown(t, d, id)
	t.Logf("%d requests sent while a dependency was down or returning, %d wrong answers; slowest search 503 %v (edge.search_timeout %v)",
		f.tally.sent, f.tally.wrong, f.tally.slowest503.Round(time.Millisecond), searchTimeout)
}

// storeDown stops MinIO: the static documents keep coming from the snapshot in memory, and
// the search, which needs no store, keeps working. Once MinIO is back a new build is served
// without a restart. It returns the new snapshot's id.
func (f *edgeFixture) storeDown(t *testing.T, d *cmdtest.Edge, id string) string {
	f.minio.Stop(t)
	stopped := time.Now()
	waitLog(t, d, 30*time.Second, "snapshot refresh failed")
	// The outage is in the metrics, for an alert: errors counted, the last answer before it.
	if n, _ := strconv.ParseFloat(metric(t, d, "catalogue_edge_store_errors_total"), 64); n < 1 {
		t.Errorf("catalogue_edge_store_errors_total with the store down = %v, want at least 1", n)
	}
	if at, _ := strconv.ParseFloat(metric(t, d, "catalogue_edge_store_last_success_timestamp_seconds"), 64); at <= 0 || at > float64(stopped.Unix()+1) {
		t.Errorf("catalogue_edge_store_last_success_timestamp_seconds with the store down = %v, want a time before it stopped (%d)", at, stopped.Unix())
	}
	f.readStatic(t, d, id, 20, 50*time.Millisecond)
	if r, _ := f.search(t, d); r.StatusCode != http.StatusOK {
		t.Errorf("search with the store down: %s, want 200 (it needs only the replica)\n%s", r.Status, r.Data)
	}

	f.minio.Start(t)
	changeData(t, f.env, 1)
	next := f.env.Run(t)
	d.WaitSnapshot(t, next, 30*time.Second)
	checkServed(t, d, f.token, next, 1)
	waitLog(t, d, 10*time.Second, "snapshot source recovered")
	if at, _ := strconv.ParseFloat(metric(t, d, "catalogue_edge_store_last_success_timestamp_seconds"), 64); at < float64(stopped.Unix()) {
		t.Errorf("catalogue_edge_store_last_success_timestamp_seconds after the store came back = %v, want at least %d", at, stopped.Unix())
	}
	return next
}

// replicaDown cuts the replica, refusing and then hanging: static documents are still
// served to known tokens, the search answers 503 with a JSON message within
// edge.search_timeout, and it answers 200 again once the replica is back.
func (f *edgeFixture) replicaDown(t *testing.T, d *cmdtest.Edge, id string) {
	cuts := []struct {
		name string
		cut  func()
	}{{"refuses connections", f.proxy.refuse}, {"hangs", f.proxy.blackhole}}
	for _, c := range cuts {
		c.cut()
		f.readStatic(t, d, id, 5, 0)
		for range 3 {
			r, took := f.search(t, d)
			var body struct{ Message string }
			if r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Content-Type") != "application/json" ||
				json.Unmarshal(r.Data, &body) != nil || body.Message == "" {
				f.tally.wrong++
				t.Errorf("search while the replica %s: %s %q %s, want 503 application/json {\"message\": ...}", c.name, r.Status, r.Header.Get("Content-Type"), r.Data)
			}
			f.tally.slowest503 = max(f.tally.slowest503, took)
			if took > searchTimeout+slack {
				f.tally.wrong++
				t.Errorf("search while the replica %s took %v, want at most edge.search_timeout %v (+%v)", c.name, took, searchTimeout, slack)
			}
		}
		f.proxy.restore(t)
		var last *cmdtest.Response
		if !waitFor(15*time.Second, func() bool { last, _ = f.search(t, d); return last.StatusCode == http.StatusOK }) {
			t.Errorf("search after the replica that %s came back: %s, want 200 within 15s\n%s", c.name, last.Status, last.Data)
		}
	}
}

// restartWhileStoreDown stops MinIO and restarts the edge: with edge.cache_dir it serves the
// snapshot saved there; with one cached document corrupted it refuses the cache and is not
// ready; without edge.cache_dir it is not ready either. Both become ready from the store
// once MinIO is back.
func (f *edgeFixture) restartWhileStoreDown(t *testing.T, d *cmdtest.Edge, id string) {
	// The edge saves a snapshot to the cache after it starts serving it.
	cached := func() bool {
		p, err := snapshot.ReadPointer(t.Context(), store.NewLocal(f.cacheDir))
		return err == nil && p.ID == id
	}
	if !waitFor(30*time.Second, cached) {
		t.Fatalf("edge.cache_dir does not name snapshot %s within 30s", id)
	}
	f.minio.Stop(t)
	if err := d.Stop(t); err != nil {
		t.Fatalf("stop edge: %v", err)
	}

	f.restartFromCache(t, id, f.vars)
	f.restartStoreHangs(t, id)
	corruptOneDocument(t, f.cacheDir)
	corrupt := f.env.StartEdge(t, f.vars)
	noCache := f.env.StartEdge(t, withoutKey(f.vars, config.EnvName("edge.cache_dir")))
	for name, e := range map[string]*cmdtest.Edge{"a corrupt edge.cache_dir": corrupt, "no edge.cache_dir": noCache} {
		f.checkNotReady(t, e, name)
	}
	if !strings.Contains(corrupt.Logs(), "cached snapshot not used") || !strings.Contains(corrupt.Logs(), "does not match its hash") {
		t.Errorf("the edge with a corrupt cache did not say why it refused it:\n%s", corrupt.Logs())
	}

	f.minio.Start(t)
	for _, e := range []*cmdtest.Edge{corrupt, noCache} {
		e.WaitSnapshot(t, id, 30*time.Second)
		checkServed(t, e, f.token, id, 1)
	}
}

// restartFromCache starts an edge with vars while its store does not answer and checks
// that it serves snapshot id from edge.cache_dir, then stops it.
func (f *edgeFixture) restartFromCache(t *testing.T, id string, vars map[string]string) {
	t.Helper()
	d := f.env.StartEdge(t, vars)
	d.WaitSnapshot(t, id, 10*time.Second)
	checkServed(t, d, f.token, id, 1)
	f.readStatic(t, d, id, 5, 0)
	if !strings.Contains(d.Logs(), `"source":"cache"`) {
		t.Errorf("the edge restarted with the store down did not say it loaded the cache:\n%s", d.Logs())
	}
	if err := d.Stop(t); err != nil {
		t.Fatalf("stop edge: %v", err)
	}
}

// restartStoreHangs starts an edge whose store accepts connections and never answers (a
// proxy in front of MinIO that holds every connection): it must still come up within
// cmdtest's start limit, 30 s, and serve snapshot id from edge.cache_dir.
func (f *edgeFixture) restartStoreHangs(t *testing.T, id string) {
	t.Helper()
	hung := newTCPProxy(t, strings.TrimPrefix(f.minio.URL, "http://"))
	hung.blackhole()
	vars := maps.Clone(f.vars)
	vars[config.EnvName("store.endpoint")] = "http://" + hung.addr
	began := time.Now()
	f.restartFromCache(t, id, vars)
	t.Logf("an edge whose store hangs served edge.cache_dir %v after its start", time.Since(began).Round(time.Millisecond))
}

// checkNotReady checks that edge e, started as name says with the store down, answers 503
// to /readyz and to a static read.
func (f *edgeFixture) checkNotReady(t *testing.T, e *cmdtest.Edge, name string) {
	t.Helper()
	f.tally.sent += 2
	if r := e.Get(t, "/readyz", ""); r.StatusCode != http.StatusServiceUnavailable {
		f.tally.wrong++
		t.Errorf("/readyz of an edge started with %s and the store down: %s, want 503\n%s", name, r.Status, r.Data)
	}
	if r := e.Get(t, f.static[0], f.token); r.StatusCode != http.StatusServiceUnavailable {
		f.tally.wrong++
		t.Errorf("GET %s of an edge started with %s and the store down: %s, want 503", f.static[0], name, r.Status)
	}
}

// corruptOneDocument changes the bytes of one document file in a cache folder.
func corruptOneDocument(t *testing.T, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "objects", "*", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cached document in %s (%v)", dir, err)
	}
	slices.Sort(files)
	if err := os.WriteFile(files[0], []byte(`{"corrupt":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
}

func withoutKey(m map[string]string, key string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}
