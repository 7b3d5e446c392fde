package security

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/trainingco/catalogue/config"
)

// TestAnonymousFloodCannotLockOutTokens: one address (a client behind a shared NAT, or every
// client behind a load balancer the edge is not told to trust) floods the edge with
// anonymous requests: no token, unknown and malformed tokens, and paths outside /public,
// among them a path of 64 KB. The flood itself is bounded (its requests past the address's
// allowance get 429), while a valid token from the same address, sent between the flood's
// requests, is served every time (D23: only failures are limited per address), up to its
// own limit.
func TestAnonymousFloodCannotLockOutTokens(t *testing.T) {
	const limit = 60
	logs := &syncBuffer{}
	s := newSite(t, genDataset(5), siteOptions{logs: logs, edit: func(c *config.Config) { c.Edge.RateLimit = limit }})
	const addr = "203.0.113.9:4711"
	long := "/" + strings.Repeat("x", 64<<10)
	flood := []struct{ target, auth string }{
		{base + "/public/courses", ""},
		{base + "/public/class/1", "Bearer pcat_not_a_token"},
		{base + "/public/popular", "Bearer " + strings.Repeat("A", 300)},
		{base + "/public/classes?search=a", "Basic " + s.token},
		{"/wp-login.php", ""},
		{base + "/no/such/route", ""},
		{long, ""},
	}
	statuses := map[int]int{}
	served := 0
	for i := range 20 * limit {
		f := flood[i%len(flood)]
		rec := s.serveFrom(addr, f.target, f.auth)
		statuses[rec.Code]++
		if rec.Code >= 500 || rec.Code == http.StatusOK {
			t.Fatalf("anonymous request %d (%.40s): status %d", i, f.target, rec.Code)
		}
		if i%25 == 0 && served < limit {
			if rec := s.serveFrom(addr, base+"/public/courses", "Bearer "+s.token); rec.Code != http.StatusOK {
				t.Fatalf("valid token after %d anonymous requests from its address: status %d, %s", i+1, rec.Code, rec.Body)
			}
			served++
		}
	}
	if statuses[http.StatusTooManyRequests] < 20*limit-2*limit {
		t.Errorf("flood of %d anonymous requests: statuses %v; want all but the first %d or so limited with 429", 20*limit, statuses, limit)
	}
	// Its own limit still holds: the token is served up to its allowance, then refused.
	for range limit - served {
		if rec := s.serveFrom(addr, base+"/public/courses", "Bearer "+s.token); rec.Code != http.StatusOK {
			t.Fatalf("valid token within its own limit after the flood: status %d", rec.Code)
		}
	}
	if rec := s.serveFrom(addr, base+"/public/courses", "Bearer "+s.token); rec.Code != http.StatusTooManyRequests {
		t.Errorf("valid token past its own limit: status %d, want 429", rec.Code)
	}
	// The 64 KB path reached the log only cut short.
	for line := range strings.Lines(logs.String()) {
		if len(line) > 4<<10 {
			t.Errorf("a log line of %d bytes: %.200s…", len(line), line)
		}
	}
	t.Logf("statuses of the flood: %v; valid token served %d times", statuses, served)
}

// serveFrom sends GET target from addr with the Authorization header auth (none if empty).
func (s *site) serveFrom(addr, target, auth string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, "http://catalogue.test/", nil)
	r.URL.Path, r.RequestURI = target, target
	if i := strings.IndexByte(target, '?'); i >= 0 {
		r.URL.Path, r.URL.RawQuery = target[:i], target[i+1:]
	}
	r.RemoteAddr = addr
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	return s.serve(r)
}
