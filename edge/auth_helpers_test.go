package edge

import (
	"bytes"
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/trainingco/catalogue/builder/apitoken"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// authT0 is the fake clock's start, a whole second: Unix 1893456000.
var authT0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// authT0Unix is authT0 in Unix seconds, written out: 60 years of 365 days plus 15 leap days.
const authT0Unix = 1893456000

// fakeNow is a clock that moves only when a test moves it.
type fakeNow struct{ ns atomic.Int64 }

func (f *fakeNow) now() time.Time { return time.Unix(0, f.ns.Load()).UTC() }

// at sets the clock to authT0 + d.
func (f *fakeNow) at(d time.Duration) { f.ns.Store(authT0.Add(d).UnixNano()) }

// lockedBuffer collects log output written from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// authEnv is a started server on a real migrated database holding one active token, a
// fake clock, and the server's JSON log.
type authEnv struct {
	s       *Server
	clock   *fakeNow
	dbURL   string
	conn    *pgx.Conn // the primary, to issue and revoke tokens
	replica *pgxpool.Pool
	token   string
	tokenID int64
	logs    *lockedBuffer
	reg     *prometheus.Registry
}

// authCourse is the one document the test snapshot holds.
const authCourse = `{"id":1,"name":"Alpha"}`

// newAuthEnv starts a server with the default configuration changed by edit (nil: none);
// its token refresh never fires by itself unless edit sets a shorter one. Its log, request
// lines included (Options.RequestLog), is env.logs.
func newAuthEnv(t *testing.T, edit func(*config.Config)) *authEnv {
	t.Helper()
	return newAuthEnvWith(t, edit, nil)
}

// newAuthEnvWith is newAuthEnv with the server's options changed by editOpts (nil: none).
func newAuthEnvWith(t *testing.T, edit func(*config.Config), editOpts func(*Options)) *authEnv {
	t.Helper()
	ctx := context.Background()
	env := &authEnv{clock: &fakeNow{}, logs: &lockedBuffer{}, reg: prometheus.NewRegistry()}
	env.clock.at(0)
	env.dbURL = testkit.NewMigratedDatabase(t)
	env.conn = testkit.Connect(t, env.dbURL)
	env.tokenID, env.token = env.issue(t, "auth tests")
	var err error
	env.replica, err = pgxpool.New(ctx, env.dbURL)
	if err != nil {
		t.Fatalf("open pool: %v", err)
	}
	t.Cleanup(env.replica.Close)

	st := openStore(t, testkit.NewLocalStore(t))
	publish(t, st, fixture{id: "snap-auth", docs: map[string]string{"/public/course/1": authCourse}})
	cfg := config.Default()
	cfg.Edge.PollInterval = time.Hour
	cfg.Edge.TokenRefresh = time.Hour
	if edit != nil {
		edit(&cfg)
	}
	opts := Options{Config: cfg, Store: st, Replica: env.replica, Templates: templates.MustDefault(),
		Logger: slog.New(slog.NewJSONHandler(env.logs, nil)), RequestLog: env.logs, Now: env.clock.now, Registry: env.reg}
	if editOpts != nil {
		editOpts(&opts)
	}
	env.s, err = New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	env.s.Start(runCtx)
	return env
}

// issue creates an active token in the database.
func (env *authEnv) issue(t *testing.T, name string) (int64, string) {
	t.Helper()
	id, token, err := apitoken.Create(context.Background(), env.conn, name)
	if err != nil {
		t.Fatalf("create token: %v", err)
	}
	return id, token
}

// refreshTokens makes the server reload the token hashes now, as its poller would.
func (env *authEnv) refreshTokens(t *testing.T) {
	t.Helper()
	if err := env.s.auth.Refresh(context.Background()); err != nil {
		t.Fatalf("refresh tokens: %v", err)
	}
}

// authHeaders are the response headers the auth tests compare; absent ones are left out.
var authHeaders = []string{"Content-Type", "WWW-Authenticate", "X-RateLimit-Limit",
	"X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"}

// req describes one request: its target, Authorization values (none: no header) and
// remote address (empty: httptest's 192.0.2.1:1234).
type req struct {
	method string // empty: GET
	target string
	auth   []string
	remote string
	header map[string]string
}

// send serves r and returns the status, the authHeaders present, and the body.
func (env *authEnv) send(r req) response {
	hr := httptest.NewRequest(cmp.Or(r.method, http.MethodGet), r.target, nil)
	for _, a := range r.auth {
		hr.Header.Add("Authorization", a)
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	if r.remote != "" {
		hr.RemoteAddr = r.remote
	}
	rec := httptest.NewRecorder()
	env.s.Handler().ServeHTTP(rec, hr)
	got := response{Status: rec.Code, Headers: map[string]string{}, Body: rec.Body.String()}
	for _, k := range authHeaders {
		if v, ok := rec.Result().Header[http.CanonicalHeaderKey(k)]; ok {
			got.Headers[k] = strings.Join(v, ", ")
		}
	}
	return got
}

// bearer is the Authorization value that carries the env's token.
func (env *authEnv) bearer() []string { return []string{"Bearer " + env.token} }

const (
	course1         = "/api/v2/public/course/1"
	bodyUnauth      = `{"message":"Unauthenticated."}` + "\n"
	bodyTooMany     = `{"message":"Too Many Attempts."}` + "\n"
	jsonContentType = "application/json"
)

// ok is the response to an accepted request for course 1 with remaining requests left.
func ok(remaining string) response {
	return response{Status: 200, Body: authCourse, Headers: map[string]string{
		"Content-Type": jsonContentType, "X-RateLimit-Limit": "60", "X-RateLimit-Remaining": remaining}}
}

// unauth is the 401 of D22.
var unauth = response{Status: 401, Body: bodyUnauth, Headers: map[string]string{
	"Content-Type": jsonContentType, "WWW-Authenticate": "Bearer"}}
