package security

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trainingco/catalogue/builder"
	"github.com/trainingco/catalogue/builder/apitoken"
	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/edge"
	"github.com/trainingco/catalogue/edge/auth"
	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// base is the edge's default base path.
const base = "/api/v2"

// clock is a fake clock that moves only when a test moves it.
type clock struct{ ns atomic.Int64 }

func newClock(t time.Time) *clock {
	c := &clock{}
	c.set(t)
	return c
}

func (c *clock) now() time.Time  { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) set(t time.Time) { c.ns.Store(t.UnixNano()) }

// syncBuffer collects log output written from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *syncBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	return len(p), nil
}

func (l *syncBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

// siteOptions change what newSite builds; the zero value is a local store, a rate limit no
// test reaches and logs thrown away.
type siteOptions struct {
	store config.Store         // zero: a fresh local folder
	edit  func(*config.Config) // applied last
	logs  io.Writer            // the JSON logs of builder and edge; nil: discarded
	issue []string             // names of more tokens to issue before the edge starts
}

// site is a catalogue built by builder.Run into a store and served by an edge in-process,
// on a fake clock set to today, with one active API token.
type site struct {
	ds      *dataset
	cfg     config.Config
	dbURL   string
	conn    *pgx.Conn // the primary, to issue and revoke tokens
	store   store.Store
	srv     *edge.Server
	handler http.Handler
	clock   *clock
	token   string
	tokenID int64
	issued  []issued // siteOptions.issue's tokens, in order
}

// issued is a token and its id.
type issued struct {
	id    int64
	token string
}

// newSite loads ds into a fresh database, builds it with builder.Run and starts an edge on
// the result; everything stops when the test ends.
func newSite(t testing.TB, ds *dataset, o siteOptions) *site {
	t.Helper()
	ctx := context.Background()
	s := &site{ds: ds, clock: newClock(today)}
	s.dbURL = testkit.NewMigratedDatabase(t)
	ds.load(t, s.dbURL)
	s.conn = testkit.Connect(t, s.dbURL)
	s.tokenID, s.token = s.issue(t, "security tests")
	for _, name := range o.issue {
		id, token := s.issue(t, name)
		s.issued = append(s.issued, issued{id, token})
	}

	if o.store.URL == "" {
		o.store = testkit.NewLocalStore(t)
	}
	if o.logs == nil {
		o.logs = io.Discard
	}
	log := slog.New(slog.NewJSONHandler(o.logs, nil))
	s.cfg = config.Default()
	s.cfg.Database.URL = s.dbURL
	s.cfg.Store = o.store
	s.cfg.Edge.RateLimit = 1 << 30
	s.cfg.Edge.PollInterval = time.Hour
	s.cfg.Edge.TokenRefresh = config.MaxTokenRefresh
	if o.edit != nil {
		o.edit(&s.cfg)
	}
	if _, err := builder.Run(ctx, s.cfg, builder.RunOptions{Now: s.clock.now, Logger: log}); err != nil {
		t.Fatalf("dataset %d: builder.Run: %v", ds.seed, err)
	}
	s.start(t, log)
	return s
}

// start opens the store and the replica and starts an edge on them.
func (s *site) start(t testing.TB, log *slog.Logger) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options(s.cfg.Store))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	s.store = st
	pool, err := pgxpool.New(ctx, s.cfg.ReplicaURL())
	if err != nil {
		t.Fatalf("open pool: %v", err)
	}
	t.Cleanup(pool.Close)
	// The templates the builder used: a provider's overrides in templates.dir included.
	tpl, err := templates.Load(s.cfg.Templates.Dir)
	if err != nil {
		t.Fatalf("load templates: %v", err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var jwt *auth.JWTVerifier
	if j := s.cfg.Edge.JWT; j.Enabled() {
		jwt, err = auth.NewJWTVerifier(runCtx, auth.JWTOptions{HMACSecret: []byte(j.HMACSecret), JWKSURL: j.JWKSURL,
			Issuer: j.Issuer, Audience: j.Audience, Leeway: j.Leeway, StudentClaim: j.StudentClaim, MaxLifetime: j.MaxLifetime, Log: log, Now: s.clock.now})
		if err != nil {
			t.Fatalf("JWT verifier: %v", err)
		}
	}
	s.srv, err = edge.New(edge.Options{Config: s.cfg, Store: st, Replica: pool,
		Templates: tpl, Logger: log, Now: s.clock.now, JWT: jwt})
	if err != nil {
		t.Fatalf("edge.New: %v", err)
	}
	s.srv.Start(runCtx)
	s.handler = s.srv.Handler()
}

// issue creates an active token.
func (s *site) issue(t testing.TB, name string) (int64, string) {
	t.Helper()
	id, token, err := apitoken.Create(context.Background(), s.conn, name)
	if err != nil {
		t.Fatalf("create token: %v", err)
	}
	return id, token
}

// get sends GET target with the site's token and returns the recorded response.
func (s *site) get(target string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, target, nil)
	r.Header.Set("Authorization", "Bearer "+s.token)
	return s.serve(r)
}

// metrics returns the edge's /metrics, which edge.metrics_listen serves (D26).
func (s *site) metrics() string {
	rec := httptest.NewRecorder()
	s.srv.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

// serve sends r to the edge's handler.
func (s *site) serve(r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, r)
	return rec
}
