package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// Kinds of failure, as the report counts them.
const (
	failConn       = "connection errors"
	fail5xx        = "5xx answers"
	failStatus     = "unexpected statuses"
	failMalformed  = "malformed answers" // wrong headers or body for the status
	failMixed      = "mixed snapshots"   // a body or tag that is not the named snapshot's
	failUnverified = "unverifiable answers"
)

// failures collects every failed check from every worker: a count per kind and the first
// few messages, for the report.
type failures struct {
	mu     sync.Mutex
	counts map[string]int
	first  []string
}

// maxMessages bounds the messages kept; the counts go on.
const maxMessages = 20

func (f *failures) add(kind, format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts[kind]++
	if len(f.first) < maxMessages {
		f.first = append(f.first, kind+": "+fmt.Sprintf(format, args...))
	}
}

// answer is one response with its request.
type answer struct {
	t          target
	res        *http.Response
	body       []byte
	send, recv int64
	id         string // X-Request-Id, to find the request in the edge's log
	limit      int    // the limit of the key the request was counted against
	edge       string // the edge that answered, behind a load balancer
}

func (a answer) String() string {
	return fmt.Sprintf("%s %s (request %s) -> %d", a.t.method, a.t.path, a.id, a.res.StatusCode)
}

// check checks the answer to a good token's request.
func (w *worker) check(a answer) {
	if !w.checkLimitHeaders(a) {
		return
	}
	st := a.res.StatusCode
	switch {
	case st >= 500:
		w.fails.add(fail5xx, "%s: %s", a, a.body)
	case st == http.StatusTooManyRequests:
	case a.t.route != "" && st == http.StatusOK:
		w.checkDocument(a)
	case a.t.kind == kindConditional && st == http.StatusNotModified:
		w.checkNotModified(a)
	case a.t.kind == kindSearch && st == http.StatusOK:
		w.checkSearch(a)
	case a.t.kind == kindNotFound && st == http.StatusNotFound:
		checkMessage(w, a, "")
	default:
		w.fails.add(failStatus, "%s", a)
	}
}

// checkLimitHeaders checks the limit's headers on a good token's answer (D23): the limit and
// what remains on every answer, and when to retry on a 429. A 429 without them came from the
// limit on failed authentication, which a good token must never meet.
func (w *worker) checkLimitHeaders(a answer) bool {
	h := a.res.Header
	if h.Get("X-RateLimit-Limit") != strconv.Itoa(a.limit) {
		w.fails.add(failMalformed, "%s: X-RateLimit-Limit %q, want %d", a, h.Get("X-RateLimit-Limit"), a.limit)
		return false
	}
	if _, err := strconv.Atoi(h.Get("X-RateLimit-Remaining")); err != nil {
		w.fails.add(failMalformed, "%s: X-RateLimit-Remaining %q", a, h.Get("X-RateLimit-Remaining"))
		return false
	}
	if a.res.StatusCode == http.StatusTooManyRequests {
		return w.checkRetry(a) && checkMessage(w, a, "Too Many Attempts.")
	}
	return true
}

// checkRetry checks a 429's Retry-After: whole seconds, at least 1, at most the window.
func (w *worker) checkRetry(a answer) bool {
	s, err := strconv.Atoi(a.res.Header.Get("Retry-After"))
	if err != nil || s < 1 || s > int(w.window.Seconds()) || a.res.Header.Get("X-RateLimit-Reset") == "" {
		w.fails.add(failMalformed, "%s: Retry-After %q, X-RateLimit-Reset %q", a,
			a.res.Header.Get("Retry-After"), a.res.Header.Get("X-RateLimit-Reset"))
		return false
	}
	return true
}

// checkMessage checks an error body: JSON {"message": want} ("" accepts any message).
func checkMessage(w *worker, a answer, want string) bool {
	var body struct {
		Message *string `json:"message"`
	}
	err := json.Unmarshal(a.body, &body)
	if a.t.method == http.MethodHead && len(a.body) == 0 {
		return true
	}
	if err != nil || body.Message == nil || (want != "" && *body.Message != want) {
		w.fails.add(failMalformed, "%s: body %.200q, want a JSON message %q", a, a.body, want)
		return false
	}
	return true
}

// servedEntry returns the manifest entry of the answer's route in the snapshot its
// X-Catalogue-Snapshot names, and records the sighting.
func (w *worker) servedEntry(a answer) (snapshot.Entry, bool) {
	id := a.res.Header.Get("X-Catalogue-Snapshot")
	if id == "" {
		w.fails.add(failMalformed, "%s: no X-Catalogue-Snapshot", a)
		return snapshot.Entry{}, false
	}
	w.seen = append(w.seen, sighting{send: a.send, recv: a.recv, id: id, edge: a.edge})
	m, err := w.ms.get(id)
	if err != nil {
		w.fails.add(failUnverified, "%s: %v", a, err)
		return snapshot.Entry{}, false
	}
	e, ok := m.Documents[a.t.route]
	if !ok {
		w.fails.add(failMixed, "%s: snapshot %s has no document %s", a, id, a.t.route)
	}
	return e, ok
}

// checkDocument checks a 200 for a document: the body (after decompression) and its tag
// must be those of the document in the snapshot the answer names.
func (w *worker) checkDocument(a answer) {
	e, ok := w.servedEntry(a)
	if !ok {
		return
	}
	wantTag, enc := `"`+e.Hash+`"`, ""
	if a.t.gzip {
		wantTag, enc = `"`+e.Hash+`-gz"`, "gzip"
	}
	if got := a.res.Header.Get("ETag"); got != wantTag {
		w.fails.add(failMixed, "%s: ETag %s, but snapshot %s has %s", a, got, a.res.Header.Get("X-Catalogue-Snapshot"), wantTag)
		return
	}
	if got := a.res.Header.Get("Content-Encoding"); got != enc {
		w.fails.add(failMalformed, "%s: Content-Encoding %q, want %q", a, got, enc)
		return
	}
	if a.t.method == http.MethodHead {
		if len(a.body) != 0 {
			w.fails.add(failMalformed, "%s: HEAD answered with %d bytes of body", a, len(a.body))
		}
		return
	}
	body, err := decode(a.body, a.t.gzip)
	if err != nil {
		w.fails.add(failMalformed, "%s: %v", a, err)
		return
	}
	if got := snapshot.Hash(body); got != e.Hash {
		w.fails.add(failMixed, "%s: body hashes to %s, but snapshot %s has %s", a, got, a.res.Header.Get("X-Catalogue-Snapshot"), e.Hash)
		return
	}
	w.remember(a.t.route, a.t.gzip, etag{tag: wantTag, hash: e.Hash})
}

// decode returns the document of a body, decompressed when it was sent gzip-compressed.
func decode(body []byte, gz bool) ([]byte, error) {
	if !gz {
		return body, nil
	}
	r, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("decompress: %w", err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("decompress: %w", err)
	}
	return b, nil
}

// checkNotModified checks a 304: the tag it confirms must be the one sent, and the document
// in the snapshot the answer names must be the one that tag was given for.
func (w *worker) checkNotModified(a answer) {
	e, ok := w.servedEntry(a)
	if !ok {
		return
	}
	if got := a.res.Header.Get("ETag"); got != a.t.inm.tag {
		w.fails.add(failMixed, "%s: ETag %s, want the tag sent, %s", a, got, a.t.inm.tag)
		return
	}
	if e.Hash != a.t.inm.hash {
		w.fails.add(failMixed, "%s: confirms %s, but snapshot %s has %s", a, a.t.inm.tag, a.res.Header.Get("X-Catalogue-Snapshot"), e.Hash)
	}
	if len(a.body) != 0 {
		w.fails.add(failMalformed, "%s: 304 with %d bytes of body", a, len(a.body))
	}
}

// checkSearch checks the shape of a search page (spec 4.3, D10, D29).
func (w *worker) checkSearch(a answer) {
	var page struct {
		Data []struct {
			ID       string `json:"id"`
			CourseID string `json:"course_id"`
		} `json:"data"`
		Total    *int `json:"total"`
		LastPage *int `json:"last_page"`
	}
	err := json.Unmarshal(a.body, &page)
	switch {
	case a.t.method == http.MethodHead:
	case err != nil || page.Data == nil || page.Total == nil || page.LastPage == nil:
		w.fails.add(failMalformed, "%s: body %.200q is no search page (%v)", a, a.body, err)
	case len(page.Data) > a.t.limit || *page.Total < len(page.Data) || *page.LastPage < 1:
		w.fails.add(failMalformed, "%s: %d results, total %d, last_page %d, limit %d", a, len(page.Data), *page.Total, *page.LastPage, a.t.limit)
	}
	for _, c := range page.Data {
		if a.t.course != "" && c.CourseID != a.t.course {
			w.fails.add(failMalformed, "%s: class %s of course %s in the search of course %s", a, c.ID, c.CourseID, a.t.course)
			return
		}
	}
}

// checkBadToken checks the answer to a request with a bad token: 401 with the Bearer
// challenge (D22), or 429 once the address used up its allowance of failures (D23).
func (w *worker) checkBadToken(a answer) {
	switch a.res.StatusCode {
	case http.StatusUnauthorized:
		if a.res.Header.Get("WWW-Authenticate") != "Bearer" {
			w.fails.add(failMalformed, "%s: WWW-Authenticate %q, want Bearer", a, a.res.Header.Get("WWW-Authenticate"))
			return
		}
		checkMessage(w, a, "Unauthenticated.")
	case http.StatusTooManyRequests:
		if w.checkRetry(a) {
			checkMessage(w, a, "Too Many Attempts.")
		}
	default:
		kind := failStatus
		if a.res.StatusCode >= 500 {
			kind = fail5xx
		}
		w.fails.add(kind, "%s with %s", a, a.t.auth.name)
	}
}
