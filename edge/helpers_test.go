package edge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trainingco/catalogue/builder/apitoken"
	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// fixture is a snapshot to publish: its id and its documents by route.
type fixture struct {
	id       string
	docs     map[string]string
	today    string // the day it was built for; empty: 2027-03-01
	timezone string // the builder's timezone; empty: UTC
	// modified are the change numbers of course and class routes, and tombstones the
	// deletions, of the feeds (D35); nil: a snapshot without feeds.
	modified   map[string]int64
	tombstones []snapshot.Tombstone
}

// publish writes f into st the way the builder does: objects, manifest, then pointer. A
// route every snapshot has (snapshot.RequiredRoutes) that f lacks gets the document the
// builder renders for a catalogue without courses, and the manifest counts what it lists,
// as the builder's do.
func publish(t testing.TB, st store.Store, f fixture) {
	t.Helper()
	ctx := context.Background()
	m := snapshot.Manifest{ID: f.id, Header: snapshot.Header{BuiltAt: time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC),
		Today: cmp.Or(f.today, "2027-03-01"), Timezone: cmp.Or(f.timezone, "UTC")}, Documents: map[string]snapshot.Entry{}}
	docs := maps.Clone(f.docs)
	for _, r := range snapshot.RequiredRoutes() {
		if _, ok := docs[r]; !ok {
			docs[r] = `{"data":[]}`
			if r == snapshot.RoutePopular {
				docs[r] = `[]`
			}
		}
	}
	for route, body := range docs {
		h := snapshot.Hash([]byte(body))
		m.Documents[route] = snapshot.Entry{Hash: h, Size: int64(len(body)), Modified: f.modified[route]}
		if err := st.Put(ctx, snapshot.ObjectKey(h), []byte(body)); err != nil {
			t.Fatalf("put object: %v", err)
		}
	}
	m.Counts = snapshot.CountsOf(m.Documents)
	if f.modified != nil {
		m.Feed = &snapshot.Feed{Tombstones: f.tombstones}
		for _, n := range f.modified {
			m.Feed.Last = max(m.Feed.Last, n)
		}
		for _, ts := range f.tombstones {
			m.Feed.Last = max(m.Feed.Last, ts.Modified)
		}
	}
	if err := snapshot.WriteManifest(ctx, st, &m); err != nil {
		t.Fatal(err)
	}
	if err := snapshot.WritePointer(ctx, st, snapshot.Pointer{ID: f.id, PublishedAt: m.BuiltAt}); err != nil {
		t.Fatal(err)
	}
}

func putJSON(t testing.TB, st store.Store, key string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(context.Background(), key, b); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

// watchedStore counts the Gets of each key and fails every call while down is set: a store
// that has become unreachable.
type watchedStore struct {
	store.Store
	down atomic.Bool
	mu   sync.Mutex
	gets map[string]int
	// before, when set, runs before every Get; an error it returns fails the Get. after,
	// when set, runs once a Get has returned.
	before func(key string) error
	after  func(key string)
}

func watch(st store.Store) *watchedStore { return &watchedStore{Store: st, gets: map[string]int{}} }

func (w *watchedStore) Get(ctx context.Context, key string) ([]byte, error) {
	return w.read(key, func() ([]byte, error) { return w.Store.Get(ctx, key) })
}

// GetMax is watched like Get: the edge reads documents and manifests through it.
func (w *watchedStore) GetMax(ctx context.Context, key string, limit int64) ([]byte, error) {
	return w.read(key, func() ([]byte, error) { return w.Store.GetMax(ctx, key, limit) })
}

// read counts a read of key, applies down, before and after, and reads with get.
func (w *watchedStore) read(key string, get func() ([]byte, error)) ([]byte, error) {
	if w.down.Load() {
		return nil, errors.New("dial tcp 127.0.0.1:9: connection refused")
	}
	w.mu.Lock()
	w.gets[key]++
	before, after := w.before, w.after
	w.mu.Unlock()
	if before != nil {
		if err := before(key); err != nil {
			return nil, err
		}
	}
	if after != nil {
		defer after(key)
	}
	return get()
}

// takeGets returns the Gets counted so far and starts counting again.
func (w *watchedStore) takeGets() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	g := w.gets
	w.gets = map[string]int{}
	return g
}

// openStore opens a fresh store of the given configuration and creates its folder or bucket.
func openStore(t testing.TB, cfg config.Store) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), store.Options(cfg))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	if err := st.Ensure(context.Background()); err != nil {
		t.Fatalf("ensure store: %v", err)
	}
	return st
}

// newReplica returns a pool on a fresh migrated database and a valid API token stored in it.
func newReplica(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	ctx := context.Background()
	dbURL := testkit.NewMigratedDatabase(t)
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	_, token, err := apitoken.Create(ctx, conn, "edge tests")
	if err != nil {
		t.Fatalf("create token: %v", err)
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatalf("open pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool, token
}

// testConfig is the default configuration with a poll interval long enough never to fire
// during a test (tests call refresh themselves) and a rate limit no test reaches.
func testConfig() config.Config {
	cfg := config.Default()
	cfg.Edge.PollInterval = time.Hour
	cfg.Edge.CacheMaxAge = 90 * time.Second
	cfg.Edge.RateLimit = 1_000_000
	return cfg
}

// testServer is a started server and a token it accepts.
type testServer struct {
	*Server
	token string
}

// newTestServer returns a started server on st with a fresh database; its background work
// stops with the test.
func newTestServer(t testing.TB, st store.Store, cfg config.Config) testServer {
	t.Helper()
	return newLoggedServer(t, st, cfg, io.Discard)
}

// newLoggedServer is newTestServer with the server's JSON log, request lines included,
// written to logs.
func newLoggedServer(t testing.TB, st store.Store, cfg config.Config, logs io.Writer) testServer {
	t.Helper()
	replica, token := newReplica(t)
	s, err := New(Options{Config: cfg, Store: st, Replica: replica, Templates: templates.MustDefault(),
		Logger: slog.New(slog.NewJSONHandler(logs, nil)), RequestLog: logs})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s.Start(ctx)
	return testServer{Server: s, token: token}
}

// get sends an authenticated request; see do.
func (ts testServer) get(method, target string, hdr map[string]string, keep ...string) response {
	h := map[string]string{"Authorization": "Bearer " + ts.token}
	for k, v := range hdr {
		h[k] = v
	}
	return do(ts.Handler(), method, target, h, keep...)
}

// refresh makes s load the snapshot the pointer names now.
func refresh(t testing.TB, s *Server) {
	t.Helper()
	if err := s.docs.Refresh(context.Background()); err != nil {
		t.Fatalf("refresh: %v", err)
	}
}

// response is what a test compares: the status, the headers it names, and the body.
type response struct {
	Status  int
	Headers map[string]string
	Body    string
}

// do sends a request to h and returns the response with the headers named in keep; a
// header that is absent is left out, so a want can say that it must be absent.
func do(h http.Handler, method, target string, reqHeaders map[string]string, keep ...string) response {
	req := httptest.NewRequest(method, target, nil)
	for k, v := range reqHeaders {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	got := response{Status: rec.Code, Headers: map[string]string{}, Body: rec.Body.String()}
	for _, k := range keep {
		if v, ok := rec.Result().Header[http.CanonicalHeaderKey(k)]; ok {
			got.Headers[k] = strings.Join(v, ", ")
		}
	}
	return got
}
