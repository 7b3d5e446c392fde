package edge

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/edge/docstore/docstoretest"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// Snapshot A: every list, two courses, two classes. Each body names its snapshot.
const (
	coursesA    = `{"data":[{"id":1,"name":"Alpha"}],"snapshot":"snap-a"}`
	coursesAEtg = `"86eee1877f37a87fea211e3c6a13c923bf6a8356a5ffde7138d6bf5735f0b64e"` // sha256sum of coursesA
)

func fixtureA() fixture {
	return fixture{id: "snap-a", docs: map[string]string{
		"/public/courses":                                    coursesA,
		"/public/courses?type=Online":                        `{"data":"Online","snapshot":"snap-a"}`,
		"/public/courses?type=Blended":                       `{"data":"Blended","snapshot":"snap-a"}`,
		"/public/courses?type=Brick and Mortar":              `{"data":"Brick and Mortar","snapshot":"snap-a"}`,
		"/public/courses?type=Blended&type=Online":           `{"data":"Blended+Online","snapshot":"snap-a"}`,
		"/public/courses?type=Blended&type=Brick and Mortar": `{"data":"Blended+Brick","snapshot":"snap-a"}`,
		"/public/courses?type=Brick and Mortar&type=Online":  `{"data":"Brick+Online","snapshot":"snap-a"}`,
		"/public/popular":                                    `[{"id":1,"snapshot":"snap-a"}]`,
		"/public/course/1":                                   `{"id":1,"snapshot":"snap-a"}`,
		"/public/course/42":                                  `{"id":42,"snapshot":"snap-a"}`,
		"/public/class/7":                                    `{"course_id":1,"snapshot":"snap-a"}`,
		"/public/class/9223372036854775807":                  `{"course_id":42,"snapshot":"snap-a"}`,
	}}
}

// startA returns a server on a fresh store of each kind that serves snapshot A.
func startA(t *testing.T) map[string]testServer {
	servers := map[string]testServer{}
	for name, cfg := range testkit.Stores(t) {
		servers[name] = startOn(t, openStore(t, cfg), fixtureA())
	}
	return servers
}

// startLocalA returns a server on a fresh local store that serves snapshot A.
func startLocalA(t *testing.T) testServer {
	return startOn(t, openStore(t, testkit.NewLocalStore(t)), fixtureA())
}

// startOn publishes f to st and returns a server started on st.
func startOn(t *testing.T, st store.Store, f fixture) testServer {
	publish(t, st, f)
	return newTestServer(t, st, testConfig())
}

func TestStaticRoutes(t *testing.T) {
	const (
		courseNotFound = `{"message":"Course not found."}` + "\n"
		classNotFound  = `{"message":"Class not found."}` + "\n"
		notFound       = `{"message":"Not Found."}` + "\n"
		badType        = `{"message":"The selected type is invalid. Allowed types: Online, Brick and Mortar, Blended."}` + "\n"
	)
	tests := []struct {
		target string
		status int
		body   string
	}{
		{"/public/courses", 200, coursesA},
		{"/public/courses?type=Online", 200, `{"data":"Online","snapshot":"snap-a"}`},
		{"/public/courses?type=Brick+and+Mortar", 200, `{"data":"Brick and Mortar","snapshot":"snap-a"}`},
		{"/public/courses?type=Brick%20and%20Mortar", 200, `{"data":"Brick and Mortar","snapshot":"snap-a"}`},
		{"/public/courses?type[]=Online&type[]=Blended", 200, `{"data":"Blended+Online","snapshot":"snap-a"}`},
		{"/public/courses?type%5B%5D=Online&type%5B%5D=Blended", 200, `{"data":"Blended+Online","snapshot":"snap-a"}`},
		{"/public/courses?type=Online&type=Blended", 200, `{"data":"Blended+Online","snapshot":"snap-a"}`},
		{"/public/courses?type[0]=Blended&type[1]=Brick+and+Mortar", 200, `{"data":"Blended+Brick","snapshot":"snap-a"}`},
		{"/public/courses?type=Online&type[]=Brick+and+Mortar&type=Online", 200, `{"data":"Brick+Online","snapshot":"snap-a"}`},
		{"/public/courses?type=Online&type=", 200, `{"data":"Online","snapshot":"snap-a"}`},
		{"/public/courses?type=&type[]=", 200, coursesA},
		{"/public/courses?type=Online&type=Blended&type=Brick+and+Mortar", 200, coursesA},
		{"/public/courses?limit=1&page=3&sort=name", 200, coursesA},
		{"/public/courses?type=online", 400, badType},
		{"/public/courses?type=Online&type[]=Webinar", 400, badType},
		{"/public/courses?type=+Online", 400, badType},
		{"/public/popular", 200, `[{"id":1,"snapshot":"snap-a"}]`},
		{"/public/course/1", 200, `{"id":1,"snapshot":"snap-a"}`},
		{"/public/course/42", 200, `{"id":42,"snapshot":"snap-a"}`},
		{"/public/course/2", 404, courseNotFound},
		{"/public/course/7", 404, courseNotFound}, // a class id is not a course id
		{"/public/class/7", 200, `{"course_id":1,"snapshot":"snap-a"}`},
		{"/public/class/9223372036854775807", 200, `{"course_id":42,"snapshot":"snap-a"}`},
		{"/public/class/1", 404, classNotFound},
		{"/public/class/9223372036854775808", 404, classNotFound},
		{"/public/nope", 404, notFound},
	}
	// D15: every id that is not a positive base-10 integer, on both routes.
	for _, id := range []string{"abc", "-1", "0", "00", "1.5", "+1", "01", "007", "1e3", "0x1", "%201", "1%20",
		"99999999999999999999", "18446744073709551617", "%EF%BC%91"} {
		tests = append(tests,
			struct {
				target string
				status int
				body   string
			}{"/public/course/" + id, 404, courseNotFound},
			struct {
				target string
				status int
				body   string
			}{"/public/class/" + id, 404, classNotFound})
	}
	for name, ts := range startA(t) {
		t.Run(name, func(t *testing.T) {
			for _, tt := range tests {
				got := ts.get(http.MethodGet, "/api/v2"+tt.target, nil)
				want := response{Status: tt.status, Headers: map[string]string{}, Body: tt.body}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("GET %q mismatch (-want +got):\n%s", tt.target, diff)
				}
			}
		})
	}
}

// TestUnknownPaths: unknown paths outside the token-protected group are 404 JSON too.
func TestUnknownPaths(t *testing.T) {
	ts := startLocalA(t)
	for _, target := range []string{"/nope", "/api/v2", "/api/v2/nope", "/api/v3/public/courses"} {
		got := do(ts.Handler(), http.MethodGet, target, nil, "Content-Type", "X-Content-Type-Options")
		want := response{Status: 404, Body: `{"message":"Not Found."}` + "\n", Headers: map[string]string{
			"Content-Type": "application/json", "X-Content-Type-Options": "nosniff"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("GET %q mismatch (-want +got):\n%s", target, diff)
		}
	}
}

var staticHeaders = []string{"Content-Type", "Content-Length", "Content-Encoding", "ETag", "Vary",
	"Cache-Control", "X-Catalogue-Snapshot", "X-Content-Type-Options"}

func TestStaticHeaders(t *testing.T) {
	ts := startLocalA(t)
	plain := map[string]string{
		"Content-Type": "application/json", "Content-Length": "54", "ETag": coursesAEtg,
		"Vary": "Accept-Encoding", "Cache-Control": "private, max-age=90",
		"X-Catalogue-Snapshot": "snap-a", "X-Content-Type-Options": "nosniff",
	}
	notModified := map[string]string{
		"ETag": coursesAEtg, "Vary": "Accept-Encoding", "Cache-Control": "private, max-age=90",
		"X-Catalogue-Snapshot": "snap-a", "X-Content-Type-Options": "nosniff",
	}
	for _, tt := range []struct {
		method string
		req    map[string]string
		want   response
	}{
		{"GET", nil, response{200, plain, coursesA}},
		{"HEAD", nil, response{200, plain, ""}},
		{"GET", map[string]string{"Accept-Encoding": "gzip;q=0, deflate"}, response{200, plain, coursesA}},
		{"GET", map[string]string{"Accept-Encoding": "identity"}, response{200, plain, coursesA}},
		{"GET", map[string]string{"If-None-Match": coursesAEtg}, response{304, notModified, ""}},
		{"HEAD", map[string]string{"If-None-Match": coursesAEtg}, response{304, notModified, ""}},
		{"GET", map[string]string{"If-None-Match": `"a,b", "x", ` + coursesAEtg}, response{304, notModified, ""}},
		{"GET", map[string]string{"If-None-Match": "W/" + coursesAEtg}, response{304, notModified, ""}},
		{"GET", map[string]string{"If-None-Match": "*"}, response{304, notModified, ""}},
		{"GET", map[string]string{"If-None-Match": `"86eee1877f37a87fea211e3c6a13c923bf6a8356a5ffde7138d6bf5735f0b64e-gz"`}, response{200, plain, coursesA}},
		{"GET", map[string]string{"If-None-Match": `"86eee1877f37a87fea211e3c6a13c923bf6a8356a5ffde7138d6bf5735f0b64"`}, response{200, plain, coursesA}},
		{"GET", map[string]string{"If-None-Match": `86eee1877f37a87fea211e3c6a13c923bf6a8356a5ffde7138d6bf5735f0b64e`}, response{200, plain, coursesA}},
	} {
		got := ts.get(tt.method, "/api/v2/public/courses", tt.req, staticHeaders...)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s with %q mismatch (-want +got):\n%s", tt.method, tt.req, diff)
		}
	}
}

func TestStaticGzip(t *testing.T) {
	const gzTag = `"86eee1877f37a87fea211e3c6a13c923bf6a8356a5ffde7138d6bf5735f0b64e-gz"`
	ts := startLocalA(t)
	for _, ae := range []string{"gzip", "gzip, deflate, br, zstd", "br;q=1.0, gzip;q=0.8, *;q=0.1", "*", "x-gzip", "GZIP", "gzip;q=0.5"} {
		got := ts.get("GET", "/api/v2/public/courses", map[string]string{"Accept-Encoding": ae}, staticHeaders...)
		if diff := cmp.Diff(coursesA, docstoretest.Gunzip(t, []byte(got.Body))); diff != "" {
			t.Errorf("gunzip(body) with Accept-Encoding %q mismatch (-want +got):\n%s", ae, diff)
		}
		want := map[string]string{
			"Content-Type": "application/json", "Content-Length": strconv.Itoa(len(got.Body)), "Content-Encoding": "gzip",
			"ETag": gzTag, "Vary": "Accept-Encoding", "Cache-Control": "private, max-age=90",
			"X-Catalogue-Snapshot": "snap-a", "X-Content-Type-Options": "nosniff",
		}
		if diff := cmp.Diff(want, got.Headers); diff != "" {
			t.Errorf("headers with Accept-Encoding %q mismatch (-want +got):\n%s", ae, diff)
		}
		head := ts.get("HEAD", "/api/v2/public/courses", map[string]string{"Accept-Encoding": ae}, staticHeaders...)
		if diff := cmp.Diff(response{200, want, ""}, head); diff != "" {
			t.Errorf("HEAD with Accept-Encoding %q mismatch (-want +got):\n%s", ae, diff)
		}
		cond := ts.get("GET", "/api/v2/public/courses", map[string]string{"Accept-Encoding": ae, "If-None-Match": gzTag}, "ETag")
		if diff := cmp.Diff(response{304, map[string]string{"ETag": gzTag}, ""}, cond); diff != "" {
			t.Errorf("If-None-Match with Accept-Encoding %q mismatch (-want +got):\n%s", ae, diff)
		}
	}
}

// TestStaticOverTheWire checks what net/http itself sends: the Content-Length on the wire
// is the body's length, HEAD sends the same length and no body, and the gzip body arrives
// as stored.
func TestStaticOverTheWire(t *testing.T) {
	const plain = `{"id":42,"snapshot":"snap-a"}`
	ts := startLocalA(t)
	srv := httptest.NewServer(ts.Handler())
	t.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	send := func(method, ae string) (*http.Response, []byte) {
		req, err := http.NewRequest(method, srv.URL+"/api/v2/public/course/42", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+ts.token)
		if ae != "" {
			req.Header.Set("Accept-Encoding", ae)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res, body
	}
	type wire struct {
		Status        int
		ContentLength int64
		Encoding      string
		Body          string // decoded
	}
	for _, ae := range []string{"", "gzip"} {
		res, body := send("GET", ae)
		got := wire{res.StatusCode, res.ContentLength, res.Header.Get("Content-Encoding"), string(body)}
		want := wire{200, int64(len(body)), "", plain}
		if ae == "gzip" {
			got.Body = docstoretest.Gunzip(t, body)
			want.Encoding = "gzip"
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("GET with Accept-Encoding %q mismatch (-want +got):\n%s", ae, diff)
		}
		res, headBody := send("HEAD", ae)
		got = wire{res.StatusCode, res.ContentLength, res.Header.Get("Content-Encoding"), string(headBody)}
		want.Body = ""
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("HEAD with Accept-Encoding %q mismatch (-want +got):\n%s", ae, diff)
		}
	}
}
