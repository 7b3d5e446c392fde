package edge

import (
	"net/http"
	"testing"

	"github.com/trainingco/catalogue/edge/docstore/docstoretest"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestFeedLicenseConfigured: every feed page names feeds.license as configured (D35), plain
// and gzipped, the last page too; and since the license is part of the body, a page's
// ETag differs from the same page's under another license (D25), so that a cache holding
// the page under the old license does not get a 304 for it.
func TestFeedLicenseConfigured(t *testing.T) {
	const license = "https://data.example.org/licences/open-catalogue-2.0"
	f := fixture{id: "feeds", docs: map[string]string{"/public/class/3": `{"course_id":1}`}, modified: map[string]int64{"/public/class/3": 42}}
	st := openStore(t, testkit.NewLocalStore(t))
	publish(t, st, f)
	cfg := testConfig()
	cfg.Feeds.License = license
	configured, byDefault := newTestServer(t, st, cfg), newTestServer(t, st, testConfig())

	const next = `{"next":"http://example.com/api/v2/public/feeds/classes?afterChangeNumber=42",`
	pages := []struct{ target, body string }{
		{"/api/v2/public/feeds/classes", next + `"items":[{"state":"updated","kind":"Class","id":3,"modified":42,"data":{"course_id":1}}],"license":"` + license + `"}`},
		{"/api/v2/public/feeds/classes?afterChangeNumber=42", next + `"items":[],"license":"` + license + `"}`},
	}
	for _, pg := range pages {
		for _, enc := range []string{"", "gzip"} {
			hdr := map[string]string{"Accept-Encoding": enc}
			got := configured.get(http.MethodGet, pg.target, hdr, "Etag")
			body := got.Body
			if enc == "gzip" {
				body = docstoretest.Gunzip(t, []byte(got.Body))
			}
			if got.Status != http.StatusOK || body != pg.body {
				t.Errorf("%s (%q) with feeds.license %s: %d %s, want 200 %s", pg.target, enc, license, got.Status, body, pg.body)
			}
			other := byDefault.get(http.MethodGet, pg.target, hdr, "Etag")
			if got.Headers["Etag"] == "" || got.Headers["Etag"] == other.Headers["Etag"] {
				t.Errorf("%s (%q): ETag %q under %s, %q under the default license; want two different ETags",
					pg.target, enc, got.Headers["Etag"], license, other.Headers["Etag"])
			}
		}
	}
}
