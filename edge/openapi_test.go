// The OpenAPI test is an external test package: it builds a real snapshot with the
// builder (which the edge package itself must not import) and talks to the edge only
// through its HTTP handler, as a client would.
package edge_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/edge"
	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// openAPINow is the clock of the OpenAPI test: today is 2027-03-10.
var openAPINow = time.Date(2027, 3, 10, 12, 0, 0, 0, time.UTC)

// openAPISeed has a row for every shape the documents can take: a course with and without
// description and upcoming class, each course type, a class with a room, one without, an
// online one, capped, uncapped and full classes, a down payment, and hidden rows.
const openAPISeed = `
INSERT INTO locations (id, name, city, state, zip, country) VALUES (1, 'Main Campus', 'Springfield', 'IL', '62701', 'US');
INSERT INTO rooms (id, location_id, name) VALUES (1, 1, 'Room 101');
INSERT INTO courses (id, name, type, description, is_public) VALUES
  (1, 'Welding Basics', 'Brick and Mortar', '<p>Learn to weld.</p>', true),
  (2, 'Online Safety', 'Online', NULL, true),
  (3, 'Blended Forklift', 'Blended', 'Forklifts', true),
  (4, 'Secret', 'Brick and Mortar', NULL, false),
  (5, 'Archived Pottery', 'Brick and Mortar', 'Old', true);
INSERT INTO classes (id, course_id, room_id, start_date, end_date, schedule, cost, seat_limit, down_payment, is_public) VALUES
  (10, 1, 1,    '2027-04-01', '2027-04-03', 'Mon-Wed 9-5', 500, 10, 5000, true),
  (11, 1, NULL, '2027-05-01', '2027-05-02', NULL, 450, NULL, NULL, true),
  (20, 2, NULL, '2026-01-10', '2026-01-20', NULL, 99, NULL, NULL, true),
  (21, 2, NULL, '2027-06-01', '2027-06-30', 'Self-paced', 120, 100, NULL, true),
  (30, 3, 1,    '2027-07-01', '2027-07-05', NULL, 300, 2, NULL, true),
  (40, 4, 1,    '2027-04-05', '2027-04-06', NULL, 100, NULL, NULL, true),
  (50, 5, 1,    '2026-05-01', '2026-05-02', NULL, 80, NULL, NULL, true);
INSERT INTO registrations (class_id) SELECT 10 FROM generate_series(1, 3);
INSERT INTO registrations (class_id) SELECT 30 FROM generate_series(1, 2);
INSERT INTO registrations (class_id) SELECT 50 FROM generate_series(1, 5);
`

// apiEnv is everything the OpenAPI test needs: a database with a token, a published
// snapshot, and servers in the states whose answers the document describes.
type apiEnv struct {
	token   string
	servers map[string]http.Handler
}

// Server states: serving normally; limited to one request a minute; before any snapshot
// is published; with a replica whose search fails; serving normally, for the requests whose
// head is too large (each counted, D46), so that srvOK's allowance is not used up.
const (
	srvOK        = "ok"
	srvLimited   = "limited"
	srvNoSnap    = "no snapshot"
	srvBadSearch = "search fails"
	srvHeads     = "large heads"
)

func newAPIEnv(t *testing.T) *apiEnv {
	t.Helper()
	b := buildCatalogue(t, openAPISeed, "openapi test", openAPINow)
	cfg, token, pool := b.cfg, b.token, b.pool
	now := func() time.Time { return openAPINow }
	published := openTestStore(t, cfg.Store)
	empty := openTestStore(t, testkit.NewLocalStore(t))

	env := &apiEnv{token: token, servers: map[string]http.Handler{}}
	start := func(name string, st store.Store, tpl *templates.Set, edit func(*config.Config)) {
		c := cfg
		if edit != nil {
			edit(&c)
		}
		s, err := edge.New(edge.Options{Config: c, Store: st, Replica: pool, Templates: tpl, Logger: quiet, Now: now})
		if err != nil {
			t.Fatalf("New %s: %v", name, err)
		}
		runCtx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		s.Start(runCtx)
		env.servers[name] = s.Handler()
	}
	start(srvOK, published, templates.MustDefault(), nil)
	start(srvLimited, published, templates.MustDefault(), func(c *config.Config) { c.Edge.RateLimit = 1 })
	start(srvNoSnap, empty, templates.MustDefault(), nil)
	start(srvBadSearch, published, failingSearch(t), nil)
	start(srvHeads, published, templates.MustDefault(), nil)
	return env
}

func openTestStore(t *testing.T, cfg config.Store) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), store.Options(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Ensure(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
}

// failingSearch is the default templates with a search.sql that fails in PostgreSQL, as
// a replica in trouble would.
func failingSearch(t *testing.T) *templates.Set {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		templates.Search: "-- search.sql that fails: division by zero.\n" +
			"SELECT $1::date, $2::date, $3::date, $4::date, $5::text, $6::bigint, $7::bigint, $8::bigint, 1/0\n",
		templates.SearchPage: "-- search_page.sql that fails: division by zero.\n" +
			"SELECT $1::bigint[], $2::bigint, 1/0\n",
	}
	for name, sql := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(sql), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set, err := templates.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// apiCall is one request of the test and the status it must get.
type apiCall struct {
	server string            // "" is srvOK
	method string            // "" is GET
	target string            // path and query
	auth   string            // "token": the env's token; "" none; anything else sent as is
	header map[string]string // more request headers; "If-None-Match": "<etag of target>" uses the ETag of a GET
	status int
}

func TestOpenAPI(t *testing.T) {
	env := newAPIEnv(t)
	doc, router := loadServedDocument(t, env.servers[srvOK])
	requireCacheControl(t, doc)
	// One bearer scheme for tokens and JWTs alike: with two on the one Authorization header,
	// ogen's client sets both, and the second (an empty JWT) overwrote the token.
	if n := len(doc.Components.SecuritySchemes); n != 1 {
		t.Errorf("the document has %d security schemes, want one bearer scheme for the one Authorization header", n)
	}

	// One request to use up the limited server's allowance, so that every call to it is 429.
	if got := env.send(t, apiCall{server: srvLimited, target: "/api/v2/public/popular", auth: "token"}); got.Code != 200 {
		t.Fatalf("first request to the limited server: status %d", got.Code)
	}
	const etag = "<etag>"
	tooLarge := map[string]string{"X-Padding": strings.Repeat("x", edge.MaxRequestHead)}
	calls := []apiCall{
		{target: "/api/v2/public/courses", auth: "token", status: 200},
		{target: "/api/v2/public/courses?type=Online&type[]=Blended&limit=1", auth: "token", status: 200},
		{target: "/api/v2/public/courses", auth: "token", header: map[string]string{"If-None-Match": etag}, status: 304},
		{target: "/api/v2/public/courses?type=Bogus", auth: "token", status: 400},
		{target: "/api/v2/public/courses", status: 401},
		{target: "/api/v2/public/courses", auth: "Bearer pcat_not_a_token", status: 401},
		{target: "/api/v2/public/courses", method: http.MethodPost, auth: "token", status: 405},
		{target: "/api/v2/public/courses", server: srvLimited, auth: "token", status: 429},
		{target: "/api/v2/public/courses", server: srvNoSnap, auth: "token", status: 503},

		{target: "/api/v2/public/popular", auth: "token", status: 200},
		{target: "/api/v2/public/popular", auth: "token", header: map[string]string{"If-None-Match": etag}, status: 304},
		{target: "/api/v2/public/popular", auth: "Basic abc", status: 401},
		{target: "/api/v2/public/popular", method: http.MethodDelete, status: 405},
		{target: "/api/v2/public/popular", server: srvLimited, auth: "token", status: 429},
		{target: "/api/v2/public/popular", server: srvNoSnap, auth: "token", status: 503},
		{target: "/api/v2/public/feeds/courses", auth: "token", status: 200},
		{target: "/api/v2/public/feeds/courses?afterChangeNumber=9007199254740991", auth: "token", status: 200}, // the last page
		{target: "/api/v2/public/feeds/courses", auth: "token", header: map[string]string{"If-None-Match": etag}, status: 304},
		{target: "/api/v2/public/feeds/courses?afterChangeNumber=x", auth: "token", status: 400},
		{target: "/api/v2/public/feeds/courses", status: 401},
		{target: "/api/v2/public/feeds/courses", method: http.MethodPut, status: 405},
		{target: "/api/v2/public/feeds/courses", server: srvLimited, auth: "token", status: 429},
		{target: "/api/v2/public/feeds/courses", server: srvNoSnap, auth: "token", status: 503},
		{target: "/api/v2/public/feeds/classes", auth: "token", status: 200},
		{target: "/api/v2/public/feeds/classes?afterChangeNumber=9007199254740991", auth: "token", status: 200}, // the last page
		{target: "/api/v2/public/feeds/classes", auth: "token", header: map[string]string{"If-None-Match": etag}, status: 304},
		{target: "/api/v2/public/feeds/classes?afterChangeNumber=x", auth: "token", status: 400},
		{target: "/api/v2/public/feeds/classes", status: 401},
		{target: "/api/v2/public/feeds/classes", method: http.MethodPut, status: 405},
		{target: "/api/v2/public/feeds/classes", server: srvLimited, auth: "token", status: 429},
		{target: "/api/v2/public/feeds/classes", server: srvNoSnap, auth: "token", status: 503},

		{target: "/api/v2/public/classes", auth: "token", status: 200},
		{target: "/api/v2/public/classes?search=weld&start=1-1-2027&end=12-31-2027&limit=1&page=2", auth: "token", status: 200},
		{target: "/api/v2/public/classes?date=invalid+date&page=9", auth: "token", status: 200},
		{target: "/api/v2/public/classes", auth: "token", header: map[string]string{"Accept-Encoding": "gzip"}, status: 200},
		{target: "/api/v2/public/classes?limit=abc", auth: "token", status: 400},
		{target: "/api/v2/public/classes", status: 401},
		{target: "/api/v2/public/classes", method: http.MethodPut, auth: "token", status: 405},
		{target: "/api/v2/public/classes", server: srvLimited, auth: "token", status: 429},
		{target: "/api/v2/public/classes?date=tomorrow", auth: "token", status: 500},
		{target: "/api/v2/public/classes", server: srvBadSearch, auth: "token", status: 503},

		{target: "/api/v2/public/course/1/classes", auth: "token", status: 200},
		{target: "/api/v2/public/course/4/classes", auth: "token", status: 200}, // not public: empty
		{target: "/api/v2/public/course/1/classes?page=x", auth: "token", status: 400},
		{target: "/api/v2/public/course/1/classes", status: 401},
		{target: "/api/v2/public/course/abc/classes", auth: "token", status: 404},
		{target: "/api/v2/public/course/1/classes", method: http.MethodPatch, auth: "token", status: 405},
		{target: "/api/v2/public/course/1/classes", server: srvLimited, auth: "token", status: 429},
		{target: "/api/v2/public/course/1/classes?start=02-30-2027", auth: "token", status: 500},
		{target: "/api/v2/public/course/1/classes", server: srvBadSearch, auth: "token", status: 503},

		{target: "/api/v2/public/course/1", auth: "token", status: 200},
		{target: "/api/v2/public/course/2", auth: "token", status: 200}, // no description
		{target: "/api/v2/public/course/5", auth: "token", status: 200},
		{target: "/api/v2/public/course/1", auth: "token", header: map[string]string{"If-None-Match": etag}, status: 304},
		{target: "/api/v2/public/course/1", status: 401},
		{target: "/api/v2/public/course/4", auth: "token", status: 404},
		{target: "/api/v2/public/course/01", auth: "token", status: 404},
		{target: "/api/v2/public/course/1", method: http.MethodPost, auth: "token", status: 405},
		{target: "/api/v2/public/course/1", server: srvLimited, auth: "token", status: 429},
		{target: "/api/v2/public/course/1", server: srvNoSnap, auth: "token", status: 503},

		{target: "/api/v2/public/class/10", auth: "token", status: 200}, // a room, a down payment
		{target: "/api/v2/public/class/11", auth: "token", status: 200}, // no room yet
		{target: "/api/v2/public/class/21", auth: "token", status: 200}, // online
		{target: "/api/v2/public/class/30", auth: "token", status: 200}, // full
		{target: "/api/v2/public/class/50", auth: "token", status: 200}, // past
		{target: "/api/v2/public/class/10", auth: "token", header: map[string]string{"If-None-Match": etag}, status: 304},
		{target: "/api/v2/public/class/10", status: 401},
		{target: "/api/v2/public/class/40", auth: "token", status: 404}, // class of a non-public course
		{target: "/api/v2/public/class/-1", auth: "token", status: 404},
		{target: "/api/v2/public/class/10", method: http.MethodPost, auth: "token", status: 405},
		{target: "/api/v2/public/class/10", server: srvLimited, auth: "token", status: 429},
		{target: "/api/v2/public/class/10", server: srvNoSnap, auth: "token", status: 503},

		{target: "/api/v2/openapi.json", status: 200},
		{target: "/api/v2/openapi.json", header: map[string]string{"Accept-Encoding": "gzip"}, status: 200},
		{target: "/api/v2/openapi.json", header: map[string]string{"If-None-Match": etag}, status: 304},
		{target: "/api/v2/openapi.json", method: http.MethodPost, status: 405},

		// A request head over 32 KiB (D46), with a token or without one.
		{target: "/api/v2/public/courses", server: srvHeads, auth: "token", header: tooLarge, status: 431},
		{target: "/api/v2/public/popular", server: srvHeads, header: tooLarge, status: 431},
		{target: "/api/v2/public/classes", server: srvHeads, auth: "token", header: tooLarge, status: 431},
		{target: "/api/v2/public/course/1/classes", server: srvHeads, auth: "token", header: tooLarge, status: 431},
		{target: "/api/v2/public/course/1", server: srvHeads, auth: "token", header: tooLarge, status: 431},
		{target: "/api/v2/public/class/10", server: srvHeads, auth: "token", header: tooLarge, status: 431},
		{target: "/api/v2/public/feeds/courses", server: srvHeads, auth: "token", header: tooLarge, status: 431},
		{target: "/api/v2/public/feeds/classes", server: srvHeads, auth: "token", header: tooLarge, status: 431},
		{target: "/api/v2/openapi.json", server: srvHeads, header: tooLarge, status: 431},

		// HEAD answers like GET without a body; kin-openapi skips HEAD, so checkHeaders does it.
		{target: "/api/v2/public/classes", method: http.MethodHead, auth: "token", status: 200},
		{target: "/api/v2/public/course/1", method: http.MethodHead, auth: "token", status: 200},
		{target: "/api/v2/public/class/404", method: http.MethodHead, auth: "token", status: 404},
	}
	covered := map[string]bool{} // "METHOD path status" of the document that a call checked
	for _, call := range calls {
		name := fmt.Sprintf("%s %s (%s)", call.methodOr(), call.target, call.serverOr())
		if call.header["If-None-Match"] == etag {
			first := env.send(t, apiCall{server: call.server, target: call.target, auth: call.auth})
			call.header = map[string]string{"If-None-Match": first.Header().Get("ETag")}
		}
		rec := env.send(t, call)
		if rec.Code != call.status {
			t.Errorf("%s: status %d, want %d; body %s", name, rec.Code, call.status, rec.Body)
			continue
		}
		key, err := validate(doc, router, call, rec)
		if err != nil {
			t.Errorf("%s: the response does not match the document: %v", name, err)
			continue
		}
		covered[key] = true
		if err := fixedBody(doc, rec); call.methodOr() != http.MethodHead && err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}

	// Every status the document promises was seen and checked, so no part of it is untested.
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for status := range op.Responses.Map() {
				if key := method + " " + path + " " + status; !covered[key] {
					t.Errorf("no call checked %s", key)
				}
			}
		}
	}

	// An unknown path has no operation; its body is still the documented error shape.
	rec := env.send(t, apiCall{target: "/api/v2/public/nope", auth: "token"})
	if err := doc.Components.Schemas["Error"].Value.VisitJSON(decodeJSON(t, rec.Body.Bytes()), openapi3.EnableJSONSchema2020()); rec.Code != 404 || err != nil {
		t.Errorf("GET /api/v2/public/nope: status %d, body %s: want 404 with an Error body (%v)", rec.Code, rec.Body, err)
	}
}

// requireCacheControl checks that every response the document describes declares a required
// Cache-Control (D45): a cache, or a generated client, then knows what it may keep, and
// validate checks each value against its schema.
func requireCacheControl(t *testing.T, doc *openapi3.T) {
	t.Helper()
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for status, resp := range op.Responses.Map() {
				h := resp.Value.Headers["Cache-Control"]
				if h == nil || h.Value == nil || !h.Value.Required {
					t.Errorf("%s %s %s: no required Cache-Control header", method, path, status)
				}
			}
		}
	}
}

func (c apiCall) methodOr() string {
	if c.method == "" {
		return http.MethodGet
	}
	return c.method
}

func (c apiCall) serverOr() string {
	if c.server == "" {
		return srvOK
	}
	return c.server
}

// send serves one call.
func (env *apiEnv) send(t *testing.T, c apiCall) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(c.methodOr(), c.target, nil)
	switch c.auth {
	case "":
	case "token":
		req.Header.Set("Authorization", "Bearer "+env.token)
	default:
		req.Header.Set("Authorization", c.auth)
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	env.servers[c.serverOr()].ServeHTTP(rec, req)
	return rec
}

// loadServedDocument fetches the document the server serves, checks that it is a valid
// OpenAPI 3.1 document, and routes requests with it.
func loadServedDocument(t *testing.T, h http.Handler) (*openapi3.T, routers.Router) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v2/openapi.json", nil))
	if rec.Code != 200 {
		t.Fatalf("GET /api/v2/openapi.json: status %d", rec.Code)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(rec.Body.Bytes())
	if err != nil {
		t.Fatalf("load the document: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("the document is OpenAPI %s, want 3.1", doc.OpenAPI)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("the document is not valid OpenAPI: %v", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("route with the document: %v", err)
	}
	return doc, router
}

// validate checks the response against the operation the request names, and returns the
// "METHOD path status" it checked. A method the API does not answer (405) is checked
// against the GET operation of the path, where the document describes it.
func validate(doc *openapi3.T, router routers.Router, call apiCall, rec *httptest.ResponseRecorder) (string, error) {
	req := httptest.NewRequest(call.methodOr(), call.target, nil)
	if rec.Code == http.StatusMethodNotAllowed || call.methodOr() == http.MethodHead {
		req.Method = http.MethodGet
	}
	route, params, err := router.FindRoute(req)
	if err != nil {
		return "", fmt.Errorf("find the operation: %w", err)
	}
	key := req.Method + " " + route.Path + " " + strconv.Itoa(rec.Code)
	resp := route.Operation.Responses.Status(rec.Code)
	if resp == nil || resp.Value == nil {
		return key, fmt.Errorf("status %d is not documented", rec.Code)
	}
	// kin-openapi validates neither 304 nor HEAD responses; their headers are checked here.
	if err := checkHeaders(resp.Value, rec.Header()); err != nil {
		return key, err
	}
	if call.methodOr() == http.MethodHead || rec.Code == http.StatusNotModified {
		if rec.Body.Len() != 0 {
			return key, fmt.Errorf("%d bytes of body, want none", rec.Body.Len())
		}
		return key, nil
	}
	body := rec.Body.Bytes()
	if rec.Header().Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return key, err
		}
		if body, err = io.ReadAll(zr); err != nil {
			return key, err
		}
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 rec.Code,
		Header:                 rec.Header(),
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	return key, openapi3filter.ValidateResponse(context.Background(), in)
}

// checkHeaders checks that every header the response documents as required is present
// and that every documented header present matches its schema.
func checkHeaders(resp *openapi3.Response, h http.Header) error {
	names := make([]string, 0, len(resp.Headers))
	for name := range resp.Headers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		hdr := resp.Headers[name].Value
		v, present := h[http.CanonicalHeaderKey(name)]
		if !present {
			if hdr.Required {
				return fmt.Errorf("header %s is required but absent", name)
			}
			continue
		}
		val := any(strings.Join(v, ", "))
		if sch := hdr.Schema.Value; sch.Type.Is("integer") {
			n, err := strconv.ParseInt(v[0], 10, 64)
			if err != nil {
				return fmt.Errorf("header %s: %q is not an integer", name, v[0])
			}
			val = float64(n)
		}
		if err := hdr.Schema.Value.VisitJSON(val, openapi3.EnableJSONSchema2020()); err != nil {
			return fmt.Errorf("header %s: %w", name, err)
		}
	}
	return nil
}

func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	v, err := openapi3filter.JSONBodyDecoder(bytes.NewReader(b), nil, nil, nil)
	if err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

// TestOpenAPIBasePath checks that the document names the server's own base path, so that
// clients generated from it call the right URLs, and that the rest is unchanged.
func TestOpenAPIBasePath(t *testing.T) {
	pool, err := pgxpool.New(context.Background(), "postgres://nobody@127.0.0.1:1/none") // never used
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	docs := map[string]*openapi3.T{}
	for _, base := range []string{"/api/v2", "/catalogue/api/v2"} {
		cfg := config.Default()
		cfg.Edge.BasePath = base
		s, err := edge.New(edge.Options{Config: cfg, Store: store.NewLocal(t.TempDir()), Replica: pool,
			Templates: templates.MustDefault(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, base+"/openapi.json", nil))
		doc, err := openapi3.NewLoader().LoadFromData(rec.Body.Bytes())
		if rec.Code != 200 || err != nil {
			t.Fatalf("GET %s/openapi.json: status %d, %v", base, rec.Code, err)
		}
		if got := doc.Servers[0].URL; got != base {
			t.Errorf("GET %s/openapi.json: servers[0].url = %q, want %q", base, got, base)
		}
		docs[base] = doc
	}
	a, b := docs["/api/v2"], docs["/catalogue/api/v2"]
	b.Servers[0].URL = a.Servers[0].URL
	ja, err := a.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	jb, err := b.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ja, jb) {
		t.Errorf("the documents of two base paths differ beyond servers[0].url")
	}
}

// fixedBodies are the error responses whose body never varies, by status: the document's
// example of each must be that body exactly, as partners match on it.
var fixedBodies = map[int]string{http.StatusUnauthorized: "Unauthenticated", http.StatusTooManyRequests: "TooManyRequests"}

// fixedBody checks that a 401 or 429 body is the example its documented response gives.
func fixedBody(doc *openapi3.T, rec *httptest.ResponseRecorder) error {
	name, ok := fixedBodies[rec.Code]
	if !ok {
		return nil
	}
	var want, got any
	if resp := doc.Components.Responses[name]; resp != nil && resp.Value.Content.Get("application/json") != nil {
		want = resp.Value.Content.Get("application/json").Example
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		return fmt.Errorf("body %s: %w", rec.Body, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		return fmt.Errorf("the body is not the example of the documented %s response (-example +body):\n%s", name, diff)
	}
	return nil
}

// TestOpenAPIOneServer: every operation of the document is under its one server, the base
// path. hey-api and orval ignore a path's or an operation's own servers and would call it
// under the base path (issue 23, 13): the probes, which live outside it (D26), are not in
// the document.
func TestOpenAPIOneServer(t *testing.T) {
	b, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for path, item := range doc.Paths {
		for field, v := range item {
			if field == "servers" {
				t.Errorf("%s has servers of its own", path)
			}
			var op struct {
				Servers json.RawMessage `json:"servers"`
			}
			if json.Unmarshal(v, &op) == nil && op.Servers != nil {
				t.Errorf("%s %s has servers of its own", field, path)
			}
		}
	}
}
