package edge

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/builder/apitoken"
	"github.com/trainingco/catalogue/config"
)

// TestAuthRejects: every missing, malformed, unknown or misplaced token is 401 with
// WWW-Authenticate: Bearer (D21, D22), on every route of the group.
func TestAuthRejects(t *testing.T) {
	env := newAuthEnv(t, nil)
	tok := env.token
	unknown, err := apitoken.New()
	if err != nil {
		t.Fatal(err)
	}
	// The same characters with the last one changed: the checksum no longer matches.
	last := tok[len(tok)-1]
	flipped := tok[:len(tok)-1] + map[bool]string{true: "B", false: "A"}[last == 'A']
	inQuery := course1 + "?token=" + tok + "&api_token=" + tok + "&access_token=" + tok + "&bearer=" + tok
	tests := []struct {
		name   string
		target string
		auth   []string
	}{
		{"no header", course1, nil},
		{"empty header", course1, []string{""}},
		{"basic scheme", course1, []string{"Basic " + tok}},
		{"token scheme", course1, []string{"Token " + tok}},
		{"bare token", course1, []string{tok}},
		{"bearer without token", course1, []string{"Bearer"}},
		{"bearer and a space", course1, []string{"Bearer "}},
		{"tab after bearer", course1, []string{"Bearer\t" + tok}},
		{"two tokens", course1, []string{"Bearer " + tok + " " + tok}},
		{"two headers", course1, []string{"Bearer " + tok, "Bearer " + tok}},
		{"malformed", course1, []string{"Bearer not-a-token"}},
		{"prefix only", course1, []string{"Bearer pcat_"}},
		{"bad checksum", course1, []string{"Bearer " + flipped}},
		{"unknown well-formed", course1, []string{"Bearer " + unknown}},
		{"token in the query string", inQuery, nil},
		{"token in the query string and a bad header", inQuery, []string{"Bearer " + unknown}},
		{"course list", "/api/v2/public/courses", nil},
		{"search", "/api/v2/public/classes?search=a", nil},
		{"unknown path in the group", "/api/v2/public/nope", nil},
	}
	for _, tt := range tests {
		got := env.send(req{target: tt.target, auth: tt.auth})
		if diff := cmp.Diff(unauth, got); diff != "" {
			t.Errorf("%s: GET %s with Authorization %q mismatch (-want +got):\n%s", tt.name, tt.target, tt.auth, diff)
		}
	}
}

// TestAuthAccepts: the scheme in any case (D21); every authenticated answer, an error one
// included, carries the limit and what remains after it (D23).
func TestAuthAccepts(t *testing.T) {
	env := newAuthEnv(t, nil)
	tok := env.token
	tests := []struct {
		auth string
		want response
	}{
		{"Bearer " + tok, ok("59")},
		{"bearer " + tok, ok("58")},
		{"BEARER " + tok, ok("57")},
		{"bEaReR " + tok, ok("56")},
		{"Bearer  " + tok, ok("55")}, // RFC 7235: one or more spaces
	}
	for _, tt := range tests {
		got := env.send(req{target: course1, auth: []string{tt.auth}})
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("GET %s with Authorization %q mismatch (-want +got):\n%s", course1, tt.auth, diff)
		}
	}
	for i, target := range []string{"/api/v2/public/course/999", "/api/v2/public/nope"} {
		got := env.send(req{target: target, auth: env.bearer()})
		got.Body = "" // the 404 messages are the static handlers' to test
		want := response{Status: 404, Headers: map[string]string{"Content-Type": jsonContentType,
			"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": strconv.Itoa(54 - i)}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("GET %s with a token mismatch (-want +got):\n%s", target, diff)
		}
	}
}

// TestRevokedToken: a revoked token works until the next refresh of the token hashes and
// never after; a token issued after start works from the next refresh. The request path
// itself never reads the database.
func TestRevokedToken(t *testing.T) {
	env := newAuthEnv(t, nil)
	otherID, other := env.issue(t, "issued after start")
	if got := env.send(req{target: course1, auth: []string{"Bearer " + other}}); got.Status != 401 {
		t.Errorf("token issued after start, before a refresh: status %d, want 401", got.Status)
	}
	env.refreshTokens(t)
	if err := apitoken.Revoke(context.Background(), env.conn, env.tokenID); err != nil {
		t.Fatal(err)
	}
	if got := env.send(req{target: course1, auth: env.bearer()}); got.Status != 200 {
		t.Errorf("revoked token before a refresh: status %d, want 200 (the set in memory)", got.Status)
	}
	env.refreshTokens(t)
	if diff := cmp.Diff(unauth, env.send(req{target: course1, auth: env.bearer()})); diff != "" {
		t.Errorf("revoked token after a refresh mismatch (-want +got):\n%s", diff)
	}
	if got := env.send(req{target: course1, auth: []string{"Bearer " + other}}); got.Status != 200 {
		t.Errorf("token %d after the refresh: status %d, want 200", otherID, got.Status)
	}
}

// TestRevokedTokenByPoller: the poller started by Start applies a revocation within
// edge.token_refresh, with no help from the test (D22). The poller runs on real time, so
// this waits for it, with a deadline far above the interval.
func TestRevokedTokenByPoller(t *testing.T) {
	env := newAuthEnv(t, func(c *config.Config) { c.Edge.TokenRefresh = 20 * time.Millisecond })
	if got := env.send(req{target: course1, auth: env.bearer()}); got.Status != 200 {
		t.Fatalf("active token: status %d, want 200", got.Status)
	}
	if err := apitoken.Revoke(context.Background(), env.conn, env.tokenID); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for env.send(req{target: course1, auth: env.bearer()}).Status != 401 {
		if time.Now().After(deadline) {
			t.Fatal("revoked token still accepted 10 s after revocation with token_refresh 20ms")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRateLimitPerToken: 60 accepted requests in any rolling minute; the 61st gets 429 with
// Retry-After and X-RateLimit-Reset; rejected requests do not consume; the window slides
// (D23).
func TestRateLimitPerToken(t *testing.T) {
	env := newAuthEnv(t, nil)
	// One request every half second from +0 to +29.5 s: all accepted.
	for i := range 60 {
		env.clock.at(time.Duration(i) * 500 * time.Millisecond)
		got := env.send(req{target: course1, auth: env.bearer()})
		if diff := cmp.Diff(ok(strconv.Itoa(59-i)), got); diff != "" {
			t.Fatalf("request %d mismatch (-want +got):\n%s", i+1, diff)
		}
	}
	tooMany := func(retryAfter string, reset int64) response {
		return response{Status: 429, Body: bodyTooMany, Headers: map[string]string{
			"Content-Type": jsonContentType, "X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "0",
			"Retry-After": retryAfter, "X-RateLimit-Reset": strconv.FormatInt(reset, 10)}}
	}
	steps := []struct {
		at   time.Duration
		want response
	}{
		// The first request (at +0) leaves the window at +60.
		{30 * time.Second, tooMany("30", authT0Unix+60)},
		{45500 * time.Millisecond, tooMany("15", authT0Unix+60)}, // 14.5 s, rounded up
		{59 * time.Second, tooMany("1", authT0Unix+60)},
		// A fixed window would now accept 60 more; the sliding one has room for one.
		{60 * time.Second, ok("0")},
		{60 * time.Second, tooMany("1", authT0Unix+61)}, // +0.5 s leaves at +60.5
		{60500 * time.Millisecond, ok("0")},
		// All of +1 … +29.5 have left by +89.5; +60 and +60.5 are still in.
		{89500 * time.Millisecond, ok("57")},
	}
	for i, s := range steps {
		env.clock.at(s.at)
		got := env.send(req{target: course1, auth: env.bearer()})
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("step %d at +%s mismatch (-want +got):\n%s", i, s.at, diff)
		}
	}
}

// TestRateLimitKeyedByToken: each token has its own allowance, whatever the address.
func TestRateLimitKeyedByToken(t *testing.T) {
	env := newAuthEnv(t, func(c *config.Config) { c.Edge.RateLimit = 2 })
	_, other := env.issue(t, "second application")
	env.refreshTokens(t)
	for range 2 {
		env.send(req{target: course1, auth: env.bearer()})
	}
	if got := env.send(req{target: course1, auth: env.bearer(), remote: "198.51.100.7:4000"}); got.Status != 429 {
		t.Errorf("third request of the first token from another address: status %d, want 429", got.Status)
	}
	got := env.send(req{target: course1, auth: []string{"Bearer " + other}})
	want := response{Status: 200, Body: authCourse, Headers: map[string]string{
		"Content-Type": jsonContentType, "X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("first request of the second token mismatch (-want +got):\n%s", diff)
	}
}

// TestFailedAuthLimitedPerAddress: an address gets 401 for its first 60 failures in a
// rolling minute and 429 after (D23). Only failures are limited: a valid token from a
// limited address is served (a client behind the same NAT or an untrusted balancer as a
// guesser is not locked out; a guess at 60 a minute finds no 128-bit token); other
// addresses are not affected, and X-Forwarded-For does not make a fresh address.
func TestFailedAuthLimitedPerAddress(t *testing.T) {
	env := newAuthEnv(t, nil)
	bad := []string{"Bearer pcat_guess"}
	for i := range 60 {
		env.clock.at(time.Duration(i) * time.Second)
		if diff := cmp.Diff(unauth, env.send(req{target: course1, auth: bad})); diff != "" {
			t.Fatalf("failure %d mismatch (-want +got):\n%s", i+1, diff)
		}
	}
	limited := func(retryAfter string, reset int64) response {
		return response{Status: 429, Body: bodyTooMany, Headers: map[string]string{"Content-Type": jsonContentType,
			"Retry-After": retryAfter, "X-RateLimit-Reset": strconv.FormatInt(reset, 10)}}
	}
	spoofed := map[string]string{"X-Forwarded-For": "203.0.113.9", "X-Real-IP": "203.0.113.9"}
	steps := []struct {
		name string
		at   time.Duration
		r    req
		want response
	}{
		{"61st failure", 59 * time.Second, req{target: course1, auth: bad}, limited("1", authT0Unix+60)},
		{"no header", 59 * time.Second, req{target: course1}, limited("1", authT0Unix+60)},
		{"forwarded-for claims another address", 59 * time.Second, req{target: course1, auth: bad, header: spoofed}, limited("1", authT0Unix+60)},
		{"valid token from the limited address", 59 * time.Second, req{target: course1, auth: env.bearer()}, ok("59")},
		{"another address", 59 * time.Second, req{target: course1, auth: bad, remote: "198.51.100.7:4000"}, unauth},
		{"valid token from another address", 59 * time.Second, req{target: course1, auth: env.bearer(), remote: "[2001:db8::1]:443"}, ok("58")},
		// The failure at +0 has left the window: one more failure is allowed, then 429.
		{"after the first failure left", 60 * time.Second, req{target: course1, auth: bad}, unauth},
		{"window full again", 60 * time.Second, req{target: course1, auth: bad}, limited("1", authT0Unix+61)},
		{"valid token once a failure left", 61 * time.Second, req{target: course1, auth: env.bearer()}, ok("57")},
	}
	for _, s := range steps {
		env.clock.at(s.at)
		if diff := cmp.Diff(s.want, env.send(s.r)); diff != "" {
			t.Errorf("%s at +%s mismatch (-want +got):\n%s", s.name, s.at, diff)
		}
	}
}

// TestFailedAuthKeyedByIPv6Prefix: IPv6 failures count against the client's /64, the
// smallest block a network hands a client (RFC 6177), so a guesser cannot take a fresh
// address for every guess; IPv4 stays per address, IPv4-mapped IPv6 counts as IPv4.
func TestFailedAuthKeyedByIPv6Prefix(t *testing.T) {
	env := newAuthEnv(t, nil)
	bad := []string{"Bearer pcat_guess"}
	for i := range 60 {
		r := req{target: course1, auth: bad, remote: fmt.Sprintf("[2001:db8:1:2::%x]:443", i+1)}
		if diff := cmp.Diff(unauth, env.send(r)); diff != "" {
			t.Fatalf("failure %d mismatch (-want +got):\n%s", i+1, diff)
		}
		r = req{target: course1, auth: bad, remote: "[::ffff:192.0.2.1]:443"}
		if diff := cmp.Diff(unauth, env.send(r)); diff != "" {
			t.Fatalf("IPv4-mapped failure %d mismatch (-want +got):\n%s", i+1, diff)
		}
	}
	limited := response{Status: 429, Body: bodyTooMany, Headers: map[string]string{"Content-Type": jsonContentType,
		"Retry-After": "60", "X-RateLimit-Reset": strconv.FormatInt(authT0Unix+60, 10)}}
	for _, tt := range []struct {
		remote string
		want   response
	}{
		{"[2001:db8:1:2:ffff:ffff:ffff:ffff]:443", limited}, // the same /64
		{"[2001:db8:1:3::1]:443", unauth},                   // the next /64
		{"192.0.2.1:443", limited},                          // had 60 failures as ::ffff:192.0.2.1 …
		{"192.0.2.2:443", unauth},                           // … this one none
	} {
		if diff := cmp.Diff(tt.want, env.send(req{target: course1, auth: bad, remote: tt.remote})); diff != "" {
			t.Errorf("failure from %s mismatch (-want +got):\n%s", tt.remote, diff)
		}
	}
}

// TestTokenSetSurvivesDatabaseDown: when the replica cannot be read, the last token set
// stays in force and the failure is logged.
func TestTokenSetSurvivesDatabaseDown(t *testing.T) {
	env := newAuthEnv(t, nil)
	dropDatabase(t, env.dbURL)
	if err := env.s.auth.Refresh(context.Background()); err == nil {
		t.Fatal("refresh with the database dropped succeeded, want an error")
	}
	_ = env.s.auth.Refresh(context.Background())
	if diff := cmp.Diff(ok("59"), env.send(req{target: course1, auth: env.bearer()})); diff != "" {
		t.Errorf("token loaded before the database went away mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(unauth, env.send(req{target: course1, auth: []string{"Bearer pcat_guess"}})); diff != "" {
		t.Errorf("bad token with the database down mismatch (-want +got):\n%s", diff)
	}
	if logs := env.logs.String(); !strings.Contains(logs, "API token refresh failed") {
		t.Errorf("log does not report the failed refresh:\n%s", logs)
	}
}

// TestTokensNeverLoaded: an edge started while the replica is down knows no token, so the
// answer is 503, not a 401 that would tell clients their token is bad.
func TestTokensNeverLoaded(t *testing.T) {
	env := newAuthEnv(t, nil)
	dropDatabase(t, env.dbURL)
	// A second edge on the same store and the now unreachable replica.
	s, err := New(Options{Config: env.s.opts.Config, Store: env.s.opts.Store, Replica: env.replica,
		Templates: env.s.opts.Templates, Logger: env.s.log, Now: env.clock.now})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.Start(ctx)
	env.s = s
	got := env.send(req{target: course1, auth: env.bearer()})
	want := response{Status: 503, Body: `{"message":"The token list is not loaded yet. Try again shortly."}` + "\n",
		Headers: map[string]string{"Content-Type": jsonContentType, "Retry-After": "3600"}} // token_refresh 1h
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GET %s before tokens are loaded mismatch (-want +got):\n%s", course1, diff)
	}
}

// dropDatabase makes dbURL unreachable for good: its connections are ended and it is gone.
func dropDatabase(t *testing.T, dbURL string) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	u.Path = "/postgres"
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Fatalf("connect as admin: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		t.Fatalf("drop database: %v", err)
	}
}

// TestFailedAuthLimitedPerForwardedAddress: behind load balancers named in
// edge.trusted_proxies, the client address comes from X-Forwarded-For, so one client's bad
// tokens block that client only, not every client of the balancer; a forwarded address
// from a peer that is not a trusted proxy is ignored.
func TestFailedAuthLimitedPerForwardedAddress(t *testing.T) {
	env := newAuthEnv(t, func(c *config.Config) { c.Edge.TrustedProxies = []string{"192.0.2.0/24"} })
	bad := []string{"Bearer pcat_guess"}
	balancer := "192.0.2.10:5000"
	from := func(addr string) map[string]string { return map[string]string{"X-Forwarded-For": addr} }
	for i := range 60 {
		env.clock.at(time.Duration(i) * time.Second)
		r := req{target: course1, auth: bad, remote: balancer, header: from("203.0.113.1")}
		if diff := cmp.Diff(unauth, env.send(r)); diff != "" {
			t.Fatalf("failure %d mismatch (-want +got):\n%s", i+1, diff)
		}
	}
	limited := response{Status: 429, Body: bodyTooMany, Headers: map[string]string{"Content-Type": jsonContentType,
		"Retry-After": "1", "X-RateLimit-Reset": strconv.FormatInt(authT0Unix+60, 10)}}
	steps := []struct {
		name string
		r    req
		want response
	}{
		{"the guessing client", req{target: course1, auth: bad, remote: balancer, header: from("203.0.113.1")}, limited},
		{"another client of the balancer", req{target: course1, auth: env.bearer(), remote: balancer, header: from("203.0.113.2")}, ok("59")},
		{"another client's bad token", req{target: course1, auth: bad, remote: balancer, header: from("203.0.113.2")}, unauth},
		// 198.51.100.7 is no trusted proxy: its X-Forwarded-For is ignored, it is the client.
		{"untrusted peer claiming another address", req{target: course1, auth: bad, remote: "198.51.100.7:4000", header: from("203.0.113.1")}, unauth},
	}
	env.clock.at(59 * time.Second)
	for _, s := range steps {
		if diff := cmp.Diff(s.want, env.send(s.r)); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", s.name, diff)
		}
	}
}
