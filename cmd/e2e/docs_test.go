package e2e

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/cmd/internal/cmdtest"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// docsCSP is the Content-Security-Policy the docs page must carry: everything from the
// edge itself (images also as data: URIs), nothing inline, nothing from elsewhere.
const docsCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// docsOperations are the six endpoints of the API as Swagger UI renders their paths.
var docsOperations = []string{"/public/courses", "/public/popular", "/public/classes",
	"/public/course/{id}/classes", "/public/course/{id}", "/public/class/{id}"}

// docsGuide are pieces of the partner's guide (edge/openapi.json, info.description) as the
// page must render them: headings, a sentence of the token's section, and the error table.
var docsGuide = []string{"<h2>Getting started</h2>", "<h2>Errors</h2>", "<h2>Rate limit</h2>", "<h2>Caching and conditional requests</h2>",
	"<h2>Pagination</h2>", "<h2>Feeds: everything that changed</h2>", "<h2>Webhooks: told when something changes</h2>",
	"<h2>Signed-in students</h2>", "<h2>Generating a client</h2>", "<h2>Traps</h2>",
	"Ask the provider's administrator for an API token for your application.", "<th>status</th>"}

// TestDocsPage loads {base_path}/docs from a real edge in headless Chromium, without a
// token, with every host but the loopback address unresolvable (so the page works only
// if it needs nothing from the internet). The page must render the six endpoints from
// the served OpenAPI document with no console message (a Content-Security-Policy
// violation or a failed load would be one), and a screenshot of it is kept in
// bin/test-artifacts/docs-page.png (CATALOGUE_TEST_ARTIFACTS overrides the folder).
func TestDocsPage(t *testing.T) {
	browser := chromium(t)
	env := cmdtest.NewEnv(t, testkit.NewLocalStore(t))
	edge := env.StartEdge(t, nil) // the page and the document need no snapshot
	url := edge.URL + base + "/docs"

	r := edge.Get(t, base+"/docs", "")
	if r.StatusCode != http.StatusOK || r.Header.Get("Content-Type") != "text/html; charset=utf-8" ||
		r.Header.Get("X-Content-Type-Options") != "nosniff" || r.Header.Get("Content-Security-Policy") != docsCSP {
		t.Fatalf("GET %s without a token: %s, Content-Type %q, X-Content-Type-Options %q, CSP %q; want 200, HTML, nosniff and\n%s",
			url, r.Status, r.Header.Get("Content-Type"), r.Header.Get("X-Content-Type-Options"), r.Header.Get("Content-Security-Policy"), docsCSP)
	}

	dom, console := runChromium(t, browser, "--dump-dom", url)
	for _, path := range docsOperations {
		if !strings.Contains(dom, `data-path="`+path+`"`) {
			t.Errorf("the rendered page lacks the operation %s", path)
		}
	}
	// The partner's guide is the document's info.description, rendered as Markdown.
	for _, want := range docsGuide {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered page lacks the partner's guide: no %q", want)
		}
	}
	if console != "" {
		t.Errorf("the browser's console reported (a CSP violation or a failed load?):\n%s", console)
	}

	shot := filepath.Join(artifacts(t), "docs-page.png")
	_, console = runChromium(t, browser, "--screenshot="+shot, "--window-size=1280,1600", "--hide-scrollbars", url)
	png, err := os.ReadFile(shot)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) || len(png) < 50_000 {
		// A blank page of that size compresses to a few kilobytes; the rendered one is ~250 KB.
		t.Errorf("screenshot %s: %d bytes, %v; want a PNG of the rendered page\n%s", shot, len(png), err, console)
	}
	t.Logf("screenshot of the docs page: %s", shot)
}

// chromiumFlags run Chromium headless as root in a container, with nothing of its own
// going to the network (no updates, sync, QUIC or background fetches) and with every host
// name but the loopback address unresolvable.
var chromiumFlags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
	// Virtual time runs the page's scripts and fetches to completion before the DOM is
	// dumped or the screenshot taken, instead of a guessed sleep.
	"--virtual-time-budget=15000",
	"--enable-logging=stderr", "--log-level=0"}

// consoleLine matches a message of the page's console in Chromium's log.
var consoleLine = regexp.MustCompile(`(?m)^.*:CONSOLE[^\]]*\].*$`)

// runChromium runs browser on url with a fresh profile and returns what it printed and
// the page's console messages.
func runChromium(t *testing.T, browser string, args ...string) (stdout, console string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	args = append(append(append([]string{}, chromiumFlags...), "--user-data-dir="+t.TempDir()), args...)
	cmd := exec.CommandContext(ctx, browser, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", browser, strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), strings.Join(consoleLine.FindAllString(errOut.String(), -1), "\n")
}

// chromium returns the browser that make test names (scripts/testkit/services.Chromium), else the
// chromium on PATH; without either the test fails under make test and skips otherwise.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CATALOGUE_TEST_CHROMIUM"); p != "" {
		return p
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Getenv("CATALOGUE_TEST_REQUIRE") != "" {
		t.Fatal("no Chromium: CATALOGUE_TEST_CHROMIUM is not set and there is no chromium on PATH (make test installs it)")
	}
	t.Skip("no Chromium; make test installs it (scripts/testkit/services.Chromium)")
	return ""
}

// artifacts returns the folder where tests keep files for people to look at.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("CATALOGUE_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("..", "..", "bin", "test-artifacts") // from cmd/e2e, the module's bin/
	}
	dir, err := filepath.Abs(dir)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		t.Fatalf("artifacts folder: %v", err)
	}
	return dir
}
