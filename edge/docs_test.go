package edge

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/templates"
)

// TestDocsRoutes checks the routes of the documentation page: no token needed, the page at
// {base_path}/docs with and without the trailing slash, its files beneath, a JSON 404 for
// any other name there, 405 for other methods, and the server's own base path in the page.
// The page itself is tested in edge/apidocs, and in a browser in cmd/e2e.
func TestDocsRoutes(t *testing.T) {
	pool, err := pgxpool.New(t.Context(), "postgres://nobody@127.0.0.1:1/none") // never used: no Start
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	cfg := testConfig()
	cfg.Edge.BasePath = "/catalogue/api/v2"
	s, err := New(Options{Config: cfg, Store: store.NewLocal(t.TempDir()), Replica: pool,
		Templates: templates.MustDefault(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	csp := "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
		"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	keep := []string{"Content-Type", "Content-Security-Policy", "X-Content-Type-Options", "Allow"}
	for _, tc := range []struct {
		method, target string
		want           response // Body: a substring of the body
	}{
		{"GET", "/catalogue/api/v2/docs", response{200, map[string]string{"Content-Type": "text/html; charset=utf-8",
			"Content-Security-Policy": csp, "X-Content-Type-Options": "nosniff"}, `data-url="/catalogue/api/v2/openapi.json"`}},
		{"GET", "/catalogue/api/v2/docs/", response{200, map[string]string{"Content-Type": "text/html; charset=utf-8",
			"Content-Security-Policy": csp, "X-Content-Type-Options": "nosniff"}, `src="/catalogue/api/v2/docs/swagger-ui-bundle.js"`}},
		{"HEAD", "/catalogue/api/v2/docs", response{200, map[string]string{"Content-Type": "text/html; charset=utf-8",
			"Content-Security-Policy": csp, "X-Content-Type-Options": "nosniff"}, ""}},
		{"GET", "/catalogue/api/v2/docs/swagger-ui.css", response{200, map[string]string{"Content-Type": "text/css; charset=utf-8",
			"Content-Security-Policy": csp, "X-Content-Type-Options": "nosniff"}, ".swagger-ui"}},
		{"GET", "/catalogue/api/v2/docs/init.js", response{200, map[string]string{"Content-Type": "text/javascript; charset=utf-8",
			"Content-Security-Policy": csp, "X-Content-Type-Options": "nosniff"}, "SwaggerUIBundle("}},
		{"GET", "/catalogue/api/v2/docs/LICENSE", response{200, map[string]string{"Content-Type": "text/plain; charset=utf-8",
			"Content-Security-Policy": csp, "X-Content-Type-Options": "nosniff"}, "Apache License"}},
		{"GET", "/catalogue/api/v2/docs/page.html", response{404, map[string]string{"Content-Type": "application/json",
			"X-Content-Type-Options": "nosniff"}, `{"message":"Not Found."}`}},
		{"GET", "/catalogue/api/v2/docs/assets/LICENSE", response{404, map[string]string{"Content-Type": "application/json",
			"X-Content-Type-Options": "nosniff"}, `{"message":"Not Found."}`}},
		{"POST", "/catalogue/api/v2/docs", response{405, map[string]string{"Content-Type": "application/json",
			"X-Content-Type-Options": "nosniff", "Allow": "GET, HEAD"}, `{"message":"Method Not Allowed."}`}},
		{"GET", "/api/v2/docs", response{404, map[string]string{"Content-Type": "application/json",
			"X-Content-Type-Options": "nosniff"}, `{"message":"Not Found."}`}}, // another base path
	} {
		got := do(s.Handler(), tc.method, tc.target, nil, keep...)
		if got.Headers["Content-Type"] == "application/json; charset=UTF-8" { // Echo's JSON errors
			got.Headers["Content-Type"] = "application/json"
		}
		if !strings.Contains(got.Body, tc.want.Body) || (tc.want.Body == "" && got.Body != "") {
			t.Errorf("%s %s: body %.300q, want it to hold %q", tc.method, tc.target, got.Body, tc.want.Body)
		}
		got.Body, tc.want.Body = "", ""
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s %s mismatch (-want +got):\n%s", tc.method, tc.target, diff)
		}
	}
	if got := do(s.Handler(), http.MethodGet, "/catalogue/api/v2/docs/swagger-ui-bundle.js", map[string]string{"Accept-Encoding": "gzip"},
		"Content-Encoding", "Vary"); got.Status != 200 || got.Headers["Content-Encoding"] != "gzip" || got.Headers["Vary"] != "Accept-Encoding" {
		t.Errorf("GET the bundle accepting gzip: %d %v; want 200 gzip with Vary: Accept-Encoding", got.Status, got.Headers)
	}
}
