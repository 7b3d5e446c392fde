package security

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// placement puts a token value somewhere in a request: its target and header fields.
type placement struct {
	name   string
	place  func(v string) (target string, header []string)
	method string // "" is GET
}

// placements are the places a client may put a token by design or by mistake.
func placements() []placement {
	courses := base + "/public/courses"
	hdr := func(name, format string) placement {
		return placement{name: name, place: func(v string) (string, []string) {
			return courses, []string{name, strings.ReplaceAll(format, "TOKEN", v)}
		}}
	}
	query := func(route, key string) placement {
		return placement{name: "query " + key, place: func(v string) (string, []string) {
			return base + route + "?" + key + "=" + url.QueryEscape(v), nil
		}}
	}
	path := func(prefix string) placement {
		return placement{name: "path " + prefix, place: func(v string) (string, []string) {
			return prefix + url.PathEscape(v), nil
		}}
	}
	return []placement{
		hdr("Authorization", "Bearer TOKEN"), hdr("Authorization", "Basic TOKEN"), hdr("Authorization", "TOKEN"),
		hdr("Authorization", "Bearer TOKEN TOKEN"), hdr("Proxy-Authorization", "Bearer TOKEN"),
		hdr("X-Api-Key", "TOKEN"), hdr("X-Auth-Token", "TOKEN"), hdr("Cookie", "token=TOKEN"),
		hdr("X-Request-ID", "TOKEN"), hdr("Referer", "https://partner.example/?token=TOKEN"),
		hdr("User-Agent", "partner-app/1.0 TOKEN"), hdr("X-Forwarded-For", "TOKEN"),
		hdr("Origin", "https://TOKEN.example"),
		query("/public/courses", "token"), query("/public/courses", "api_token"),
		query("/public/classes", "search"), query("/public/classes", "start"),
		path(base + "/public/course/"), path(base + "/public/class/"), path(base + "/public/"), path("/"),
		{name: "POST body", method: http.MethodPost, place: func(v string) (string, []string) {
			return courses, []string{"Content-Type", "application/x-www-form-urlencoded"}
		}},
	}
}

// testNeverLogged sends every token and malformed copy of one in every placement, once
// without a valid Authorization header and once with token A's, then a burst over A's limit,
// then takes the database away and searches for a token; and checks that neither the log
// (builder's and edge's, this subtest's and the earlier ones') nor /metrics holds a token.
func (ts *tokenSession) testNeverLogged(t *testing.T) {
	a := ts.token
	last := a[len(a)-1]
	flipped := a[:len(a)-1] + map[bool]string{true: "B", false: "A"}[last == 'A']
	values := append([]string{a, ts.b.token, ts.c.token, ts.unknown, flipped, a[:len(a)-1], a + "x", " " + a + "\t",
		a[:27] + " " + a[27:]}, ts.jwts...)
	sent := 0
	for _, p := range placements() {
		for _, v := range values {
			target, header := p.place(v)
			method, body := p.method, ""
			if method == "" {
				method = http.MethodGet
			} else {
				body = "token=" + url.QueryEscape(v)
			}
			for _, auth := range [][]string{nil, bearer(a), bearer(ts.jwts[0])} {
				ts.clock.set(ts.clock.now().Add(61 * time.Second))
				ts.sendNow(method, target, ts.freshAddr(), body, append(append([]string{}, header...), auth...)...)
				sent++
			}
		}
	}
	// A burst over A's limit from one address: 429s.
	addr := ts.freshAddr()
	for range sessionLimit + 2 {
		ts.sendNow(http.MethodGet, base+"/public/classes?search="+url.QueryEscape(a), addr, "", bearer(a)...)
		sent++
	}
	// A student's class read: its query of the replica, with the JWT.
	if got := ts.send(base+"/public/class/"+ts.visibleClass(t), bearer(ts.jwts[0])...).Code; got != 200 {
		t.Errorf("a student's class read: status %d, want 200", got)
	}
	sent++
	ts.databaseDown(t)
	sent += 2
	for _, want := range []int{200, 401, 404, 405, 429, 500, 503} {
		if ts.statuses[want] == 0 {
			t.Errorf("no request got %d (%v): the session no longer reaches every outcome that logs", want, ts.statuses)
		}
	}
	ts.noToken(t, "/metrics", ts.metrics())
	logs := ts.logs.String()
	if n := strings.Count(logs, `"msg":"request"`); n < sent {
		t.Errorf("log holds %d request lines for at least %d requests of this subtest", n, sent)
	}
	ts.noToken(t, "the log", logs)
	t.Logf("%d requests in this subtest; statuses over the session %v; %d log lines searched for %d secrets",
		sent, ts.statuses, strings.Count(logs, "\n"), len(ts.secrets()))
}

// visibleClass is the id of a class the edge serves.
func (ts *tokenSession) visibleClass(t *testing.T) string {
	for id := range ts.ds.visibleClasses {
		return strconv.FormatInt(id, 10)
	}
	t.Fatal("the dataset has no visible class")
	return ""
}

// databaseDown drops the site's database, searches for token A with A and reads a class
// with a student's JWT (503s, errors the edge logs with their cause), and waits for the token poller to log its failure.
func (ts *tokenSession) databaseDown(t *testing.T) {
	ctx := context.Background()
	u, err := url.Parse(ts.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	u.Path = "/postgres"
	admin, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Fatalf("connect as admin: %v", err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "DROP DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		t.Fatalf("drop database: %v", err)
	}
	target := base + "/public/classes?search=" + url.QueryEscape(ts.token)
	if got := ts.send(target, bearer(ts.token)...).Code; got != 503 {
		t.Errorf("search with the database down: status %d, want 503", got)
	}
	if got := ts.send(base+"/public/class/"+ts.visibleClass(t), bearer(ts.jwts[0])...).Code; got != 503 {
		t.Errorf("a student's class read with the database down: status %d, want 503", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(ts.logs.String(), "API token refresh failed") {
		if time.Now().After(deadline) {
			t.Fatalf("the token poller logged no failure 5 s after the database went away")
		}
		time.Sleep(10 * time.Millisecond) // the poller runs on real time
	}
}
