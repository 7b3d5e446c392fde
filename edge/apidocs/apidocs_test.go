package apidocs_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/trainingco/catalogue/edge/apidocs"
)

// serve answers one request for name through d.
func serve(d *apidocs.Docs, method, name string, gz bool, header ...string) (*httptest.ResponseRecorder, bool) {
	req := httptest.NewRequest(method, "/api/v2/docs/"+name, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	return rec, d.Serve(rec, req, name, gz)
}

// refs matches the URLs the page makes the browser load or link to.
var refs = regexp.MustCompile(`(?:src|href|data-url)="([^"]*)"`)

// TestPage checks that the page loads everything from this server (no CDN: it works
// offline), under the edge's base path, and that everything it loads is served.
func TestPage(t *testing.T) {
	d, err := apidocs.New("/catalogue/api/v2")
	if err != nil {
		t.Fatal(err)
	}
	rec, ok := serve(d, http.MethodGet, "", false)
	if !ok || rec.Code != http.StatusOK {
		t.Fatalf("page: served %v, status %d", ok, rec.Code)
	}
	for name, want := range map[string]string{
		"Content-Type":            "text/html; charset=utf-8",
		"Content-Security-Policy": apidocs.CSP,
		"Cache-Control":           "no-cache",
	} {
		if got := rec.Header().Get(name); got != want {
			t.Errorf("page: %s = %q, want %q", name, got, want)
		}
	}
	loaded := 0
	for _, m := range refs.FindAllStringSubmatch(rec.Body.String(), -1) {
		url := m[1]
		switch {
		case url == "https://github.com/swagger-api/swagger-ui": // a link to follow, not loaded
		case url == "/catalogue/api/v2/openapi.json":
			loaded++
		case strings.HasPrefix(url, "/catalogue/api/v2/docs/"):
			loaded++
			name := strings.TrimPrefix(url, "/catalogue/api/v2/docs/")
			if r, ok := serve(d, http.MethodGet, name, false); !ok || r.Code != http.StatusOK || r.Body.Len() == 0 {
				t.Errorf("the page refers to %s, which is not served (status %d)", url, r.Code)
			}
		default:
			t.Errorf("the page refers to %q, outside the edge's base path", url)
		}
	}
	// The document (for Swagger UI and for a browser without JavaScript), the stylesheet,
	// the icon, the bundle, init.js and the three licences.
	if loaded != 9 {
		t.Errorf("the page refers to %d files of this server, want 9:\n%s", loaded, rec.Body)
	}
}

// TestAssets checks the headers, gzip bodies and conditional requests of the files.
func TestAssets(t *testing.T) {
	d, bundle := docsAndBundle(t)
	plain, _ := serve(d, http.MethodGet, "swagger-ui-bundle.js", false)
	zipped, _ := serve(d, http.MethodGet, "swagger-ui-bundle.js", true)
	if plain.Code != 200 || !bytes.Equal(plain.Body.Bytes(), bundle) || plain.Header().Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Errorf("bundle: status %d, %d bytes, %q; want 200, the %d bytes of assets/, JavaScript",
			plain.Code, plain.Body.Len(), plain.Header().Get("Content-Type"), len(bundle))
	}
	zr, err := gzip.NewReader(zipped.Body)
	if err != nil {
		t.Fatalf("gzip bundle: %v", err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(unzipped, bundle) || zipped.Header().Get("Content-Encoding") != "gzip" {
		t.Errorf("gzip bundle: %v, %d bytes unzipped, Content-Encoding %q; want the bundle, gzip", err, len(unzipped), zipped.Header().Get("Content-Encoding"))
	}
	if zipped.Body.Len() >= len(bundle)/2 {
		t.Errorf("gzip bundle: %d bytes of %d, want less than half", zipped.Body.Len(), len(bundle))
	}
	etag, etagZ := plain.Header().Get("ETag"), zipped.Header().Get("ETag")
	if etag == "" || etag == etagZ {
		t.Errorf("ETags %q and %q: want two different ones, one per encoding", etag, etagZ)
	}
	if r, _ := serve(d, http.MethodGet, "swagger-ui-bundle.js", false, "If-None-Match", etag); r.Code != http.StatusNotModified || r.Body.Len() != 0 {
		t.Errorf("If-None-Match with the current ETag: status %d, %d bytes; want 304 without a body", r.Code, r.Body.Len())
	}
	if r, _ := serve(d, http.MethodGet, "swagger-ui-bundle.js", false, "If-None-Match", etagZ); r.Code != http.StatusOK {
		t.Errorf("If-None-Match with the gzip ETag on the identity body: status %d, want 200", r.Code)
	}
	if r, _ := serve(d, http.MethodHead, "swagger-ui.css", false); r.Code != 200 || r.Body.Len() != 0 || r.Header().Get("Content-Type") != "text/css; charset=utf-8" {
		t.Errorf("HEAD swagger-ui.css: status %d, %d bytes, %q; want 200, no body, CSS", r.Code, r.Body.Len(), r.Header().Get("Content-Type"))
	}
	for _, name := range []string{"LICENSE", "NOTICE"} {
		if r, _ := serve(d, http.MethodGet, name, false); r.Code != 200 || !strings.Contains(r.Body.String(), "SmartBear") && !strings.Contains(r.Body.String(), "Apache License") {
			t.Errorf("%s: status %d; want Swagger UI's licence text\n%.200s", name, r.Code, r.Body)
		}
	}
	for _, name := range []string{"page.html", "assets/LICENSE", "../apidocs.go", "swagger-ui-bundle.js.map", "index.html"} {
		if rec, ok := serve(d, http.MethodGet, name, false); ok || rec.Body.Len() != 0 {
			t.Errorf("%q: served %v (%d bytes); want not served, nothing written", name, ok, rec.Body.Len())
		}
	}
}

// TestPageEscapes checks the page of a base path holding characters that HTML or a URL
// path would read otherwise: in the page's URLs they are percent-encoded (in upper case,
// RFC 3986's), and an & is written as &amp;.
func TestPageEscapes(t *testing.T) {
	d, err := apidocs.New(`/a"b<c&d e'é`)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := serve(d, http.MethodGet, "", false)
	page := rec.Body.String()
	for _, want := range []string{
		`href="/a%22b%3Cc&amp;d%20e%27%C3%A9/docs/swagger-ui.css"`,
		`src="/a%22b%3Cc&amp;d%20e%27%C3%A9/docs/init.js"`,
		`data-url="/a%22b%3Cc&amp;d%20e%27%C3%A9/openapi.json"`,
		`href="/a%22b%3Cc&amp;d%20e%27%C3%A9/openapi.json">/a%22b%3Cc&amp;d%20e%27%C3%A9/openapi.json</a>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not hold %s:\n%s", want, page)
		}
	}
	if strings.Contains(page, "{{") {
		t.Errorf("the page holds a placeholder left unreplaced:\n%s", page)
	}
}

// allocated returns the bytes f allocates in the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// discard is a ResponseWriter that keeps the headers and status and drops the body, so that
// a measure of what serving allocates does not count a copy of the body.
type discard struct {
	header http.Header
	status int
}

func (w *discard) Header() http.Header         { return w.header }
func (w *discard) Write(p []byte) (int, error) { return len(p), nil }
func (w *discard) WriteHeader(status int)      { w.status = status }

// TestPreparedOnFirstRequest checks that New reads none of the files into memory (most
// edges never serve the page: the 1.9 MB of Swagger UI and its gzip encoding would sit in
// every edge's heap) and that a file is prepared once, on its first request: a second
// request for the gzip bundle compresses nothing again.
func TestPreparedOnFirstRequest(t *testing.T) {
	var d *apidocs.Docs
	if n := allocated(func() {
		var err error
		if d, err = apidocs.New("/api/v2"); err != nil {
			t.Fatal(err)
		}
	}); n > 64<<10 {
		t.Errorf("New allocated %d bytes, want at most 64 KiB: the files are read on their first request", n)
	}
	get := func() *discard {
		w := &discard{header: http.Header{}}
		d.Serve(w, httptest.NewRequest(http.MethodGet, "/api/v2/docs/swagger-ui-bundle.js", nil), "swagger-ui-bundle.js", true)
		return w
	}
	var first, second *discard
	prepare := allocated(func() { first = get() })
	again := allocated(func() { second = get() })
	if first.status != 200 || second.status != 200 || first.header.Get("ETag") != second.header.Get("ETag") {
		t.Fatalf("two requests for the gzip bundle: %d %q and %d %q; want 200 with the same ETag",
			first.status, first.header.Get("ETag"), second.status, second.header.Get("ETag"))
	}
	if again > 64<<10 {
		t.Errorf("the second request for the gzip bundle allocated %d bytes (the first %d), want at most 64 KiB: prepared once", again, prepare)
	}
}

// TestConcurrentFirstRequests sends the first requests of a fresh Docs for each of its
// files at once, in both encodings (with -race, the check that preparing a file on its
// first request is safe): every answer is the file whole, with the same ETag.
func TestConcurrentFirstRequests(t *testing.T) {
	d, err := apidocs.New("/api/v2")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	for _, name := range []string{"swagger-ui-bundle.js", "swagger-ui.css", "LICENSE"} {
		if want[name], err = os.ReadFile("assets/" + name); err != nil {
			t.Fatal(err)
		}
	}
	type answer struct {
		name string
		gz   bool
		etag string
		body []byte
		err  error
	}
	const each = 4
	answers := make(chan answer, len(want)*2*each)
	var wg sync.WaitGroup
	for name := range want {
		for _, gz := range []bool{false, true} {
			for range each {
				wg.Go(func() {
					rec, _ := serve(d, http.MethodGet, name, gz)
					a := answer{name: name, gz: gz, etag: rec.Header().Get("ETag"), body: rec.Body.Bytes()}
					if gz {
						a.body, a.err = gunzip(rec.Body.Bytes())
					}
					answers <- a
				})
			}
		}
	}
	wg.Wait()
	close(answers)
	type file struct {
		name string
		gz   bool
	}
	etags := map[file]string{}
	for a := range answers {
		if a.err != nil || !bytes.Equal(a.body, want[a.name]) {
			t.Errorf("%s (gzip %v): %v, %d bytes; want the %d bytes of assets/", a.name, a.gz, a.err, len(a.body), len(want[a.name]))
		}
		key := file{a.name, a.gz}
		if prev, ok := etags[key]; ok && prev != a.etag || a.etag == "" {
			t.Errorf("%s (gzip %v): ETag %q, another answer had %q", a.name, a.gz, a.etag, prev)
		}
		etags[key] = a.etag
	}
}

// gunzip returns the content of a gzip stream.
func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// TestRangesAndPreconditionsIgnored: the page and its files are answered whole, whatever
// Range, If-Range, If-Match or If-Unmodified-Since say (If-None-Match alone is honoured):
// thousands of 1-byte ranges made a 206 of a megabyte of multipart for anyone, at some 20
// times the CPU of the whole file, and a range or precondition that failed was answered
// 416 or 412 in plain text or HTML, without no-store, unlike every other error (D24).
func TestRangesAndPreconditionsIgnored(t *testing.T) {
	d, bundle := docsAndBundle(t)
	many := "bytes=" + strings.Repeat("0-0,", 6999) + "0-0"
	for _, h := range [][]string{
		{"Range", many},
		{"Range", "bytes=0-99"},
		{"Range", "bytes=99999999-"},
		{"Range", "bytes=0-99", "If-Range", `"anything"`},
		{"If-Match", `"nope"`},
		{"If-Unmodified-Since", "Mon, 01 Jan 2001 00:00:00 GMT"},
	} {
		r, _ := serve(d, http.MethodGet, "swagger-ui-bundle.js", false, h...)
		if r.Code != http.StatusOK || !bytes.Equal(r.Body.Bytes(), bundle) || r.Header().Get("Accept-Ranges") != "" {
			t.Errorf("%s (%.40s): status %d, %d bytes, Accept-Ranges %q; want 200 and the whole bundle (%d bytes), no Accept-Ranges", h[0], h[1], r.Code, r.Body.Len(), r.Header().Get("Accept-Ranges"), len(bundle))
		}
	}
}

// docsAndBundle is the page under /api/v2, and the bytes of its largest file.
func docsAndBundle(t *testing.T) (*apidocs.Docs, []byte) {
	d, err := apidocs.New("/api/v2")
	if err != nil {
		t.Fatal(err)
	}
	bundle, err := os.ReadFile("assets/swagger-ui-bundle.js")
	if err != nil {
		t.Fatal(err)
	}
	return d, bundle
}
