package e2e

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/apitoken"
	"github.com/trainingco/catalogue/cmd/internal/cmdtest"
)

// unauthenticated is the body of every 401 (D22).
const unauthenticated = "Unauthenticated."

// want401 checks a refused token: 401, WWW-Authenticate: Bearer, the fixed body (D22).
func want401(t *testing.T, r *cmdtest.Response) {
	t.Helper()
	checked(t, r)
	wantError(t, r, http.StatusUnauthorized, unauthenticated)
	if got := r.Header.Get("WWW-Authenticate"); got != "Bearer" {
		t.Errorf("GET %s: WWW-Authenticate = %q, want Bearer", r.Request.URL, got)
	}
}

// testAuth checks the token check (D21, D22) and the rate-limit headers (D23).
func (f *fixture) testAuth(t *testing.T) {
	unknown, err := apitoken.New() // well formed, never issued
	if err != nil {
		t.Fatal(err)
	}
	d, path := f.edge, base+"/public/courses"
	for _, tc := range []struct {
		name   string
		header []string
	}{
		{"no header", nil},
		{"wrong scheme", []string{"Authorization", "Basic " + f.token}},
		{"token without scheme", []string{"Authorization", f.token}},
		{"empty bearer", []string{"Authorization", "Bearer "}},
		{"unknown token", []string{"Authorization", "Bearer " + unknown}},
		{"malformed token", []string{"Authorization", "Bearer not-a-token"}},
		{"token with a suffix", []string{"Authorization", "Bearer " + f.token + "x"}},
	} {
		t.Run(tc.name, func(t *testing.T) { want401(t, d.Get(t, path, "", tc.header...)) })
	}
	// D21: only the header counts; a token in the query string is ignored.
	want401(t, d.Get(t, path+"?api_token="+f.token+"&token="+f.token+"&access_token="+f.token, ""))
	// Search routes are behind the same check.
	want401(t, d.Get(t, base+"/public/classes", ""))
	want401(t, d.Get(t, base+"/public/course/10/classes", ""))
	want401(t, d.Get(t, base+"/public/class/100", ""))

	// The scheme is case-insensitive (D21).
	for _, scheme := range []string{"bearer", "BEARER"} {
		r := checked(t, d.Get(t, path, "", "Authorization", scheme+" "+f.token))
		if r.StatusCode != http.StatusOK {
			t.Errorf("GET %s with scheme %q: %s, want 200", path, scheme, r.Status)
		}
	}

	// D23: every authenticated response carries the limit and what remains; the fixture's
	// edge allows 10000 a minute, and each request takes one.
	r1, r2 := f.get(t, "/public/courses"), f.get(t, "/public/classes")
	for _, r := range []*cmdtest.Response{r1, r2} {
		if got := r.Header.Get("X-RateLimit-Limit"); got != "10000" {
			t.Errorf("GET %s: X-RateLimit-Limit = %q, want 10000", r.Request.URL.Path, got)
		}
	}
	rem1, err1 := strconv.Atoi(r1.Header.Get("X-RateLimit-Remaining"))
	rem2, err2 := strconv.Atoi(r2.Header.Get("X-RateLimit-Remaining"))
	if err1 != nil || err2 != nil || rem2 != rem1-1 || rem1 >= 10000 {
		t.Errorf("X-RateLimit-Remaining of two requests in a row: %q then %q, want n < 10000 then n-1",
			r1.Header.Get("X-RateLimit-Remaining"), r2.Header.Get("X-RateLimit-Remaining"))
	}
}

// testRevoke checks that a revoked token stops working within 30 seconds (D22); the edge
// reloads token hashes every second here (edge.token_refresh).
func (f *fixture) testRevoke(t *testing.T) {
	id, token := f.env.NewToken(t, "revoked")
	path := base + "/public/course/10"
	// A token issued after the edge started is accepted after the next refresh.
	waitStatus(t, f.edge, path, token, http.StatusOK, 30*time.Second)
	f.env.MustBuilder(t, "token", "revoke", id)
	waitStatus(t, f.edge, path, token, http.StatusUnauthorized, 30*time.Second)
	want401(t, f.edge.Get(t, path, token))
	// Other tokens are unaffected.
	if r := f.get(t, "/public/course/10"); r.StatusCode != http.StatusOK {
		t.Errorf("GET %s with another token after the revocation: %s, want 200", path, r.Status)
	}
}

// waitStatus polls path with token until it answers status, and fails the test if it
// does not within the given time.
func waitStatus(t *testing.T, d *cmdtest.Edge, path, token string, status int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		r := d.Get(t, path, token)
		if r.StatusCode == status {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: still %s after %s, want %d\n%s\nedge logs:\n%s", path, r.Status, within, status, r.Data, logTail(d.Logs(), 40))
		}
		time.Sleep(100 * time.Millisecond) // a real process with a real clock: polling is all there is
	}
}

// testRateLimit checks the limit on an edge of its own that allows 5 requests a minute
// (D23). The binaries read the real clock, so this checks the sixth request; the exact
// 61st request at the default limit, and the refill of the rolling window, are tested
// with a fake clock in the edge package (edge/auth_test.go).
func (f *fixture) testRateLimit(t *testing.T) {
	// Issued before the edge starts, so that it is known at once: polling for it would
	// spend the address's allowance of failed authentications.
	other := f.env.Token(t, "other")
	d := f.env.StartEdge(t, map[string]string{"CATALOGUE_EDGE_RATE_LIMIT": "5"})
	d.WaitSnapshot(t, f.snapshot, readyWithin)
	path := base + "/public/course/10"
	for i := 1; i <= 5; i++ {
		r := checked(t, d.Get(t, path, f.token))
		want := strconv.Itoa(5 - i) // after counting this request: the first shows 4
		if r.StatusCode != http.StatusOK || r.Header.Get("X-RateLimit-Limit") != "5" || r.Header.Get("X-RateLimit-Remaining") != want {
			t.Errorf("request %d: %s, X-RateLimit-Limit %q, X-RateLimit-Remaining %q; want 200, 5, %s",
				i, r.Status, r.Header.Get("X-RateLimit-Limit"), r.Header.Get("X-RateLimit-Remaining"), want)
		}
	}
	before := time.Now()
	r := checked(t, d.Get(t, path, f.token))
	want429(t, r, before)
	if got := r.Header.Get("X-RateLimit-Remaining"); got != "0" {
		t.Errorf("429: X-RateLimit-Remaining = %q, want 0", got)
	}

	// The limit is per token: another token still gets its own five.
	if r := checked(t, d.Get(t, path, other)); r.StatusCode != http.StatusOK || r.Header.Get("X-RateLimit-Remaining") != "4" {
		t.Errorf("another token: %s, X-RateLimit-Remaining %q; want 200, 4", r.Status, r.Header.Get("X-RateLimit-Remaining"))
	}

	// Failed authentication is limited per client address the same way: five 401s a
	// minute, then 429.
	for i := 1; i <= 5; i++ {
		want401(t, d.Get(t, path, "", "Authorization", "Bearer wrong"))
	}
	want429(t, checked(t, d.Get(t, path, "", "Authorization", "Bearer wrong")), before)
}

// want429 checks a limited request: 429, Retry-After in whole seconds within the minute,
// X-RateLimit-Reset the Unix time when a request is accepted again, and the body (D23).
func want429(t *testing.T, r *cmdtest.Response, before time.Time) {
	t.Helper()
	wantError(t, r, http.StatusTooManyRequests, "Too Many Attempts.")
	after, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || after < 1 || after > 60 {
		t.Errorf("429: Retry-After = %q, want whole seconds in 1..60", r.Header.Get("Retry-After"))
	}
	reset, err := strconv.ParseInt(r.Header.Get("X-RateLimit-Reset"), 10, 64)
	if now := time.Now(); err != nil || reset < before.Unix() || reset > now.Add(61*time.Second).Unix() {
		t.Errorf("429: X-RateLimit-Reset = %q, want a Unix time within the next minute", r.Header.Get("X-RateLimit-Reset"))
	}
}

// logTail returns the last n lines of logs, for failure messages.
func logTail(logs string, n int) string {
	lines := strings.Split(strings.TrimRight(logs, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
