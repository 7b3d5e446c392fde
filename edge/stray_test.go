package edge

import (
	"maps"
	"net/http"
	"strconv"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/config"
)

// TestStrayRequestsLimitedPerAddress: requests that reach no endpoint need no token, so
// they count against their address's allowance of failures like failed authentications
// (D23): an unknown path outside /public gets 404, a refused method 405, until the address
// has used up its 60 in the rolling minute, then 429. The probes and the OpenAPI document
// are not counted, and a valid token is still served.
func TestStrayRequestsLimitedPerAddress(t *testing.T) {
	env := newAuthEnv(t, nil)
	notFound := response{Status: 404, Body: `{"message":"Not Found."}` + "\n", Headers: map[string]string{"Content-Type": jsonContentType}}
	notAllowed := response{Status: 405, Body: `{"message":"Method Not Allowed."}` + "\n", Headers: map[string]string{"Content-Type": jsonContentType}}
	for i := range 60 {
		r, want := req{target: "/wp-login.php?x=" + strconv.Itoa(i)}, notFound
		switch i % 3 {
		case 1:
			r, want = req{target: "/api/v2/" + strings.Repeat("x", 1000)}, notFound
		case 2:
			r, want = req{method: http.MethodPost, target: "/api/v2/public/courses"}, notAllowed
		}
		if diff := gocmp.Diff(want, env.send(r)); diff != "" {
			t.Fatalf("stray request %d mismatch (-want +got):\n%s", i+1, diff)
		}
		for _, probe := range []string{"/healthz", "/readyz", "/api/v2/openapi.json", "/api/v2/docs", "/api/v2/docs/swagger-ui.css"} {
			if got := env.send(req{target: probe}); got.Status != http.StatusOK {
				t.Fatalf("GET %s after %d stray requests: status %d, want 200", probe, i+1, got.Status)
			}
		}
	}
	limited := response{Status: 429, Body: bodyTooMany, Headers: map[string]string{"Content-Type": jsonContentType,
		"Retry-After": "60", "X-RateLimit-Reset": strconv.FormatInt(authT0Unix+60, 10)}}
	for _, tt := range []struct {
		name string
		r    req
		want response
	}{
		{"unknown path", req{target: "/wp-login.php"}, limited},
		{"unknown file of the docs page", req{target: "/api/v2/docs/nope.js"}, limited},
		{"refused method", req{method: http.MethodDelete, target: "/"}, limited},
		{"failed authentication", req{target: course1}, limited},
		{"valid token", req{target: course1, auth: env.bearer()}, ok("59")},
		{"another address", req{target: "/wp-login.php", remote: "198.51.100.7:4000"}, notFound},
	} {
		if diff := gocmp.Diff(tt.want, env.send(tt.r)); diff != "" {
			t.Errorf("%s after 60 stray requests mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestAuthenticatedStraysSpareTheAddress checks D44: a refused method or an unknown path
// outside /public that carries a valid API token or JWT never counts against its address,
// so a client with a good token cannot get everyone behind its address refused. It counts
// against its token or student instead, like any request of theirs: answered while within
// that limit, 429 with the token's headers once it is used up.
func TestAuthenticatedStraysSpareTheAddress(t *testing.T) {
	env := newJWTEnv(t, func(c *config.Config) { c.Edge.RateLimit = 4 })
	notFound := response{Status: 404, Body: `{"message":"Not Found."}` + "\n", Headers: map[string]string{"Content-Type": jsonContentType}}
	notAllowed := response{Status: 405, Body: `{"message":"Method Not Allowed."}` + "\n", Headers: map[string]string{"Content-Type": jsonContentType}}
	student := bearerOf(studentJWT(t, env, "7"))
	// Each answer to a valid credential says where its limit stands (D23).
	left := func(r response, remaining string) response {
		h := maps.Clone(r.Headers)
		h["X-RateLimit-Limit"], h["X-RateLimit-Remaining"] = "4", remaining
		return response{Status: r.Status, Body: r.Body, Headers: h}
	}
	for i, tt := range []struct {
		r    req
		want response
	}{
		{req{method: http.MethodPost, target: "/api/v2/public/courses", auth: env.bearer()}, left(notAllowed, "3")},
		{req{method: http.MethodDelete, target: "/", auth: env.bearer()}, left(notAllowed, "2")},
		{req{target: "/wp-login.php", auth: env.bearer()}, left(notFound, "1")},
		{req{method: http.MethodPut, target: course1, auth: student}, left(notAllowed, "3")},
		{req{target: "/api/v2/nope", auth: student}, left(notFound, "2")},
		{req{target: "/api/v2/docs/nope", auth: student}, left(notFound, "1")},
	} {
		if diff := gocmp.Diff(tt.want, env.send(tt.r)); diff != "" {
			t.Fatalf("authenticated stray request %d mismatch (-want +got):\n%s", i+1, diff)
		}
	}
	// Five authenticated strays, over the address's allowance of four: it still has it whole.
	for i := range 4 {
		if got := env.send(req{target: "/wp-login.php"}); got.Status != 404 {
			t.Fatalf("anonymous stray request %d after the authenticated ones: status %d, want 404", i+1, got.Status)
		}
	}
	if got := env.send(req{target: "/wp-login.php"}); got.Status != 429 {
		t.Errorf("fifth anonymous stray request: status %d, want 429", got.Status)
	}
	// The token has used three of its four: one more stray is answered, the next refused as
	// the token's, and the address's refusal does not touch it.
	if diff := gocmp.Diff(left(notAllowed, "0"), env.send(req{method: http.MethodPatch, target: "/", auth: env.bearer()})); diff != "" {
		t.Errorf("the token's fourth stray request mismatch (-want +got):\n%s", diff)
	}
	tokenLimited := response{Status: 429, Body: bodyTooMany, Headers: map[string]string{"Content-Type": jsonContentType,
		"Retry-After": "60", "X-RateLimit-Reset": strconv.FormatInt(authT0Unix+60, 10), "X-RateLimit-Limit": "4", "X-RateLimit-Remaining": "0"}}
	if diff := gocmp.Diff(tokenLimited, env.send(req{method: http.MethodPatch, target: "/", auth: env.bearer()})); diff != "" {
		t.Errorf("the token's fifth stray request mismatch (-want +got):\n%s", diff)
	}
}
