package edge

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/edge/docstore/docstoretest"
	"github.com/trainingco/catalogue/edge/search"
	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// item9Dearer is item9 after its class's cost is raised to 401.
const item9Dearer = `{"id":"9","course_id":"1","course":"Welding Basics","start":"2027-04-01","end":"2027-04-01","type":"Brick and Mortar","city":"Springfield","state":"IL","schedule":null,"cost":401,"full":true,"available_seats":0}`

// searchQueries counts the search queries that the replica pool sends (search.sql, or
// search_page.sql for a page found in the index: one or the other for each search): a real
// hook of pgx (a query tracer), so the count is what reached PostgreSQL.
type searchQueries struct {
	sql, pageSQL string
	mu           sync.Mutex
	n            int
}

func newSearchQueries() *searchQueries {
	tpl := templates.MustDefault()
	return &searchQueries{sql: tpl.SQL(templates.Search), pageSQL: tpl.SQL(templates.SearchPage)}
}

func (q *searchQueries) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if data.SQL == q.sql || data.SQL == q.pageSQL {
		q.mu.Lock()
		q.n++
		q.mu.Unlock()
	}
	return ctx
}

func (q *searchQueries) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (q *searchQueries) count() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}

// setClock sets a fakeNow to t.
func setClock(c *fakeNow, t time.Time) { c.ns.Store(t.UnixNano()) }

// cacheStep is one request of a search cache test on the server's clock: for the search
// for "weld", before and after class 9's cost is raised.
type cacheStep struct {
	name    string
	at      time.Duration // after searchNow
	change  bool          // raise class 9's cost first
	want    string
	queries int  // search queries sent so far, once the request's refresh has ended
	refresh bool // the request starts a refresh
}

// runCacheSteps sends the requests of steps in order and then compares the cache's
// request counters with wantCounts.
func runCacheSteps(t *testing.T, steps []cacheStep, wantCounts map[string]float64) {
	t.Helper()
	clock, queries := &fakeNow{}, newSearchQueries()
	env := newSearchEnv(t, searchSeed, searchOpts{clock: clock.now, tracer: queries})
	const target = "/api/v2/public/classes?search=weld"
	for _, s := range steps {
		if s.change {
			testkit.Exec(t, env.dbURL, `UPDATE classes SET cost = 401 WHERE id = 9`)
		}
		setClock(clock, searchNow.Add(s.at))
		refreshes := cacheCount(env, "refresh")
		if diff := cmp.Diff(okSearch(s.want), env.get(http.MethodGet, target, nil)); diff != "" {
			t.Errorf("%s: GET %q mismatch (-want +got):\n%s", s.name, target, diff)
		}
		if started := cacheCount(env, "refresh") > refreshes; started != s.refresh {
			t.Errorf("%s: started a refresh: %v, want %v", s.name, started, s.refresh)
		}
		waitFor(t, s.name+": the refresh to end", func() bool { return env.s.search.Refreshing() == 0 })
		if got := queries.count(); got != s.queries {
			t.Errorf("%s: %d search queries so far, want %d", s.name, got, s.queries)
		}
	}
	if diff := cmp.Diff(wantCounts, cacheCounts(env)); diff != "" {
		t.Errorf("cache requests mismatch (-want +got):\n%s", diff)
	}
}

var (
	weldBefore = page(4, 1, item11, item9, item10, item13)
	weldAfter  = page(4, 1, item11, item9Dearer, item10, item13)
)

// TestSearchCacheFreshness checks edge.search_cache (default 5s) on the server's clock: a
// change to the data is not visible while the response is fresh, and is from the moment it
// expires, 5 s after the query that filled it started, when nothing asked for it in its
// last second (which would have refreshed it: TestSearchCacheRefreshAhead).
func TestSearchCacheFreshness(t *testing.T) {
	runCacheSteps(t, []cacheStep{
		{"first: queries", 0, false, weldBefore, 1, false},
		{"again: cached", time.Second, false, weldBefore, 1, false},
		{"the data changes: still cached", 4*time.Second - time.Nanosecond, true, weldBefore, 1, false},
		{"expired: queries, the change shows", 5 * time.Second, false, weldAfter, 2, false},
		{"cached again", 9*time.Second - time.Nanosecond, false, weldAfter, 2, false},
		{"expired again", 10 * time.Second, false, weldAfter, 3, false},
	}, map[string]float64{"hit": 3, "miss": 3, "shared": 0, "refresh": 0})
}

// TestSearchCacheRefreshAhead checks that a response asked for in the last fifth of its
// life (from 4 s of edge.search_cache's 5 s) is still served from the cache, and that the
// request starts one query in the background whose response replaces it: the change made
// before it shows from then on, and the old response's expiry no longer matters.
func TestSearchCacheRefreshAhead(t *testing.T) {
	runCacheSteps(t, []cacheStep{
		{"first: queries", 0, false, weldBefore, 1, false},
		{"not due yet", 4*time.Second - time.Nanosecond, true, weldBefore, 1, false},
		{"due: served, refreshed behind", 4 * time.Second, false, weldBefore, 2, true},
		{"the refreshed response", 4 * time.Second, false, weldAfter, 2, false},
		{"past the old expiry", 5 * time.Second, false, weldAfter, 2, false},
		{"not due yet again", 8*time.Second - time.Nanosecond, false, weldAfter, 2, false},
		{"due again", 8 * time.Second, false, weldAfter, 3, true},
	}, map[string]float64{"hit": 6, "miss": 1, "shared": 0, "refresh": 2})
}

// TestSearchCacheRefreshSlots checks that a request for a response due for refresh never
// waits for the refresh, even when the query cannot finish (classes is locked in another
// transaction), and that at most search.RefreshSlots refreshes run at a time: the request that
// finds every slot taken starts none, and a later one does once a slot is free.
func TestSearchCacheRefreshSlots(t *testing.T) {
	clock, queries := &fakeNow{}, newSearchQueries()
	setClock(clock, searchNow)
	env := newSearchEnv(t, searchSeed, searchOpts{clock: clock.now, tracer: queries,
		edit: func(c *config.Config) { c.Edge.SearchTimeout = time.Minute }})
	const classes = "/api/v2/public/classes?limit="
	pages := []string{ // three searches, search.RefreshSlots+1
		page(9, 9, item20), page(9, 5, item20, item11), page(9, 3, item20, item11, item9),
	}
	for i, want := range pages {
		target := classes + strconv.Itoa(i+1)
		if diff := cmp.Diff(okSearch(want), env.get(http.MethodGet, target, nil)); diff != "" {
			t.Fatalf("GET %q mismatch (-want +got):\n%s", target, diff)
		}
	}
	unlock := lockClasses(t, env.dbURL)

	setClock(clock, searchNow.Add(4*time.Second))
	for i, want := range pages { // served at once although their refreshes cannot finish
		target := classes + strconv.Itoa(i+1)
		if diff := cmp.Diff(okSearch(want), env.get(http.MethodGet, target, nil)); diff != "" {
			t.Errorf("GET %q with classes locked mismatch (-want +got):\n%s", target, diff)
		}
	}
	if got := cacheCount(env, "refresh"); got != search.RefreshSlots {
		t.Errorf("%v refreshes started, want %d", got, search.RefreshSlots)
	}
	waitFor(t, "the refreshes' queries", func() bool { return queries.count() == 3+search.RefreshSlots })
	unlock()
	waitFor(t, "the refreshes to end", func() bool { return env.s.search.Refreshing() == 0 })
	last := classes + "3"
	if diff := cmp.Diff(okSearch(pages[2]), env.get(http.MethodGet, last, nil)); diff != "" {
		t.Errorf("GET %q mismatch (-want +got):\n%s", last, diff)
	}
	waitFor(t, "the last refresh", func() bool { return env.s.search.Refreshing() == 0 && queries.count() == 4+search.RefreshSlots })
	if got := cacheCount(env, "refresh"); got != search.RefreshSlots+1 {
		t.Errorf("%v refreshes started, want %d", got, search.RefreshSlots+1)
	}
}

// TestSearchCacheOff checks that edge.search_cache: 0 disables the cache: every search
// queries, a change shows at once, and the cache's metrics are not there.
func TestSearchCacheOff(t *testing.T) {
	queries := newSearchQueries()
	env := newSearchEnv(t, searchSeed, searchOpts{tracer: queries,
		edit: func(c *config.Config) { c.Edge.SearchCache = 0 }})
	const target = "/api/v2/public/classes?search=weld"
	for i, want := range []string{
		page(4, 1, item11, item9, item10, item13),
		page(4, 1, item11, item9, item10, item13),
		page(4, 1, item11, item9Dearer, item10, item13),
	} {
		if i == 2 {
			testkit.Exec(t, env.dbURL, `UPDATE classes SET cost = 401 WHERE id = 9`)
		}
		if diff := cmp.Diff(okSearchAge(want, "0"), env.get(http.MethodGet, target, nil)); diff != "" {
			t.Errorf("request %d: GET %q mismatch (-want +got):\n%s", i+1, target, diff)
		}
		if got := queries.count(); got != i+1 {
			t.Errorf("request %d: %d search queries so far, want %d", i+1, got, i+1)
		}
	}
	if env.s.search.Caching() {
		t.Error("edge.search_cache 0: the searcher has a cache")
	}
	if got := metricNames(t, env); got["catalogue_edge_search_cache_requests_total"] || got["catalogue_edge_search_cache_waiting"] {
		t.Errorf("edge.search_cache 0: /metrics has the cache's metrics: %v", got)
	}
}

// TestSearchCacheKeys checks that the key is the parsed parameters: requests that only
// spell the same search differently share an entry, and any other difference (page, filter,
// course, the case of the search text, D11) is a search of its own.
func TestSearchCacheKeys(t *testing.T) {
	clock, queries := &fakeNow{}, newSearchQueries()
	setClock(clock, searchNow) // held still: no entry expires or comes due for refresh
	env := newSearchEnv(t, searchSeed, searchOpts{clock: clock.now, tracer: queries})
	const classes = "/api/v2/public/classes"
	all := page(9, 1, item20, item11, item9, item10, item13, item21, item30, item50, item60)
	weld := page(4, 1, item11, item9, item10, item13)
	steps := []struct {
		target  string
		want    string
		queries int // search queries sent so far
	}{
		{classes + "?limit=2", page(9, 5, item20, item11), 1},
		{classes + "?limit=2&page=2", page(9, 5, item9, item10), 2},
		{classes + "?limit=2&page=1", page(9, 5, item20, item11), 2},
		{classes + "?page=1&foo=bar&limit=%202", page(9, 5, item20, item11), 2},
		{classes + "?search=weld", weld, 3},
		{classes + "?search=WELD", weld, 4}, // the database folds case, not the cache
		{classes + "?search=%20weld%20", weld, 4},
		{classes + "?start=4-1-2027", page(7, 1, item9, item10, item13, item21, item30, item50, item60), 5},
		{classes + "?start=04-01-2027", page(7, 1, item9, item10, item13, item21, item30, item50, item60), 5},
		{classes + "?end=4-1-2027", page(5, 1, item20, item11, item9, item10, item13), 6},
		{classes + "?date=4-1-2027", page(3, 1, item9, item10, item13), 7},
		{"/api/v2/public/course/1/classes", weld, 8},
		{"/api/v2/public/course/2/classes", page(2, 1, item20, item21), 9},
		{"/api/v2/public/course/2/classes?search=weld", page(0, 1), 10},
		{classes + "?limit=51", all, 11},
		{classes + "?limit=50", all, 11},
		{classes + "?start=invalid+date&end=", all, 12},
		{classes, all, 12},
		{classes + "?limit=25&page=0", all, 12},
	}
	for _, s := range steps {
		if diff := cmp.Diff(okSearch(s.want), env.get(http.MethodGet, s.target, nil)); diff != "" {
			t.Errorf("GET %q mismatch (-want +got):\n%s", s.target, diff)
		}
		if got := queries.count(); got != s.queries {
			t.Errorf("after GET %q: %d search queries, want %d", s.target, got, s.queries)
		}
	}
}

// TestSearchCacheToday checks that "today" is part of the key: a response cached just
// before midnight is not served just after it, when class 11 (starting 2027-03-10, in
// person) has become past.
func TestSearchCacheToday(t *testing.T) {
	clock, queries := &fakeNow{}, newSearchQueries()
	env := newSearchEnv(t, searchSeed, searchOpts{clock: clock.now, tracer: queries,
		edit: func(c *config.Config) { c.Edge.SearchCache = 48 * time.Hour }})
	const target = "/api/v2/public/classes?search=weld"
	for _, s := range []struct {
		at      time.Time
		want    string
		queries int
	}{
		{time.Date(2027, 3, 10, 23, 59, 59, 0, time.UTC), page(4, 1, item11, item9, item10, item13), 1},
		{time.Date(2027, 3, 11, 0, 0, 1, 0, time.UTC), page(3, 1, item9, item10, item13), 2},
		{time.Date(2027, 3, 11, 12, 0, 0, 0, time.UTC), page(3, 1, item9, item10, item13), 2},
	} {
		setClock(clock, s.at)
		if diff := cmp.Diff(okSearchAge(s.want, "172800"), env.get(http.MethodGet, target, nil)); diff != "" {
			t.Errorf("GET %q at %v mismatch (-want +got):\n%s", target, s.at, diff)
		}
		if got := queries.count(); got != s.queries {
			t.Errorf("at %v: %d search queries so far, want %d", s.at, got, s.queries)
		}
	}
}

// TestSearchCacheEncodings checks that a cached response is served gzip-compressed and to
// HEAD like a fresh one (D25), without a query.
func TestSearchCacheEncodings(t *testing.T) {
	queries := newSearchQueries()
	env := newSearchEnv(t, searchSeed, searchOpts{tracer: queries})
	const target = "/api/v2/public/classes?search=weld"
	body := page(4, 1, item11, item9, item10, item13)
	if diff := cmp.Diff(okSearch(body), env.get(http.MethodGet, target, nil)); diff != "" {
		t.Fatalf("GET %q mismatch (-want +got):\n%s", target, diff)
	}
	for range 2 { // compressed on first use, then kept
		gz := env.get(http.MethodGet, target, map[string]string{"Accept-Encoding": "gzip"})
		want := okSearch(gz.Body) // compared after decompression below
		want.Headers["Content-Encoding"] = "gzip"
		if diff := cmp.Diff(want, gz); diff != "" {
			t.Errorf("GET %q with gzip mismatch (-want +got):\n%s", target, diff)
		}
		if diff := cmp.Diff(body, docstoretest.Gunzip(t, []byte(gz.Body))); diff != "" {
			t.Errorf("GET %q gzip body mismatch (-want +got):\n%s", target, diff)
		}
	}
	head := do(env.s.Handler(), http.MethodHead, target, map[string]string{"Authorization": "Bearer " + env.token},
		"Content-Length")
	if diff := cmp.Diff(response{Status: 200, Headers: map[string]string{"Content-Length": strconv.Itoa(len(body))}}, head); diff != "" {
		t.Errorf("HEAD %q mismatch (-want +got):\n%s", target, diff)
	}
	if got := queries.count(); got != 1 {
		t.Errorf("%d search queries, want 1", got)
	}
}

// TestSearchCacheErrors checks that only successes are kept: during an outage a fresh
// response is still served, an expired one is not, and a 503 is not kept either, so the
// search answers again as soon as the replica is back, on the same clock. The replica fails
// by closing connections, so that no request waits for edge.search_timeout and the timeout
// can stay far above what a search with the replica up takes on a loaded machine: with a
// timeout short enough to wait for (300 ms), a reconnecting search took up to 262 ms.
func TestSearchCacheErrors(t *testing.T) {
	var proxy *pgProxy
	clock := &fakeNow{}
	setClock(clock, searchNow)
	env := newSearchEnv(t, searchSeed, searchOpts{clock: clock.now,
		edit: func(c *config.Config) { c.Edge.SearchTimeout = time.Minute },
		replica: func(dbURL string) string {
			var proxied string
			proxy, proxied = newPGProxy(t, dbURL)
			return proxied
		},
	})
	const weld, online = "/api/v2/public/classes?search=weld", "/api/v2/public/classes?search=online"
	weldPage, onlinePage := page(4, 1, item11, item9, item10, item13), page(2, 1, item20, item21)
	down := func() { proxy.drop(); env.s.opts.Replica.Reset() }
	up := func() { proxy.restore(); env.s.opts.Replica.Reset() }
	steps := []struct {
		name   string
		at     time.Duration
		before func()
		target string
		want   response
	}{
		{"replica up", 0, nil, weld, okSearch(weldPage)},
		{"replica down, a fresh response", time.Second, down, weld, okSearch(weldPage)},
		{"replica down, nothing cached", time.Second, nil, online, errSearch(503, msgUnavailable)},
		{"replica down, due for refresh: still served", 4500 * time.Millisecond, nil, weld, okSearch(weldPage)},
		{"replica down, expired", 5 * time.Second, nil, weld, errSearch(503, msgUnavailable)},
		{"replica back: the 503 was not kept", 5 * time.Second, up, online, okSearch(onlinePage)},
		{"replica back: queried again", 5 * time.Second, nil, weld, okSearch(weldPage)},
	}
	for _, s := range steps {
		if s.before != nil {
			s.before()
		}
		setClock(clock, searchNow.Add(s.at))
		if diff := cmp.Diff(s.want, env.get(http.MethodGet, s.target, nil)); diff != "" {
			t.Errorf("%s: GET %q mismatch (-want +got):\n%s", s.name, s.target, diff)
		}
	}
}

// TestSearchCacheConcurrentMisses checks that concurrent requests for a missing entry run
// one query, and that the request that started it going away does not fail the others.
// classes is locked in another transaction so that the query cannot finish before every
// request waits for it.
func TestSearchCacheConcurrentMisses(t *testing.T) {
	const n = 8
	queries := newSearchQueries()
	env := newSearchEnv(t, searchSeed, searchOpts{tracer: queries,
		edit: func(c *config.Config) { c.Edge.SearchTimeout = time.Minute }})
	const target = "/api/v2/public/classes?search=weld"
	ctx := context.Background()
	unlock := lockClasses(t, env.dbURL)

	first, leave := context.WithCancel(ctx)
	bodies := make([]*httptest.ResponseRecorder, n)
	var wg sync.WaitGroup
	send := func(i int, ctx context.Context) {
		defer wg.Done()
		req := httptest.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		req.Header.Set("Authorization", "Bearer "+env.token)
		bodies[i] = httptest.NewRecorder()
		env.s.Handler().ServeHTTP(bodies[i], req)
	}
	wg.Add(n)
	go send(0, first)
	waitFor(t, "the first request's query", func() bool { return queries.count() == 1 })
	for i := 1; i < n; i++ {
		go send(i, ctx)
	}
	waitFor(t, "every request to wait", func() bool { return cacheWaiting(env) == n })
	leave() // the client that started the query goes away
	waitFor(t, "the first request to give up", func() bool { return cacheWaiting(env) == n-1 })
	unlock()
	wg.Wait()

	want := page(4, 1, item11, item9, item10, item13)
	for i := 1; i < n; i++ {
		got := response{Status: bodies[i].Code, Body: bodies[i].Body.String()}
		if diff := cmp.Diff(response{Status: 200, Body: want}, got); diff != "" {
			t.Errorf("request %d mismatch (-want +got):\n%s", i, diff)
		}
	}
	if got := queries.count(); got != 1 {
		t.Errorf("%d search queries, want 1", got)
	}
	if diff := cmp.Diff(map[string]float64{"hit": 0, "miss": 1, "shared": n - 1, "refresh": 0}, cacheCounts(env)); diff != "" {
		t.Errorf("cache requests mismatch (-want +got):\n%s", diff)
	}
}

// cacheCount is the search cache's request counter of result, from the server's registry.
func cacheCount(env *searchEnv, result string) float64 {
	return gathered(env, "catalogue_edge_search_cache_requests_total", result)
}

// cacheWaiting is the search cache's gauge of waiting searches, from the server's registry.
func cacheWaiting(env *searchEnv) float64 {
	return gathered(env, "catalogue_edge_search_cache_waiting", "")
}

// gathered is the value of the counter or gauge name (with the label result, when not
// empty) in the server's registry, 0 when it has none.
func gathered(env *searchEnv, name, result string) float64 {
	fams, err := env.s.opts.Registry.Gather()
	if err != nil {
		panic(err) // the registry holds only collectors of the edge, which always gather
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if result != "" && (len(m.GetLabel()) != 1 || m.GetLabel()[0].GetValue() != result) {
				continue
			}
			if m.Counter != nil {
				return m.Counter.GetValue()
			}
			return m.Gauge.GetValue()
		}
	}
	return 0
}

// lockClasses locks the classes table in a transaction of its own, so that no search query
// can finish until the returned function releases it; the test's end releases it too.
func lockClasses(t *testing.T, dbURL string) (unlock func()) {
	t.Helper()
	ctx := context.Background()
	conn := testkit.Connect(t, dbURL)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	if _, err := tx.Exec(ctx, `LOCK TABLE classes IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatalf("lock classes: %v", err)
	}
	return func() {
		if err := tx.Rollback(ctx); err != nil {
			t.Fatalf("unlock classes: %v", err)
		}
	}
}

// waitFor polls cond, which other goroutines make true, for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 2000 {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("gave up waiting for %s", what)
}

// cacheCounts returns the search cache's request counters by result.
func cacheCounts(env *searchEnv) map[string]float64 {
	return map[string]float64{"hit": cacheCount(env, "hit"), "miss": cacheCount(env, "miss"),
		"shared": cacheCount(env, "shared"), "refresh": cacheCount(env, "refresh")}
}

// metricNames returns the names of the metric families /metrics serves.
func metricNames(t *testing.T, env *searchEnv) map[string]bool {
	t.Helper()
	rec := httptest.NewRecorder()
	env.s.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("GET /metrics: status %d", rec.Code)
	}
	names := map[string]bool{}
	for _, line := range bytes.Split(rec.Body.Bytes(), []byte("\n")) {
		if f := bytes.Fields(line); len(f) >= 3 && string(f[0]) == "#" && string(f[1]) == "TYPE" {
			names[string(f[2])] = true
		}
	}
	return names
}
