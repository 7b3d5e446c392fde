package security

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/trainingco/catalogue/builder/apitoken"
)

// hostileSeed and hostileRequests define TestHostileRequests's run: the same seed sends
// the same requests in the same order (only the token differs), so a failure names the
// seed and the request's number.
const (
	hostileSeed     = 20270301
	hostileRequests = 5000
)

// d8Messages are the only bodies a 500 may have: the contract's answer to an unparseable
// start, end or date filter (spec 4.3 rule 5, D8).
var d8Messages = map[string]bool{
	"The start parameter must be a date in the format MM-DD-YYYY (for example 01-31-2027).": true,
	"The end parameter must be a date in the format MM-DD-YYYY (for example 01-31-2027).":   true,
	"The date parameter must be a date in the format MM-DD-YYYY (for example 01-31-2027).":  true,
}

// TestHostileRequests sends thousands of seeded random and hostile requests (see hostile)
// through the edge's whole handler, on a catalogue built by builder.Run and with the
// database up, mostly with a valid token. No request may panic the handler or get a 5xx
// other than D8's 500 (recover would turn a panic into a 500 "Server Error"; 503 means the
// database choked on the input); every error body is {"message": string} as JSON (D24);
// every answer carries X-Content-Type-Options: nosniff (D25); no error is logged.
func TestHostileRequests(t *testing.T) {
	logs := &syncBuffer{}
	ds := genDataset(7)
	s := newSite(t, ds, siteOptions{logs: logs})
	unknown, err := apitoken.New()
	if err != nil {
		t.Fatal(err)
	}
	g := &hostile{r: rand.New(rand.NewPCG(hostileSeed, 0)), token: s.token, unknown: unknown}
	for _, c := range ds.courses {
		g.courses = append(g.courses, strconv.FormatInt(c.id, 10))
	}
	for _, c := range ds.classes {
		g.classes = append(g.classes, strconv.FormatInt(c.id, 10))
	}
	statuses := map[int]int{}
	refused, failures := 0, 0
	for i := range hostileRequests {
		w := g.request()
		r, err := w.parse()
		if err != nil {
			refused++ // net/http answers 400 itself; the handler never sees it
			continue
		}
		rec, panicked := serveSafely(s.handler, r)
		if panicked != nil {
			failures++
			t.Errorf("seed %d request %d panicked the handler: %v\n%s", hostileSeed, i, panicked, w)
			continue
		}
		statuses[rec.Code]++
		if etag := rec.Header().Get("ETag"); etag != "" && len(g.etags) < 50 {
			g.etags = append(g.etags, etag)
		}
		if problem := s.checkHostile(w, r, rec); problem != "" {
			failures++
			if failures <= 20 {
				t.Errorf("seed %d request %d: %s\n%s", hostileSeed, i, problem, w)
			}
		}
	}
	for _, want := range []int{200, 400, 401, 404, 405, 500} {
		if statuses[want] == 0 {
			t.Errorf("no request got %d: the generator no longer reaches every kind of answer (%v)", want, statuses)
		}
	}
	checkLogs(t, logs.String(), hostileRequests-refused)
	t.Logf("seed %d: %d requests (%d to a search route), %d refused by net/http's parser, statuses %v, %d failures",
		hostileSeed, hostileRequests, g.searched, refused, statuses, failures)
}

// parse reads the request the way net/http's server does, from its bytes on the wire.
func (w wireRequest) parse() (*http.Request, error) {
	r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(w.head() + w.body)))
	if err != nil {
		return nil, err
	}
	r.RemoteAddr = w.remote
	return r, nil
}

// head is the request line and headers of w as sent.
func (w wireRequest) head() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: catalogue.test\r\n", w.method, w.target)
	for _, h := range w.header {
		fmt.Fprintf(&b, "%s: %s\r\n", h[0], h[1])
	}
	if w.body != "" {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(w.body))
	}
	b.WriteString("\r\n")
	return b.String()
}

// maxHead is D46's bound on a request's line and headers: past it, 431.
const maxHead = 32 << 10

// serveSafely serves r, returning what a panic that escaped the handler carried.
func serveSafely(h http.Handler, r *http.Request) (rec *httptest.ResponseRecorder, panicked any) {
	rec = httptest.NewRecorder()
	defer func() { panicked = recover() }()
	h.ServeHTTP(rec, r)
	return rec, nil
}

// checkHostile returns what is wrong with the answer to w, or "".
func (s *site) checkHostile(w wireRequest, r *http.Request, rec *httptest.ResponseRecorder) string {
	h, body := rec.Header(), rec.Body.Bytes()
	if got := h.Values("X-Content-Type-Options"); !slices.Equal(got, []string{"nosniff"}) {
		return fmt.Sprintf("status %d with X-Content-Type-Options %q, want nosniff", rec.Code, got)
	}
	// A HEAD's body is not checked: net/http drops whatever a handler writes for one (the
	// health handlers write theirs), and the recorder does not.
	head := r.Method == http.MethodHead
	if n := len(w.head()); n > maxHead && rec.Code != 431 {
		return fmt.Sprintf("a request head of %d bytes answered %d, want 431 (D46)", n, rec.Code)
	}
	switch code := rec.Code; {
	case code == 200 && !head:
		return checkOK(r, h, body)
	case code == 200 || code == 304:
		return ""
	case code == 431 && len(w.head()) <= maxHead:
		return fmt.Sprintf("431 for a request head of %d bytes, within D46's %d", len(w.head()), maxHead)
	case code == 400 || code == 401 || code == 404 || code == 405 || code == 431:
		return checkError(code, h, body, head)
	case code == 500:
		return s.checkBadDate(w, r, h, body)
	}
	return fmt.Sprintf("status %d: %s", rec.Code, cut(string(body)))
}

// checkOK checks a 200 body: JSON (gzip-compressed when so labelled).
func checkOK(r *http.Request, h http.Header, body []byte) string {
	if ct, _, _ := mime.ParseMediaType(h.Get("Content-Type")); ct != "application/json" {
		return fmt.Sprintf("200 with Content-Type %q", h.Get("Content-Type"))
	}
	if h.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return fmt.Sprintf("200 labelled gzip is not gzip: %v", err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			return fmt.Sprintf("200 labelled gzip does not decompress: %v", err)
		}
	}
	if !json.Valid(body) {
		return "200 with a body that is not JSON: " + cut(string(body))
	}
	return ""
}

// checkError checks an error answer: {"message": "..."} as JSON, and only that (D24).
func checkError(code int, h http.Header, body []byte, head bool) string {
	if head {
		return ""
	}
	if ct, _, _ := mime.ParseMediaType(h.Get("Content-Type")); ct != "application/json" {
		return fmt.Sprintf("%d with Content-Type %q, want application/json", code, h.Get("Content-Type"))
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return fmt.Sprintf("%d with a body that is not a JSON object (%v): %s", code, err, cut(string(body)))
	}
	msg, ok := m["message"].(string)
	if len(m) != 1 || !ok || msg == "" {
		return fmt.Sprintf(`%d with body %s, want {"message": "..."} alone`, code, cut(string(body)))
	}
	if code == 405 && h.Get("Allow") != "GET, HEAD" {
		return fmt.Sprintf("405 with Allow %q, want GET, HEAD", h.Get("Allow"))
	}
	return ""
}

// checkBadDate accepts a 500 only as D8's answer on a search route. A HEAD has no body to
// tell, so the same request is sent again as a GET.
func (s *site) checkBadDate(w wireRequest, r *http.Request, h http.Header, body []byte) string {
	if r.Method == http.MethodHead {
		w.method = http.MethodGet
		again, err := w.parse()
		if err != nil {
			return fmt.Sprintf("HEAD answered 500; as a GET it does not parse: %v", err)
		}
		rec, panicked := serveSafely(s.handler, again)
		if panicked != nil || rec.Code != 500 {
			return fmt.Sprintf("HEAD answered 500; as a GET %d (panic: %v)", rec.Code, panicked)
		}
		r, h, body = again, rec.Header(), rec.Body.Bytes()
	}
	if problem := checkError(500, h, body, false); problem != "" {
		return problem
	}
	var m struct{ Message string }
	_ = json.Unmarshal(body, &m)
	if !d8Messages[m.Message] || !strings.HasSuffix(r.URL.Path, "/classes") {
		return fmt.Sprintf("500 on %s that is not D8's bad date: %s", r.URL.Path, cut(string(body)))
	}
	return ""
}

// checkLogs fails on any log line at ERROR level (a 5xx other than D8's, or a panic) and
// unless every request that reached the handler wrote its request line.
func checkLogs(t *testing.T, logs string, served int) {
	t.Helper()
	lines, errs := 0, 0
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var rec struct{ Level, Msg string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("log line is not JSON (%v): %s", err, cut(line))
			continue
		}
		if rec.Msg == "request" {
			lines++
		}
		if rec.Level == "ERROR" {
			if errs++; errs <= 5 {
				t.Errorf("error logged: %s", cut(line))
			}
		}
	}
	if lines < served {
		t.Errorf("%d request lines logged for %d requests served", lines, served)
	}
}

// TestSearchTextNoNameHolds: a search text with a NUL or invalid UTF-8, which PostgreSQL
// refuses as text, is the empty result (no course name can hold it, D11), not a 503 and an
// error in the log. TestHostileRequests found the 503.
func TestSearchTextNoNameHolds(t *testing.T) {
	logs := &syncBuffer{}
	ds := genDataset(7)
	s := newSite(t, ds, siteOptions{logs: logs})
	routes := []string{"/public/classes", "/public/course/" + strconv.FormatInt(ds.courses[0].id, 10) + "/classes"}
	for _, q := range []string{"search=%00", "search=Go%00", "search=%FF", "search=Caf%E9", "search=%C3",
		"search=%ED%A0%80", "search=%F4%90%80%80", "search=%00&page=3&limit=2"} {
		for _, route := range routes {
			target := base + route + "?" + q
			rec := s.get(target)
			got := fmt.Sprintf("%d %s", rec.Code, strings.TrimSpace(rec.Body.String()))
			if want := "200 " + emptySearch; got != want {
				t.Errorf("GET %s = %s, want %s", target, got, want)
			}
		}
	}
	checkLogs(t, logs.String(), 16)
}
