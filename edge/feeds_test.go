package edge

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/edge/docstore/docstoretest"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// feedPage is a feed page as a partner decodes it, data kept byte for byte.
type feedPage struct {
	Next    string     `json:"next"`
	Items   []feedItem `json:"items"`
	License string     `json:"license"`
}

type feedItem struct {
	State    string          `json:"state"`
	Kind     string          `json:"kind"`
	ID       int64           `json:"id"`
	Modified int64           `json:"modified"`
	Data     json.RawMessage `json:"data,omitempty"`
}

// modelItem is one item of the model feed: a route, its number, its body ("" deleted).
type modelItem struct {
	kind     string
	id       int64
	modified int64
	body     string
}

// feedFixture is a snapshot of 1,210 classes and 30 courses with sparse change numbers
// (multiples of 10, so that positions between items exist), 40 class and 5 course
// tombstones among them, in a random order of numbers.
func feedFixture() (fixture, map[string][]modelItem) {
	r := rand.New(rand.NewPCG(3, 4))
	f := fixture{id: "feeds", docs: map[string]string{snapshot.RouteCourses: `{"data":[]}`}, modified: map[string]int64{}}
	model := map[string][]modelItem{}
	numbers := r.Perm(1210 + 30 + 45)
	next := func() int64 { n := int64(numbers[0]+1) * 10; numbers = numbers[1:]; return n }
	add := func(feed, kind string, route string, id int64, deleted bool) {
		n := next()
		it := modelItem{kind: kind, id: id, modified: n}
		if deleted {
			f.tombstones = append(f.tombstones, snapshot.Tombstone{Route: route, Modified: n})
		} else {
			it.body = fmt.Sprintf(`{"route":%q,"cost":%d}`, route, r.IntN(3)) // some bodies shared
			f.docs[route], f.modified[route] = it.body, n
		}
		model[feed] = append(model[feed], it)
	}
	for id := int64(1); id <= 1250; id++ {
		add("classes", snapshot.KindClass, snapshot.ClassRoute(id), id, id > 1210)
	}
	for id := int64(1); id <= 35; id++ {
		add("courses", snapshot.KindCourse, snapshot.CourseRoute(id), id, id > 30)
	}
	for _, items := range model {
		slices.SortFunc(items, func(a, b modelItem) int { return int(a.modified - b.modified) })
	}
	return f, model
}

// modelPage is the page the model feed gives after after (nil: from the start): a plain
// filter and cut of the items in order, and next as D37 says.
func modelPage(items []modelItem, feedURL string, after *int64, license string) feedPage {
	p := feedPage{License: license, Items: []feedItem{}}
	for _, it := range items {
		if (after == nil || it.modified > *after) && len(p.Items) < 500 {
			fi := feedItem{State: "updated", Kind: it.kind, ID: it.id, Modified: it.modified, Data: json.RawMessage(it.body)}
			if it.body == "" {
				fi.State, fi.Data = "deleted", nil
			}
			p.Items = append(p.Items, fi)
		}
	}
	switch {
	case len(p.Items) > 0:
		p.Next = feedURL + "?afterChangeNumber=" + strconv.FormatInt(p.Items[len(p.Items)-1].Modified, 10)
	case after != nil:
		p.Next = feedURL + "?afterChangeNumber=" + strconv.FormatInt(*after, 10)
	default:
		p.Next = feedURL
	}
	return p
}

// encodePage is p as encoding/json writes it, without HTML escaping: the bytes the edge
// must send, fields in D35's order and data as the documents are.
func encodePage(t *testing.T, p feedPage) string {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// TestFeedPagesAgainstModel asks both feeds for the page after every change number, every
// position between two, before the first and past the last, and from the start (no value,
// and an empty one), and
// compares each page with the model's: the items, their data byte for byte, next and the
// license (D35, D37).
func TestFeedPagesAgainstModel(t *testing.T) {
	f, model := feedFixture()
	ts := startOn(t, openStore(t, testkit.NewLocalStore(t)), f)
	for feed, items := range model {
		feedURL := "http://example.com/api/v2/public/feeds/" + feed
		positions := []*int64{nil}
		for _, n := range []int64{-1 << 62, -1, 0, 9, items[len(items)-1].modified + 1, 1<<53 - 1} {
			positions = append(positions, &n)
		}
		for _, it := range items {
			for _, n := range []int64{it.modified, it.modified - 5} {
				positions = append(positions, &n)
			}
		}
		for _, after := range positions {
			target, what := feedURL, "from the start"
			if after != nil {
				target += "?afterChangeNumber=" + strconv.FormatInt(*after, 10)
				what = "after " + strconv.FormatInt(*after, 10)
			}
			res := ts.get(http.MethodGet, target, nil)
			if res.Status != http.StatusOK {
				t.Fatalf("%s %s: status %d %s", feed, what, res.Status, res.Body)
			}
			want := modelPage(items, feedURL, after, "https://creativecommons.org/licenses/by/4.0/")
			if res.Body == encodePage(t, want) { // the exact bytes: one comparison, not 500 reflected ones
				continue
			}
			var got feedPage
			if err := json.Unmarshal([]byte(res.Body), &got); err != nil {
				t.Fatalf("%s %s: %v", feed, what, err)
			}
			t.Fatalf("%s %s: page (-model +edge):\n%s", feed, what, cmp.Diff(want, got))
		}
		// An empty value is the start too (D37).
		start := modelPage(items, feedURL, nil, "https://creativecommons.org/licenses/by/4.0/")
		if res := ts.get(http.MethodGet, feedURL+"?afterChangeNumber=", nil); res.Status != http.StatusOK || res.Body != encodePage(t, start) {
			t.Errorf("%s with afterChangeNumber empty: %d %s, want the first page", feed, res.Status, res.Body)
		}
	}
}

// TestFeedHeaders: a page with items is cached an hour, the last page 8 s, both with a
// strong ETag per encoding that gives 304 (D38, D25); afterChangeNumber that is not an
// integer is 400 (D37, D9); next is built from edge.public_url, else from the request,
// with X-Forwarded-Proto and -Host only from a trusted proxy (D37).
func TestFeedHeaders(t *testing.T) {
	f := fixture{id: "feeds", docs: map[string]string{"/public/class/3": `{"course_id":1}`}, modified: map[string]int64{"/public/class/3": 42}}
	st := openStore(t, testkit.NewLocalStore(t))
	ts := startOn(t, st, f)
	keep := []string{"Cache-Control", "Etag", "Content-Type", "Content-Encoding", "Vary"}
	page := ts.get(http.MethodGet, "/api/v2/public/feeds/classes", nil, keep...)
	wantBody := `{"next":"http://example.com/api/v2/public/feeds/classes?afterChangeNumber=42","items":[{"state":"updated","kind":"Class","id":3,"modified":42,"data":{"course_id":1}}],"license":"https://creativecommons.org/licenses/by/4.0/"}`
	if page.Status != http.StatusOK || page.Body != wantBody || page.Headers["Cache-Control"] != "private, max-age=3600" ||
		page.Headers["Content-Type"] != "application/json" || page.Headers["Vary"] != "Accept-Encoding" || page.Headers["Etag"] == "" {
		t.Errorf("first page = %+v, want 200 %s cached an hour with an ETag", page, wantBody)
	}
	last := ts.get(http.MethodGet, "/api/v2/public/feeds/classes?afterChangeNumber=42", nil, keep...)
	wantLast := `{"next":"http://example.com/api/v2/public/feeds/classes?afterChangeNumber=42","items":[],"license":"https://creativecommons.org/licenses/by/4.0/"}`
	if last.Status != http.StatusOK || last.Body != wantLast || last.Headers["Cache-Control"] != "private, max-age=8" || last.Headers["Etag"] == page.Headers["Etag"] {
		t.Errorf("last page = %+v, want 200 %s cached 8 s with an ETag of its own", last, wantLast)
	}
	gz := ts.get(http.MethodGet, "/api/v2/public/feeds/classes", map[string]string{"Accept-Encoding": "gzip"}, keep...)
	if gz.Headers["Content-Encoding"] != "gzip" || docstoretest.Gunzip(t, []byte(gz.Body)) != wantBody || gz.Headers["Etag"] == page.Headers["Etag"] {
		t.Errorf("gzip page = %+v, want the page gzipped with an ETag of its own", gz.Headers)
	}
	for _, r := range []response{page, gz} {
		hdr := map[string]string{"If-None-Match": r.Headers["Etag"], "Accept-Encoding": r.Headers["Content-Encoding"]}
		if got := ts.get(http.MethodGet, "/api/v2/public/feeds/classes", hdr); got.Status != http.StatusNotModified || got.Body != "" {
			t.Errorf("If-None-Match %s: %d %q, want 304 without a body", r.Headers["Etag"], got.Status, got.Body)
		}
	}
	bad := ts.get(http.MethodGet, "/api/v2/public/feeds/courses?afterChangeNumber=1.5", nil, "Content-Type")
	if bad.Status != http.StatusBadRequest || bad.Body != `{"message":"The afterChangeNumber parameter must be an integer."}`+"\n" {
		t.Errorf("afterChangeNumber=1.5: %+v, want 400 with a message", bad)
	}
	if got := do(ts.Handler(), http.MethodGet, "/api/v2/public/feeds/courses", nil); got.Status != http.StatusUnauthorized {
		t.Errorf("without a token: %d, want 401", got.Status)
	}
	nextWith := func(s testServer, remote string, hdr http.Header) string {
		req := httptest.NewRequest(http.MethodGet, "/api/v2/public/feeds/courses", nil)
		req.RemoteAddr = remote
		req.Header = hdr.Clone()
		req.Header.Set("Authorization", "Bearer "+s.token)
		if h := hdr.Get("Host"); h != "" {
			req.Host = h // net/http keeps it apart from the headers
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		var p feedPage
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
			t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
		}
		return p.Next
	}
	next := func(s testServer, remote string, hdr map[string]string) string {
		h := http.Header{}
		for k, v := range hdr {
			h.Set(k, v)
		}
		return nextWith(s, remote, h)
	}
	fwd := map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "api.example.org"}
	if got := next(ts, "10.0.0.1:5000", fwd); got != "http://example.com/api/v2/public/feeds/courses" {
		t.Errorf("forwarded headers from an untrusted peer: next %s, want the request's host", got)
	}
	// A host name as Docker names services is a host (RFC 3986 allows "_"); one that would
	// change what the URL names is not, and the edge says localhost rather than repeat it.
	for host, want := range map[string]string{
		"catalogue_edge:8080": "http://catalogue_edge:8080/api/v2/public/feeds/courses",
		"[::1]:8080":          "http://[::1]:8080/api/v2/public/feeds/courses",
		"evil.example/x?":     "http://localhost/api/v2/public/feeds/courses",
		"user@evil.example":   "http://localhost/api/v2/public/feeds/courses",
		"a.example#frag":      "http://localhost/api/v2/public/feeds/courses",
	} {
		if got := next(ts, "10.0.0.1:5000", map[string]string{"Host": host}); got != want {
			t.Errorf("Host %q: next %s, want %s", host, got, want)
		}
	}
	cfg := testConfig()
	cfg.Edge.TrustedProxies = []string{"10.0.0.0/8"}
	trusting := newTestServer(t, st, cfg)
	if got := next(trusting, "10.0.0.1:5000", fwd); got != "https://api.example.org/api/v2/public/feeds/courses" {
		t.Errorf("forwarded headers from a trusted proxy: next %s, want theirs", got)
	}
	// A proxy that appends (Apache's mod_proxy does to X-Forwarded-Host) leaves the client's
	// values first: the proxy's own, the last, is the one believed.
	appended := map[string]string{"X-Forwarded-Proto": "http, https", "X-Forwarded-Host": "evil.example, api.example.org"}
	if got := next(trusting, "10.0.0.1:5000", appended); got != "https://api.example.org/api/v2/public/feeds/courses" {
		t.Errorf("forwarded headers appended to by a trusted proxy: next %s, want its own values", got)
	}
	// A proxy that adds a line of its own (HAProxy's add-header) leaves the client's first.
	lines := http.Header{}
	lines.Add("X-Forwarded-Host", "evil.example")
	lines.Add("X-Forwarded-Host", "api.example.org")
	lines.Set("X-Forwarded-Proto", "https")
	if got := nextWith(trusting, "10.0.0.1:5000", lines); got != "https://api.example.org/api/v2/public/feeds/courses" {
		t.Errorf("a forwarded header line added by a trusted proxy: next %s, want its own value", got)
	}
	if got := next(trusting, "192.0.2.1:5000", fwd); got != "http://example.com/api/v2/public/feeds/courses" {
		t.Errorf("forwarded headers from a peer outside trusted_proxies: next %s, want the request's host", got)
	}
	cfg.Edge.PublicURL = "https://partners.example.net/catalogue"
	public := newTestServer(t, st, cfg)
	if got := next(public, "10.0.0.1:5000", fwd); got != "https://partners.example.net/catalogue/api/v2/public/feeds/courses" {
		t.Errorf("with edge.public_url: next %s, want it", got)
	}
}
