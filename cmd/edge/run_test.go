package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/builder/apitoken"
	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/scripts/testkit"
)

const course1 = `{"id":1,"name":"Alpha","type":"Online","description":"<p>Hi</p>"}`

// publishOne publishes a snapshot of one course document into the local store at dir, with
// the lists every snapshot has (snapshot.RequiredRoutes) empty.
func publishOne(t *testing.T, dir string) {
	t.Helper()
	ctx := context.Background()
	st := store.NewLocal(dir)
	bodies := map[string]string{snapshot.CourseRoute(1): course1}
	for _, r := range snapshot.RequiredRoutes() {
		bodies[r] = `{"data":[]}`
	}
	docs := map[string]snapshot.Entry{}
	objects := map[string][]byte{}
	for r, body := range bodies {
		h := snapshot.Hash([]byte(body))
		docs[r] = snapshot.Entry{Hash: h, Size: int64(len(body))}
		objects[snapshot.ObjectKey(h)] = []byte(body)
	}
	objects[snapshot.ManifestKey("snap-1")], _ = json.Marshal(snapshot.Manifest{ID: "snap-1",
		Header: snapshot.Header{Counts: snapshot.CountsOf(docs)}, Documents: docs})
	p, _ := json.Marshal(snapshot.Pointer{ID: "snap-1"})
	for key, body := range objects {
		if err := st.Put(ctx, key, body); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Put(ctx, snapshot.PointerKey, p); err != nil {
		t.Fatal(err)
	}
}

// newToken stores a token in the database at dbURL and returns it.
func newToken(t *testing.T, dbURL string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	_, token, err := apitoken.Create(ctx, conn, "run test")
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// writeConfig writes a configuration file and returns its path.
func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "catalogue.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// started runs run with args until the test ends, waits until its first loads are over
// (its "started" line), and returns the address it listens on and a function that stops it
// and returns run's error and its log.
func started(t *testing.T, args ...string) (addr string, stop func() (string, error)) {
	t.Helper()
	return startedUntil(t, "started", args...)
}

// startedUntil is started waiting for the log line whose msg is until: "listening" returns
// as soon as the port is open.
func startedUntil(t *testing.T, until string, args ...string) (addr string, stop func() (string, error)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, args, io.Discard, pw)
		pw.Close()
	}()
	addrs := make(chan string, 1)
	var log strings.Builder // written until the pipe closes, read after
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		listenAddr := ""
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			log.Write(sc.Bytes())
			log.WriteByte('\n')
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) != nil {
				continue
			}
			if line.Msg == "listening" {
				listenAddr = line.Addr
			}
			if line.Msg == until {
				addrs <- listenAddr
			}
		}
	}()
	var runErr error
	// Once, however many callers: a test may stop the edge in a goroutine of its own while
	// the cleanup stops it too, and each gets the log only once it is whole.
	stop = sync.OnceValues(func() (string, error) {
		cancel()
		runErr = <-done
		<-logged
		return log.String(), runErr
	})
	t.Cleanup(func() { _, _ = stop() })
	select {
	case addr = <-addrs:
		return addr, stop
	case err := <-done:
		t.Fatalf("run returned before listening: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatalf("run did not log %q within 30 s", until)
	}
	return "", nil
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitReadyz polls base's /readyz until it answers status (with a body containing each of
// bodyHas) and returns the last answer; it gives up after 30 s.
func waitReadyz(t *testing.T, base string, status int, bodyHas ...string) (int, string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, body := get(t, base+"/readyz", "")
		match := got == status
		for _, s := range bodyHas {
			match = match && strings.Contains(body, s)
		}
		if match || time.Now().After(deadline) {
			return got, body
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// get returns the status and body of GET url.
func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

func TestRunServesAndShutsDown(t *testing.T) {
	storeDir := t.TempDir()
	publishOne(t, storeDir)
	dbURL := testkit.NewMigratedDatabase(t)
	token := newToken(t, dbURL)
	metricsAt := freeAddr(t)
	cfg := writeConfig(t, fmt.Sprintf("database:\n  url: %s\nstore:\n  url: file://%s\nedge:\n  listen: 127.0.0.1:9\n  metrics_listen: %s\n", dbURL, storeDir, metricsAt))

	addr, stop := started(t, "--config", cfg, "--listen", "127.0.0.1:0") // the flag wins over the file
	base := "http://" + addr
	type answer struct {
		Status int
		Body   string
	}
	for _, tt := range []struct {
		path string
		want answer
	}{
		{"/healthz", answer{200, `{"status":"ok"}` + "\n"}},
		{"/readyz", answer{200, `{"snapshot":"snap-1","status":"ok"}` + "\n"}},
		{"/api/v2/public/course/1", answer{200, course1}},
	} {
		status, body := get(t, base+tt.path, token)
		if diff := cmp.Diff(tt.want, answer{status, body}); diff != "" {
			t.Errorf("GET %s mismatch (-want +got):\n%s", tt.path, diff)
		}
	}
	// The metrics are on edge.metrics_listen only, never on the public port (D26).
	if status, _ := get(t, base+"/metrics", ""); status != 404 {
		t.Errorf("GET /metrics on edge.listen: status %d, want 404", status)
	}
	if status, body := get(t, "http://"+metricsAt+"/metrics", ""); status != 200 || !strings.Contains(body, "catalogue_edge_requests_total") {
		t.Errorf("GET /metrics on edge.metrics_listen (%q): status %d, want 200 with the edge's metrics:\n%.300s", metricsAt, status, body)
	}
	log, err := stop()
	if err != nil {
		t.Errorf("run after cancel = %v, want nil", err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("the edge still answers after shutdown")
	}
	// The configuration once, one field per key, durations as Go durations ("10s").
	if strings.Count(log, `"msg":"configuration"`) != 1 || !strings.Contains(log, `"edge.token_refresh":"10s"`) ||
		strings.Contains(log, `10000000000`) {
		t.Errorf("log lacks one configuration line with edge.token_refresh \"10s\":\n%s", log)
	}
	for _, want := range []string{`"msg":"configuration"`, `"msg":"listening","addr":"` + addr + `"`,
		`"msg":"request","method":"GET","route":"/healthz","path":"/healthz","status":200,`,
		`"msg":"request","method":"GET","route":"/api/v2/public/course/:id","path":"/api/v2/public/course/1","status":200,`,
		`"msg":"shutting down"`, `"msg":"stopped"`} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %s:\n%s", want, log)
		}
	}
}

// TestRunWithDatabaseDown: the edge starts with its database down, serves its probes, and
// reports not ready: it has its snapshot but no token set.
func TestRunWithDatabaseDown(t *testing.T) {
	storeDir := t.TempDir()
	publishOne(t, storeDir)
	// Port 9 (discard) on loopback: nothing listens, so every connection is refused.
	t.Setenv("CATALOGUE_DATABASE_URL", "postgres://nobody:pw-hunter2@127.0.0.1:9/nothing?sslmode=disable")
	t.Setenv("CATALOGUE_STORE_URL", "file://"+storeDir)
	addr, stop := started(t, "--listen", "127.0.0.1:0")
	// Not ready: without the token set every authenticated request would be refused (D26).
	if status, body := waitReadyz(t, "http://"+addr, 503, "The token list is not loaded yet."); status != 503 {
		t.Errorf("GET /readyz: status %d (%s), want 503 once the snapshot is loaded", status, body)
	}
	if status, body := get(t, "http://"+addr+"/healthz", ""); status != 200 {
		t.Errorf("GET /healthz: status %d (%s), want 200", status, body)
	}
	log, err := stop()
	if strings.Contains(log, `"level":"ERROR","msg":"request failed","status":503,"method":"GET","path":"/readyz"`) {
		t.Errorf("a probe that finds the edge not ready is logged as an error:\n%s", log)
	}
	if err != nil {
		t.Errorf("run after cancel = %v, want nil", err)
	}
	if strings.Contains(log, "hunter2") {
		t.Errorf("log shows the database password:\n%s", log)
	}
	if !strings.Contains(log, "nobody:xxxxx@127.0.0.1:9") {
		t.Errorf("log lacks the redacted database URL:\n%s", log)
	}
}

func TestRunRefusesBadInput(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"unknown flag", []string{"--nope"}, nil, "flag provided but not defined: -nope"},
		{"stray argument", []string{"serve"}, nil, `unexpected arguments ["serve"]`},
		{"missing config file", []string{"--config", "/nonexistent/catalogue.yaml"}, nil, "read config /nonexistent/catalogue.yaml"},
		{"bad key", []string{}, map[string]string{"CATALOGUE_EDGE_RATE_LIMIT": "0", "CATALOGUE_DATABASE_URL": "postgres://x@127.0.0.1:9/x"}, "edge.rate_limit: must be > 0 (got 0)"},
		{"no database", []string{}, map[string]string{"CATALOGUE_DATABASE_URL": ""}, "replica.url or database.url: must be set"},
		{"bad address", []string{"--listen", "127.0.0.1:-1"}, map[string]string{"CATALOGUE_DATABASE_URL": "postgres://x@127.0.0.1:9/x"}, "listen: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CATALOGUE_STORE_URL", "file://"+t.TempDir())
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			err := run(context.Background(), tt.args, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("run(%q) = %v, want an error containing %q", tt.args, err, tt.want)
			}
		})
	}
}

func TestRunHelp(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), []string{"-h"}, &out, io.Discard); err != nil {
		t.Fatalf("run(-h) = %v, want nil", err)
	}
	for _, want := range []string{"usage: edge [--config FILE] [--listen ADDRESS]", "-config file", "-listen address"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, out.String())
		}
	}
}

// TestRunListensBeforeLoading: the port opens at once, before the first snapshot has
// loaded; meanwhile /readyz answers 503 and /healthz 200 (D26), where a refused connection
// would tell a probe nothing. The store here takes every request and answers none until
// the test ends, so the first load is still waiting while the probes are answered.
func TestRunListensBeforeLoading(t *testing.T) {
	var held atomic.Int32      // requests the store is holding now
	var abandoned atomic.Int32 // requests the edge gave up before the store answered
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		held.Add(1)
		defer held.Add(-1)
		select {
		case <-release:
		case <-r.Context().Done():
			abandoned.Add(1)
		}
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
	}))
	defer hang.Close()
	defer close(release)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("CATALOGUE_STORE_URL", "s3://hangs/catalogue")
	t.Setenv("CATALOGUE_STORE_ENDPOINT", hang.URL)
	t.Setenv("CATALOGUE_DATABASE_URL", "postgres://nobody@127.0.0.1:9/nothing?sslmode=disable")
	addr, _ := startedUntil(t, "listening", "--listen", "127.0.0.1:0")
	for deadline := time.Now().Add(30 * time.Second); held.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond) // the first load's request on its way to the store
	}
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 503} {
		if status, body := get(t, "http://"+addr+path, ""); status != want {
			t.Errorf("GET %s: status %d (%s), want %d", path, status, body, want)
		}
	}
	if held.Load() == 0 || abandoned.Load() > 0 {
		t.Errorf("the first load is not waiting on the store while the probes are answered (held %d, abandoned %d)",
			held.Load(), abandoned.Load())
	}
}

// TestRunWithoutRequestLines: log.requests false leaves out the line of each request, and
// only it.
func TestRunWithoutRequestLines(t *testing.T) {
	storeDir := t.TempDir()
	publishOne(t, storeDir)
	t.Setenv("CATALOGUE_DATABASE_URL", "postgres://nobody@127.0.0.1:9/nothing?sslmode=disable")
	t.Setenv("CATALOGUE_STORE_URL", "file://"+storeDir)
	t.Setenv("CATALOGUE_LOG_REQUESTS", "false")
	addr, stop := started(t, "--listen", "127.0.0.1:0")
	if status, _ := get(t, "http://"+addr+"/healthz", ""); status != 200 {
		t.Fatalf("GET /healthz: %d", status)
	}
	log, err := stop()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(log, `"msg":"request"`) || !strings.Contains(log, `"msg":"stopped"`) {
		t.Errorf("log with log.requests false holds request lines, or lacks the others:\n%s", log)
	}
}

// TestRunWarnsWithoutCacheDir: an edge without edge.cache_dir says at start that it cannot
// serve during a store outage it starts in; with one, it does not.
func TestRunWarnsWithoutCacheDir(t *testing.T) {
	storeDir := t.TempDir()
	publishOne(t, storeDir)
	t.Setenv("CATALOGUE_DATABASE_URL", "postgres://nobody@127.0.0.1:9/nothing?sslmode=disable")
	t.Setenv("CATALOGUE_STORE_URL", "file://"+storeDir)
	const warning = `"level":"WARN","msg":"edge.cache_dir is not set: if this edge starts while the store is unreachable, it answers 503 until the store is back`
	for _, dir := range []string{"", t.TempDir()} {
		t.Setenv("CATALOGUE_EDGE_CACHE_DIR", dir)
		_, stop := started(t, "--listen", "127.0.0.1:0")
		log, err := stop()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(log, warning); got != (dir == "") {
			t.Errorf("edge.cache_dir %q: warning logged %v, want %v:\n%s", dir, got, dir == "", log)
		}
	}
}

// TestRunDrainsBeforeStopping: told to stop with edge.shutdown_delay set, the edge answers
// /readyz 503 for that long while it goes on serving, each answer asking the client to
// close its connection (so a client's next request opens one the load balancer sends
// elsewhere), and only then stops accepting connections. It closed its port at once, and a
// load balancer still sending it requests until its probe failed got refused connections
// (an operator's review).
func TestRunDrainsBeforeStopping(t *testing.T) {
	addr, token, stop := startedPublished(t, "edge:\n  shutdown_delay: 2s\n")
	base := "http://" + addr
	stopped := make(chan time.Time, 1)
	told := time.Now()
	go func() { _, _ = stop(); stopped <- time.Now() }()

	if status, body := waitReadyz(t, base, 503, "shutting down"); status != 503 || body != `{"message":"The server is shutting down."}`+"\n" {
		t.Fatalf("GET /readyz after the signal: %d %q, want 503 and the server shutting down", status, body)
	}
	req, _ := http.NewRequest("GET", base+"/api/v2/public/course/1", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("a request while draining: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || !res.Close {
		t.Errorf("a course read while draining: status %d, Connection: close %v; want 200, the connection closed after it", res.StatusCode, res.Close)
	}
	at := <-stopped
	if d := at.Sub(told); d < 2*time.Second {
		t.Errorf("the edge stopped %v after the signal, want at least edge.shutdown_delay (2s)", d)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("the edge still answers after shutdown")
	}
}

// startedPublished starts the edge on a store with publishOne's snapshot and a migrated
// database, its configuration file that and more (YAML); it returns the edge's address, a
// token it accepts, and started's stop.
func startedPublished(t *testing.T, more string) (addr, token string, stop func() (string, error)) {
	addr, token, stop, _ = startedPublishedOn(t, more)
	return addr, token, stop
}

// startedPublishedOn is startedPublished, and the URL of the edge's database.
func startedPublishedOn(t *testing.T, more string) (addr, token string, stop func() (string, error), dbURL string) {
	t.Helper()
	storeDir := t.TempDir()
	publishOne(t, storeDir)
	dbURL = testkit.NewMigratedDatabase(t)
	token = newToken(t, dbURL)
	cfg := writeConfig(t, fmt.Sprintf("database:\n  url: %s\nstore:\n  url: file://%s\n", dbURL, storeDir)+more)
	addr, stop = started(t, "--config", cfg, "--listen", "127.0.0.1:0")
	return addr, token, stop, dbURL
}

// TestRunKeepsItsPromisesWhileDraining: while it drains, the edge goes on refreshing what
// it serves from: a token revoked then stops working within edge.token_refresh (D22). Its
// loaders stopped at the signal: a revoked token kept working for the whole delay, up to a
// minute, and so did the snapshot it served, however stale (the diff's review).
func TestRunKeepsItsPromisesWhileDraining(t *testing.T) {
	addr, token, stop, dbURL := startedPublishedOn(t, "edge:\n  shutdown_delay: 4s\n  token_refresh: 200ms\n")
	base := "http://" + addr
	stopped := make(chan struct{})
	go func() { _, _ = stop(); close(stopped) }()
	defer func() { <-stopped }()
	if status, _ := waitReadyz(t, base, 503, "shutting down"); status != 503 {
		t.Fatalf("GET /readyz after the signal: %d, want 503", status)
	}
	testkit.Exec(t, dbURL, "UPDATE api_tokens SET revoked_at = now()")
	deadline := time.Now().Add(3 * time.Second)
	status, _ := get(t, base+"/api/v2/public/course/1", token)
	for status != 401 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		status, _ = get(t, base+"/api/v2/public/course/1", token)
	}
	if status != 401 {
		t.Errorf("a token revoked while the edge drains: status %d 3 s later, want 401 (edge.token_refresh 200ms)", status)
	}
}
