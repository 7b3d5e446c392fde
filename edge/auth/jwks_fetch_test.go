package auth_test

import (
	"context"
	"crypto/elliptic"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trainingco/catalogue/edge/auth"
	"github.com/trainingco/catalogue/edge/auth/jwttest"
)

// slowJWKS is a JWKS endpoint that takes delay to answer, and a verifier of it whose
// cooldown outlasts the test: one fetch triggered by an unknown kid is all it may make.
func slowJWKS(t *testing.T, delay time.Duration, keys ...jwttest.Key) (*jwttest.JWKS, *auth.JWTVerifier) {
	t.Helper()
	srv := jwttest.NewJWKS(t, keys...)
	v := newVerifier(t, auth.JWTOptions{JWKSURL: srv.URL,
		JWKS: auth.JWKSOptions{Refresh: time.Hour, Cooldown: time.Hour, Timeout: 5 * time.Second}})
	srv.SetDelay(delay)
	return srv, v
}

// TestJWKSFetchOutlivesItsRequest: a client that sends a JWT naming a new key and
// disconnects at once does not cut the fetch it triggered, nor spend the fetch allowance
// on nothing (issue 23, defect 2): the fetch runs on its own context and time-out, and the
// next JWT naming the new key is verified with what it fetched, without another fetch.
func TestJWKSFetchOutlivesItsRequest(t *testing.T) {
	old, next := jwttest.RSA(t, "2027-01", 2048), jwttest.EC(t, "2027-02", elliptic.P256(), "ES256")
	srv, v := slowJWKS(t, 300*time.Millisecond, old)
	srv.Publish(t, old, next) // a rotation the verifier has not fetched
	before := srv.Fetches()
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(20*time.Millisecond, cancel) // the client goes while the fetch runs
	if _, err := v.Verify(ctx, next.Sign(t, valid())); err == nil {
		t.Fatal("Verify of a request cancelled before the key set arrived succeeded")
	}
	if got, err := v.Verify(t.Context(), next.Sign(t, valid())); err != nil || got != "1042" {
		t.Errorf("Verify with the new key after the first request went = %q, %v; want 1042", got, err)
	}
	if n := srv.Fetches() - before; n != 1 {
		t.Errorf("%d fetches of the JWKS, want 1", n)
	}
}

// TestJWKSFetchSingleFlight: JWTs naming a new key that arrive together share one fetch,
// and every one of them is verified with its result.
func TestJWKSFetchSingleFlight(t *testing.T) {
	old, next := jwttest.RSA(t, "2027-01", 2048), jwttest.Ed25519(t, "2027-02")
	srv, v := slowJWKS(t, 200*time.Millisecond, old)
	srv.Publish(t, old, next)
	before := srv.Fetches()
	token := next.Sign(t, valid())
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Go(func() { _, errs[i] = v.Verify(t.Context(), token) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("request %d: %v", i, err)
		}
	}
	if n := srv.Fetches() - before; n != 1 {
		t.Errorf("20 requests naming one new key made %d fetches, want 1", n)
	}
}

// TestLimitedAddressTriggersNoJWKSFetch: an address that has used up its allowance of
// failed authentications cannot make the edge fetch the JWKS (its JWT naming an unknown
// key is refused 429 without a fetch), while its JWTs signed with a key held are still
// served (D44); another address's JWT naming the new key fetches it.
func TestLimitedAddressTriggersNoJWKSFetch(t *testing.T) {
	old, next := jwttest.RSA(t, "2027-01", 2048), jwttest.EC(t, "2027-02", elliptic.P256(), "ES256")
	srv, v := slowJWKS(t, 0, old)
	g := auth.New(auth.Options{RateLimit: 2, JWT: v, Now: func() time.Time { return now },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	bearer := func(token string) http.Header { return http.Header{"Authorization": {"Bearer " + token}} }
	forged := jwttest.HS256(t, []byte("a guessed secret, thirty-two bytes long"), valid())
	const attacker, other = "198.51.100.7", "203.0.113.5"
	for range 2 {
		if _, err := g.Admit(t.Context(), bearer(forged), attacker); err == nil {
			t.Fatal("a forged JWT was admitted")
		}
	}
	srv.Publish(t, old, next)
	before := srv.Fetches()
	if _, err := g.Admit(t.Context(), bearer(next.Sign(t, with(valid(), "sub", "3001"))), attacker); err == nil {
		t.Error("a JWT naming a key not fetched yet, from a limited address: admitted")
	}
	if n := srv.Fetches() - before; n != 0 {
		t.Errorf("a limited address made %d fetches of the JWKS, want 0", n)
	}
	if a, err := g.Admit(t.Context(), bearer(old.Sign(t, valid())), attacker); err != nil || a.Student != "1042" {
		t.Errorf("a valid JWT from the limited address = %+v, %v; want student 1042 admitted", a, err)
	}
	if a, err := g.Admit(t.Context(), bearer(next.Sign(t, with(valid(), "sub", "2001"))), other); err != nil || a.Student != "2001" {
		t.Errorf("the new key from another address = %+v, %v; want student 2001 admitted", a, err)
	}
	if n := srv.Fetches() - before; n != 1 {
		t.Errorf("%d fetches of the JWKS, want 1 (for the other address)", n)
	}
}

// rawJWKS is the JSON of a JWK Set of keys, with a member "padding" of n bytes beside them.
func rawJWKS(t *testing.T, n int, keys ...jwttest.Key) []byte {
	t.Helper()
	set := map[string]any{"padding": strings.Repeat("x", n)}
	var jwks []map[string]string
	for _, k := range keys {
		jwks = append(jwks, k.JWK())
	}
	set["keys"] = jwks
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestJWKSBounded: a JWKS response over 1 MiB, or holding more than 100 keys, is refused
// whole (issue 23, defect 6: a 200 MB body took the edge from 27 MB to 700 MB), and the
// keys fetched before stay in force; one of 100 keys, just under 1 MiB, is accepted.
func TestJWKSBounded(t *testing.T) {
	old := jwttest.RSA(t, "2027-01", 2048)
	many := []jwttest.Key{old}
	for i := range 100 {
		many = append(many, jwttest.Ed25519(t, fmt.Sprintf("ed-%03d", i)))
	}
	newest := many[len(many)-1]
	for _, tt := range []struct {
		name   string
		body   func() []byte
		accept bool
	}{
		{"over 1 MiB", func() []byte { return rawJWKS(t, 1<<20, old, newest) }, false},
		{"101 keys", func() []byte { return rawJWKS(t, 0, many...) }, false},
		{"just under 1 MiB", func() []byte {
			b := rawJWKS(t, 0, old, newest) // with an empty padding
			return rawJWKS(t, 1<<20-len(b), old, newest)
		}, true},
		{"100 keys", func() []byte { return rawJWKS(t, 0, many[1:]...) }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := jwttest.NewJWKS(t, old)
			v := newVerifier(t, auth.JWTOptions{JWKSURL: srv.URL, JWKS: fastJWKS})
			srv.PublishRaw(tt.body())
			time.Sleep(2 * fastJWKS.Cooldown)
			_, err := v.Verify(t.Context(), newest.Sign(t, valid())) // an unknown kid: a fetch
			if accepted := err == nil; accepted != tt.accept {
				t.Errorf("Verify with a key of the new set: %v, want accepted %v", err, tt.accept)
			}
			if !tt.accept {
				if _, err := v.Verify(t.Context(), old.Sign(t, valid())); err != nil {
					t.Errorf("Verify with the key fetched before: %v", err)
				}
			}
		})
	}
}
