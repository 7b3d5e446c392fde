package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/cmd/internal/cmdtest"
)

// Paths of one static document of each kind and of the search, relative to the base path.
var (
	staticPaths = []string{"/public/courses", "/public/courses?type=Online", "/public/popular", "/public/course/10", "/public/class/100"}
	searchPaths = []string{"/public/classes", "/public/course/18/classes?limit=50"}
)

// testHTTP checks methods (D24), unknown paths (D24), HEAD and the snapshot header.
func (f *fixture) testHTTP(t *testing.T) {
	d := f.edge
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
		for _, path := range []string{base + "/public/courses", base + "/public/classes", "/healthz", base + "/nowhere"} {
			r := checked(t, d.Do(t, method, path, f.token))
			wantError(t, r, http.StatusMethodNotAllowed, "")
			if got := r.Header.Get("Allow"); got != "GET, HEAD" {
				t.Errorf("%s %s: Allow = %q, want GET, HEAD", method, path, got)
			}
		}
	}
	for _, path := range []string{base + "/public/nowhere", "/nowhere", "/api/v1/public/courses", base + "/public/course/10/classes/extra"} {
		wantError(t, checked(t, d.Get(t, path, f.token)), http.StatusNotFound, "")
	}
	for _, path := range append(staticPaths, searchPaths...) {
		get := f.get(t, path)
		head := checked(t, d.Do(t, http.MethodHead, base+path, f.token))
		if head.StatusCode != http.StatusOK || len(head.Data) != 0 || head.Header.Get("Content-Length") != strconv.Itoa(len(get.Data)) {
			t.Errorf("HEAD %s: %s, %d bytes of body, Content-Length %q; want 200, none, %d",
				path, head.Status, len(head.Data), head.Header.Get("Content-Length"), len(get.Data))
		}
	}
	for _, path := range staticPaths {
		if got := f.get(t, path).Header.Get("X-Catalogue-Snapshot"); got != f.snapshot {
			t.Errorf("GET %s: X-Catalogue-Snapshot = %q, want %q", path, got, f.snapshot)
		}
	}
}

// testConditional checks ETags and If-None-Match on the static documents (D25).
func (f *fixture) testConditional(t *testing.T) {
	for _, path := range staticPaths {
		plain, zipped := f.get(t, path), f.get(t, path, "Accept-Encoding", "gzip")
		etag, gzEtag := plain.Header.Get("ETag"), zipped.Header.Get("ETag")
		if !strings.HasPrefix(etag, `"`) || !strings.HasPrefix(gzEtag, `"`) || etag == gzEtag {
			t.Errorf("GET %s: ETags %q (identity) and %q (gzip), want two different strong tags", path, etag, gzEtag)
			continue
		}
		for _, tc := range []struct {
			name   string
			header []string
			status int
		}{
			{"plain tag", []string{"If-None-Match", etag}, http.StatusNotModified},
			{"weak form", []string{"If-None-Match", "W/" + etag}, http.StatusNotModified},
			{"in a list", []string{"If-None-Match", `"other", ` + etag}, http.StatusNotModified},
			{"gzip tag", []string{"If-None-Match", gzEtag, "Accept-Encoding", "gzip"}, http.StatusNotModified},
			{"plain tag, gzip accepted", []string{"If-None-Match", etag, "Accept-Encoding", "gzip"}, http.StatusOK},
			{"gzip tag, plain wanted", []string{"If-None-Match", gzEtag}, http.StatusOK},
			{"other tag", []string{"If-None-Match", `"other"`}, http.StatusOK},
		} {
			r := f.get(t, path, tc.header...)
			if r.StatusCode != tc.status {
				t.Errorf("GET %s (%s): %s, want %d", path, tc.name, r.Status, tc.status)
			}
			if r.StatusCode == http.StatusNotModified && (len(r.Data) != 0 || r.Header.Get("ETag") == "") {
				t.Errorf("GET %s (%s): 304 with %d bytes of body and ETag %q, want no body and the tag", path, tc.name, len(r.Data), r.Header.Get("ETag"))
			}
		}
	}
}

// testGzip checks compression (D25): Content-Encoding, Vary, a Content-Length that is the
// size sent, and a decoded body equal to the uncompressed one.
func (f *fixture) testGzip(t *testing.T) {
	for _, path := range append(staticPaths, searchPaths...) {
		plain := f.get(t, path)
		zipped := f.get(t, path, "Accept-Encoding", "gzip, deflate, br")
		wantVary(t, plain)
		wantVary(t, zipped)
		if got := plain.Header.Get("Content-Encoding"); got != "" {
			t.Errorf("GET %s without Accept-Encoding: Content-Encoding %q, want none", path, got)
		}
		if got := zipped.Header.Get("Content-Encoding"); got != "gzip" {
			t.Errorf("GET %s with Accept-Encoding gzip: Content-Encoding %q, want gzip", path, got)
			continue
		}
		for _, r := range []*cmdtest.Response{plain, zipped} {
			if got := r.Header.Get("Content-Length"); got != strconv.Itoa(len(r.Data)) {
				t.Errorf("GET %s (%s): Content-Length %q, body %d bytes", path, r.Header.Get("Content-Encoding"), got, len(r.Data))
			}
		}
		zr, err := gzip.NewReader(bytes.NewReader(zipped.Data))
		if err != nil {
			t.Errorf("GET %s: gzip body: %v", path, err)
			continue
		}
		decoded, err := io.ReadAll(zr)
		if err != nil {
			t.Errorf("GET %s: gunzip: %v", path, err)
			continue
		}
		if diff := cmp.Diff(string(plain.Data), string(decoded)); diff != "" {
			t.Errorf("GET %s: decoded gzip body differs from the plain one (-plain +decoded):\n%s", path, diff)
		}
	}
	// A client that refuses gzip gets the plain body.
	if r := f.get(t, "/public/courses", "Accept-Encoding", "gzip;q=0, identity"); r.Header.Get("Content-Encoding") != "" {
		t.Errorf("GET /public/courses with gzip;q=0: Content-Encoding %q, want none", r.Header.Get("Content-Encoding"))
	}
}

// wantVary checks that a response varies on Accept-Encoding (D25).
func wantVary(t *testing.T, r *cmdtest.Response) {
	t.Helper()
	for _, v := range r.Header.Values("Vary") {
		for _, name := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(name), "Accept-Encoding") {
				return
			}
		}
	}
	t.Errorf("GET %s: Vary %q does not name Accept-Encoding", r.Request.URL, r.Header.Values("Vary"))
}

// testUnversioned checks what needs no token (D26): health, readiness, metrics (on their
// own listener), and the API description.
func (f *fixture) testUnversioned(t *testing.T) {
	d := f.edge
	r := checked(t, d.Get(t, "/healthz", ""))
	if r.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz: %s, want 200", r.Status)
	}
	r = checked(t, d.Get(t, "/readyz", ""))
	if r.StatusCode != http.StatusOK {
		t.Errorf("GET /readyz: %s, want 200", r.Status)
	} else if got, _ := r.JSON(t).(map[string]any)["snapshot"]; got != f.snapshot {
		t.Errorf("GET /readyz: snapshot %v, want %q", got, f.snapshot)
	}
	// Metrics are on edge.metrics_listen only: the public port answers 404 (D26).
	r = checked(t, d.Get(t, "/metrics", ""))
	if r.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics on edge.listen: %s, want 404", r.Status)
	}
	metrics := d.Metrics(t)
	for _, want := range []string{"catalogue_edge_requests_total", `catalogue_edge_snapshot_info{snapshot="` + f.snapshot + `"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("GET %s lacks %s", d.MetricsURL, want)
		}
	}

	r = checked(t, d.Get(t, base+"/openapi.json", ""))
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/openapi.json: %s, want 200", base, r.Status)
	}
	var doc struct {
		OpenAPI string
		Servers []struct{ URL string }
		Paths   map[string]any
	}
	if err := json.Unmarshal(r.Data, &doc); err != nil {
		t.Fatalf("GET %s/openapi.json: %v", base, err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") || len(doc.Servers) == 0 || doc.Servers[0].URL != base {
		t.Errorf("openapi.json: openapi %q, servers %v; want 3.x and %s", doc.OpenAPI, doc.Servers, base)
	}
	// Every endpoint of the spec is described (the document may describe more, such as
	// /healthz with a server of its own).
	for _, p := range []string{"/public/courses", "/public/popular", "/public/classes", "/public/course/{id}/classes", "/public/course/{id}", "/public/class/{id}"} {
		if doc.Paths[p] == nil {
			t.Errorf("openapi.json does not describe %s", p)
		}
	}
}
