package edge

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/trainingco/catalogue/builder/apitoken"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// searchNow is the tests' clock: 2027-03-10 at noon UTC, so "today" (D1) is 2027-03-10.
var searchNow = time.Date(2027, 3, 10, 12, 0, 0, 0, time.UTC)

// searchSeed is the search tests' catalogue. Today is 2027-03-10. Every row is chosen:
//
//	course 1 Welding Basics (B&M, public): 12 started yesterday (excluded: past, in person),
//	  11 starts today (capped 2, 2 registrations: full), 9, 10, 13 all start 2027-04-01
//	  (inserted 10, 13, 9 so that only the id orders them; 9 is over-booked: 0 seats),
//	  14 is not public.
//	course 2 Online Safety (Online, public): 20 is past but online (included; it has a
//	  room, yet city and state are null for online), 21 upcoming, 22 not public.
//	course 3 "100% Cotton_Weaving\Basics" (Blended): 30, capped 5 with 5 registrations.
//	course 4 Secret Welding (not public): 40 is a public class of it (excluded).
//	course 5 "100 Percent Cotton Weaving": what "100%" and "Cotton_Weaving" would match
//	  as wildcards. course 6 "Advanced <WeavingBasics> & More": what "Weaving\Basics"
//	  would match if \ escaped the B; its name also needs JSON escaping.
//	course 7 Hidden Classes Only (public): its only class is not public.
const searchSeed = `
INSERT INTO locations (id, name, city, state, zip, country) VALUES (1, 'Main Campus', 'Springfield', 'IL', '62701', 'US');
INSERT INTO rooms (id, location_id, name) VALUES (1, 1, 'Room 101');
INSERT INTO courses (id, name, type, description, is_public) VALUES
  (1, 'Welding Basics', 'Brick and Mortar', '<p>Weld</p>', true),
  (2, 'Online Safety', 'Online', NULL, true),
  (3, '100% Cotton_Weaving\Basics', 'Blended', NULL, true),
  (4, 'Secret Welding', 'Brick and Mortar', NULL, false),
  (5, '100 Percent Cotton Weaving', 'Brick and Mortar', NULL, true),
  (6, 'Advanced <WeavingBasics> & More', 'Blended', NULL, true),
  (7, 'Hidden Classes Only', 'Brick and Mortar', NULL, true);
INSERT INTO classes (id, course_id, room_id, start_date, end_date, schedule, cost, seat_limit, down_payment, is_public) VALUES
  (12, 1, 1,    '2027-03-09', '2027-03-11', 'Daily', 450, 10, NULL, true),
  (11, 1, NULL, '2027-03-10', '2027-03-12', 'Daily 9-5', 450, 2, NULL, true),
  (10, 1, 1,    '2027-04-01', '2027-04-03', 'Mon-Wed', 500, 10, 5000, true),
  (13, 1, 1,    '2027-04-01', '2027-04-02', NULL, 480, NULL, NULL, true),
  (14, 1, 1,    '2027-05-01', '2027-05-02', NULL, 500, NULL, NULL, false),
  (9,  1, 1,    '2027-04-01', '2027-04-01', NULL, 400, 1, NULL, true),
  (20, 2, 1,    '2026-01-10', '2026-01-20', 'Self-paced', 99, NULL, NULL, true),
  (21, 2, NULL, '2027-06-01', '2027-06-30', NULL, 120, 100, NULL, true),
  (22, 2, NULL, '2026-02-01', '2026-02-02', NULL, 120, NULL, NULL, false),
  (30, 3, 1,    '2027-07-01', '2027-07-05', NULL, 300, 5, NULL, true),
  (40, 4, 1,    '2027-04-05', '2027-04-06', NULL, 100, NULL, NULL, true),
  (50, 5, 1,    '2027-07-02', '2027-07-02', NULL, 200, NULL, NULL, true),
  (60, 6, NULL, '2027-08-01', '2027-08-03', NULL, 250, 8, NULL, true),
  (70, 7, 1,    '2027-09-01', '2027-09-02', NULL, 100, NULL, NULL, false);
INSERT INTO registrations (class_id) SELECT 12 FROM generate_series(1, 1);
INSERT INTO registrations (class_id) SELECT 11 FROM generate_series(1, 2);
INSERT INTO registrations (class_id) SELECT 10 FROM generate_series(1, 3);
INSERT INTO registrations (class_id) SELECT 13 FROM generate_series(1, 4);
INSERT INTO registrations (class_id) SELECT 9 FROM generate_series(1, 5);
INSERT INTO registrations (class_id) SELECT 30 FROM generate_series(1, 5);
INSERT INTO registrations (class_id) SELECT 60 FROM generate_series(1, 1);
`

// searchEnv is a started server on a seeded database, with a token it accepts.
type searchEnv struct {
	s     *Server
	token string
	dbURL string
}

// searchOpts change what newSearchEnv builds.
type searchOpts struct {
	now       time.Time                 // zero: searchNow
	clock     func() time.Time          // the server's clock; nil: now, fixed
	tracer    pgx.QueryTracer           // sees every query of the replica pool; nil: none
	edit      func(*config.Config)      // changes the default configuration
	templates *templates.Set            // nil: the embedded defaults
	replica   func(dbURL string) string // rewrites the replica URL (a proxy); nil: none
}

// newSearchEnv seeds a fresh database with seed, issues a token, and starts a server whose
// replica pool is configured like cmd/edge's.
func newSearchEnv(t testing.TB, seed string, o searchOpts) *searchEnv {
	t.Helper()
	ctx := context.Background()
	env := &searchEnv{dbURL: testkit.NewMigratedDatabase(t)}
	testkit.Exec(t, env.dbURL, seed)
	conn, err := pgx.Connect(ctx, env.dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	_, env.token, err = apitoken.Create(ctx, conn, "search tests")
	conn.Close(ctx)
	if err != nil {
		t.Fatalf("create token: %v", err)
	}
	replicaURL := env.dbURL
	if o.replica != nil {
		replicaURL = o.replica(env.dbURL)
	}
	pool := newSearchPool(t, replicaURL, o.tracer)
	cfg := config.Default()
	cfg.Edge.PollInterval, cfg.Edge.TokenRefresh, cfg.Edge.RateLimit = time.Hour, time.Hour, 1_000_000
	if o.edit != nil {
		o.edit(&cfg)
	}
	if o.now.IsZero() {
		o.now = searchNow
	}
	if o.templates == nil {
		o.templates = templates.MustDefault()
	}
	if o.clock == nil {
		o.clock = func() time.Time { return o.now }
	}
	st := openStore(t, testkit.NewLocalStore(t))
	env.s, err = New(Options{Config: cfg, Store: st, Replica: pool, Templates: o.templates,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: o.clock})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	env.s.Start(runCtx)
	return env
}

// newSearchPool opens a pool on dbURL as cmd/edge opens the replica's, with tracer (if not
// nil) seeing its queries.
func newSearchPool(t testing.TB, dbURL string, tracer pgx.QueryTracer) *pgxpool.Pool {
	t.Helper()
	pc, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		t.Fatalf("parse pool config: %v", err)
	}
	pc.ConnConfig.Tracer = tracer
	pool, err := pgxpool.NewWithConfig(context.Background(), pc)
	if err != nil {
		t.Fatalf("open pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// eachSearchPath runs test, as a subtest, against a server on a database seeded with seed
// for each way a search can run: through the index (edge.search_index, the default; the
// server's Start has loaded it) and in the replica alone; with the index, it then checks
// that every search went through it.
func eachSearchPath(t *testing.T, seed string, test func(*testing.T, *searchEnv)) {
	for _, index := range []bool{true, false} {
		name := map[bool]string{true: "index", false: "replica"}[index]
		t.Run(name, func(t *testing.T) {
			env := newSearchEnv(t, seed, searchOpts{edit: func(c *config.Config) { c.Edge.SearchIndex = index }})
			test(t, env)
			if !index {
				return
			}
			got := env.indexSearches(t)
			if got["used"] == 0 || got["outdated"]+got["bypassed"]+got["absent"] != 0 {
				t.Errorf("searches by what the index did: %v, want all used", got)
			}
		})
	}
}

// indexSearches returns catalogue_edge_search_index_searches_total by result.
func (env *searchEnv) indexSearches(t *testing.T) map[string]float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	env.s.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	got := map[string]float64{}
	for _, m := range fams["catalogue_edge_search_index_searches_total"].GetMetric() {
		got[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
	}
	return got
}

// searchHeaders are the response headers the search tests compare.
var searchHeaders = []string{"Content-Type", "Content-Encoding", "Vary", "Cache-Control", "X-Content-Type-Options"}

// get sends an authenticated request with extra headers and keeps searchHeaders.
func (env *searchEnv) get(method, target string, hdr map[string]string) response {
	h := map[string]string{"Authorization": "Bearer " + env.token}
	for k, v := range hdr {
		h[k] = v
	}
	return do(env.s.Handler(), method, target, h, searchHeaders...)
}

// page is the body of a search page with the given items, as D10 shapes it.
func page(total, lastPage int, items ...string) string {
	return `{"data":[` + strings.Join(items, ",") + `],"total":` + strconv.Itoa(total) + `,"last_page":` + strconv.Itoa(lastPage) + `}`
}

// okSearch is a 200 search response with body, from a server with the default
// edge.search_cache (5s), which a private cache may reuse as long.
func okSearch(body string) response { return okSearchAge(body, "5") }

// okSearchAge is okSearch from a server whose edge.search_cache is maxAge seconds.
func okSearchAge(body, maxAge string) response {
	return response{Status: 200, Body: body, Headers: map[string]string{
		"Content-Type": "application/json", "Vary": "Accept-Encoding", "Cache-Control": "private, max-age=" + maxAge,
		"X-Content-Type-Options": "nosniff"}}
}

// errSearch is an error response with the JSON body of D24, which no cache may keep (D45).
func errSearch(status int, msg string) response {
	return response{Status: status, Body: `{"message":"` + msg + `"}` + "\n", Headers: map[string]string{
		"Content-Type": "application/json", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}}
}
