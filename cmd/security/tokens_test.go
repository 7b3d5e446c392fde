package security

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/builder/apitoken"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/edge/auth/jwttest"
)

// Limits of the token session: a small rate limit, so that both limits are reached in a few
// requests, and a short token refresh for the real poller.
const (
	sessionLimit   = 5
	sessionRefresh = 100 * time.Millisecond
	// revokeSlack is how much longer than one refresh a revocation may take to apply: the
	// poller's query, on a machine busy with other tests under -race.
	revokeSlack = 2 * time.Second
)

// tokenSession is one edge session: a site whose JSON logs (builder's and edge's) go to a
// buffer, with token A (the site's), B (active) and C (to be revoked), and a never-issued
// well-formed token.
type tokenSession struct {
	*site
	logs     *syncBuffer
	b, c     issued
	unknown  string
	addrs    int // remote addresses handed out, so each request can have a fresh one
	statuses map[int]int
	// jwts are students' JWTs (D30): a valid one, then ones that are expired, signed with
	// another secret, or cut.
	jwts []string
}

// sessionJWTSecret is the edge's edge.jwt.hmac_secret in the token session.
var sessionJWTSecret = []byte("the token session's JWT secret, 32+ bytes")

// sessionJWTs are the session's JWTs. The valid one outlasts the session, whose clock moves
// a minute per request.
func sessionJWTs(t *testing.T) []string {
	claims := func(exp time.Duration) jwttest.Claims {
		return jwttest.Claims{"sub": "4711", "exp": today.Add(exp).Unix()}
	}
	valid := jwttest.HS256(t, sessionJWTSecret, claims(365*24*time.Hour))
	return []string{valid, jwttest.HS256(t, sessionJWTSecret, claims(-time.Hour)),
		jwttest.HS256(t, []byte("another secret, as long as the session's"), claims(365*24*time.Hour)),
		valid[:strings.LastIndexByte(valid, '.')], valid + "x"}
}

// TestTokenSession checks guarantee 7 end to end on a catalogue built by builder.Run, the
// subtests sharing one edge in this order: a revocation applies within edge.token_refresh
// through the real poller (D22); a token in the query string is ignored (D21); failed
// authentication is limited per client address (D23); only token hashes are in the
// database or the store; and, over all of it plus a matrix of tokens (valid, revoked,
// unknown, malformed) in every place a client may put one, with the database going down at
// the end, no log line of builder or edge, and no metric, holds a token.
//
// What the packages test already, and this extends: apitoken.TestCreateStoresOnlyTheHash
// (the api_tokens row); edge.TestTokenNeverLogged (the edge's log, Authorization, query
// string and X-Request-ID); edge.TestAuthRejects (query string); edge.TestRevokedToken and
// TestRevokedTokenByPoller (refresh); edge.TestFailedAuthLimitedPerAddress (the failure
// limit with a fake clock); config's test of edge.token_refresh above 20 s; cmd/e2e's
// revocation through the binaries.
func TestTokenSession(t *testing.T) {
	logs := &syncBuffer{}
	s := newSite(t, genDataset(11), siteOptions{logs: logs, issue: []string{"partner B", "partner C"},
		edit: func(c *config.Config) {
			c.Edge.RateLimit, c.Edge.TokenRefresh = sessionLimit, sessionRefresh
			c.Edge.JWT.HMACSecret = string(sessionJWTSecret)
			c.Edge.JWT.MaxLifetime = 2 * 365 * 24 * time.Hour // the valid JWT outlasts the session
		}})
	unknown, err := apitoken.New()
	if err != nil {
		t.Fatal(err)
	}
	ts := &tokenSession{site: s, logs: logs, b: s.issued[0], c: s.issued[1], unknown: unknown, statuses: map[int]int{},
		jwts: sessionJWTs(t)}
	t.Run("token_refresh is at most 20s", testRefreshBound)
	t.Run("revocation within token_refresh", ts.testRevocation)
	t.Run("query string ignored", ts.testQueryString)
	t.Run("failed authentication limited per address", ts.testFailureLimit)
	t.Run("only hashes stored", ts.testOnlyHashes)
	t.Run("never logged", ts.testNeverLogged)
}

// testRefreshBound: configuration cannot make a revocation take longer than 30 s (D22): the
// refresh (at most 20 s), the reload's query (at most 5 s) and the replica's lag.
func testRefreshBound(t *testing.T) {
	for _, tt := range []struct {
		refresh time.Duration
		ok      bool
	}{{config.Default().Edge.TokenRefresh, true}, {20 * time.Second, true}, {20*time.Second + time.Millisecond, false}, {30 * time.Second, false}, {time.Hour, false}} {
		cfg := config.Default()
		cfg.Edge.TokenRefresh = tt.refresh
		err := cfg.Validate()
		if (err == nil) != tt.ok || (err != nil && !strings.Contains(err.Error(), "edge.token_refresh")) {
			t.Errorf("Validate with edge.token_refresh %s = %v, want ok %v", tt.refresh, err, tt.ok)
		}
	}
}

// send serves a GET of target with the headers (name, value pairs) from a fresh address
// after moving the clock past every rate-limit window, and counts its status.
func (ts *tokenSession) send(target string, header ...string) *httptest.ResponseRecorder {
	ts.clock.set(ts.clock.now().Add(61 * time.Second))
	return ts.sendNow(http.MethodGet, target, ts.freshAddr(), "", header...)
}

// sendNow serves a request from addr without moving the clock.
func (ts *tokenSession) sendNow(method, target, addr, body string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, "http://catalogue.test/", strings.NewReader(body))
	r.URL, r.RequestURI = mustParseRequestURI(target), target
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Add(header[i], header[i+1])
	}
	r.RemoteAddr = addr
	rec := ts.serve(r)
	ts.statuses[rec.Code]++
	return rec
}

func mustParseRequestURI(target string) *url.URL {
	u, err := url.ParseRequestURI(target)
	if err != nil {
		panic(fmt.Sprintf("target %q: %v", target, err))
	}
	return u
}

func (ts *tokenSession) freshAddr() string {
	ts.addrs++
	return fmt.Sprintf("198.51.%d.%d:4000", ts.addrs/250, 1+ts.addrs%250)
}

func bearer(token string) []string { return []string{"Authorization", "Bearer " + token} }

// testRevocation revokes C while the edge runs and measures how long C is still let in.
func (ts *tokenSession) testRevocation(t *testing.T) {
	course := base + "/public/courses"
	if got := ts.send(course, bearer(ts.c.token)...).Code; got != 200 {
		t.Fatalf("token C before its revocation: status %d, want 200", got)
	}
	if err := apitoken.Revoke(context.Background(), ts.conn, ts.c.id); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	addr := ts.freshAddr()
	for {
		// 200 or, once C's allowance is spent on the fake clock, 429: still let in.
		if ts.sendNow(http.MethodGet, course, addr, "", bearer(ts.c.token)...).Code == 401 {
			break
		}
		if time.Since(revoked) > sessionRefresh+revokeSlack {
			t.Fatalf("token C still let in %s after its revocation, token_refresh %s", time.Since(revoked), sessionRefresh)
		}
		time.Sleep(5 * time.Millisecond) // the poller runs on real time
	}
	t.Logf("revocation applied after %s (token_refresh %s)", time.Since(revoked).Round(time.Millisecond), sessionRefresh)
	if got := ts.send(course, bearer(ts.c.token)...).Code; got != 401 {
		t.Errorf("token C after its revocation: status %d, want 401", got)
	}
	if got := ts.send(course, bearer(ts.token)...).Code; got != 200 {
		t.Errorf("token A after C's revocation: status %d, want 200", got)
	}
}

// testQueryString: a token anywhere in the query string counts for nothing (D21).
func (ts *tokenSession) testQueryString(t *testing.T) {
	a := url.QueryEscape(ts.token)
	for _, q := range []string{"token=" + a, "api_token=" + a, "access_token=" + a, "bearer=" + a,
		"Authorization=Bearer+" + a, "authorization=" + a, "key=" + a} {
		target := base + "/public/courses?" + q
		rec := ts.send(target)
		got := fmt.Sprintf("%d %s %s", rec.Code, rec.Header().Get("WWW-Authenticate"), strings.TrimSpace(rec.Body.String()))
		if want := `401 Bearer {"message":"Unauthenticated."}`; got != want {
			t.Errorf("GET %s without Authorization = %s, want %s", target, got, want)
		}
	}
	if got := ts.send(base+"/public/courses?token=nonsense&api_token=", bearer(ts.token)...).Code; got != 200 {
		t.Errorf("a valid header with junk tokens in the query: status %d, want 200", got)
	}
}

// testFailureLimit: an address gets 401 for its first rate_limit failures in a minute and
// 429 after, even with a valid token; another address is not affected; the allowance
// comes back after a minute (D23).
func (ts *tokenSession) testFailureLimit(t *testing.T) {
	ts.clock.set(ts.clock.now().Add(61 * time.Second))
	guesser, other := ts.freshAddr(), ts.freshAddr()
	course := base + "/public/courses"
	steps := []struct {
		name, addr string
		header     []string
		want       string
	}{
		{"failure 1", guesser, bearer(ts.unknown), "401"},
		{"failure 2", guesser, bearer("pcat_guess"), "401"},
		{"failure 3", guesser, nil, "401"},
		{"failure 4", guesser, bearer(ts.c.token), "401"}, // revoked
		{"failure 5", guesser, []string{"Authorization", "Basic " + ts.token}, "401"},
		{"failure 6", guesser, bearer(ts.unknown), "429 Retry-After 60"},
		{"valid token from the limited address", guesser, bearer(ts.token), "200"}, // only failures are limited
		{"failure from another address", other, bearer(ts.unknown), "401"},
		{"valid token from another address", other, bearer(ts.token), "200"},
	}
	for _, st := range steps {
		rec := ts.sendNow(http.MethodGet, course, st.addr, "", st.header...)
		got := fmt.Sprint(rec.Code)
		if ra := rec.Header().Get("Retry-After"); ra != "" {
			got += " Retry-After " + ra
		}
		if got != st.want {
			t.Errorf("%s: %s, want %s", st.name, got, st.want)
		}
	}
	ts.clock.set(ts.clock.now().Add(61 * time.Second))
	if got := ts.sendNow(http.MethodGet, course, guesser, "", bearer(ts.unknown)...).Code; got != 401 {
		t.Errorf("failure from the guesser a minute later: status %d, want 401", got)
	}
}

// testOnlyHashes: after issuing and revoking, nothing in any table of the database nor in
// any object of the store holds a token or its random part, and api_tokens holds each
// token's SHA-256.
func (ts *tokenSession) testOnlyHashes(t *testing.T) {
	ctx := context.Background()
	var tables []string
	rows, err := ts.conn.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`)
	if err == nil {
		tables, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil || len(tables) < 6 {
		t.Fatalf("list tables: %v %v", tables, err)
	}
	for _, table := range tables {
		rows, err := ts.conn.Query(ctx, "SELECT t::text FROM "+pgx.Identifier{table}.Sanitize()+" AS t")
		if err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
		texts, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
		ts.noToken(t, "table "+table, strings.Join(texts, "\n"))
	}
	for _, tok := range []issued{{ts.tokenID, ts.token}, ts.b, ts.c} {
		var hash []byte
		if err := ts.conn.QueryRow(ctx, "SELECT token_hash FROM api_tokens WHERE id = $1", tok.id).Scan(&hash); err != nil {
			t.Fatal(err)
		}
		if got, want := hex.EncodeToString(hash), hex.EncodeToString(apitoken.Hash(tok.token)); got != want {
			t.Errorf("api_tokens row %d holds %s, want the token's SHA-256 %s", tok.id, got, want)
		}
	}
	keys, err := ts.store.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		b, err := ts.store.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		ts.noToken(t, "stored object "+k, string(b))
	}
}

// secrets are the strings no log, table or object may hold: each token, its part after the
// prefix, and three 20-character pieces of that part (so that a malformed copy of a token,
// one character changed or cut, is caught too), also as hex (a token stored as bytes).
func (ts *tokenSession) secrets() []string {
	var out []string
	for _, tok := range []string{ts.token, ts.b.token, ts.c.token, ts.unknown} {
		body := strings.TrimPrefix(tok, apitoken.Prefix)
		for _, s := range []string{tok, body, body[:20], body[15:35], body[len(body)-20:]} {
			out = append(out, s, hex.EncodeToString([]byte(s)))
		}
	}
	// A JWT, each of its parts, and the signature's middle.
	for _, jwt := range ts.jwts {
		out = append(out, jwt)
		for _, part := range strings.Split(jwt, ".") {
			out = append(out, part)
			if len(part) > 30 {
				out = append(out, part[10:30])
			}
		}
	}
	return out
}

// noToken fails when text holds any secret.
func (ts *tokenSession) noToken(t *testing.T, where, text string) {
	t.Helper()
	for _, s := range ts.secrets() {
		if i := strings.Index(text, s); i >= 0 {
			t.Errorf("%s holds %q of a token: …%s…", where, s, text[max(0, i-120):min(len(text), i+len(s)+40)])
			return
		}
	}
}
