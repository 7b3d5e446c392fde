package security

import (
	"context"
	"crypto/elliptic"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/edge/auth/jwttest"
)

// TestJWKSCancelCannotKeepRotatedKeysOut: the identity provider rotates its keys (slowly:
// its JWKS takes 300 ms to answer); an anonymous client sends a JWT naming a key id nobody
// publishes, which makes the edge fetch the JWKS, and closes its connection 20 ms in. Before
// issue 23 (defect 2) the fetch ran on that request's context and died with it while the
// 30 s allowance for such fetches was spent: repeated every 30 s, the new key was never
// fetched until the 10-minute refresh, and every student signed in with it got 401. Now the
// fetch runs on its own and a student signed in with the new key, from another address,
// just after, is served, with one fetch in all.
func TestJWKSCancelCannotKeepRotatedKeysOut(t *testing.T) {
	old, next := jwttest.RSA(t, "2027-01", 2048), jwttest.EC(t, "2027-02", elliptic.P256(), "ES256")
	provider := jwttest.NewJWKS(t, old)
	s := newSite(t, genDataset(9), siteOptions{edit: func(c *config.Config) { c.Edge.JWT.JWKSURL = provider.URL }})
	claims := func(sub string) jwttest.Claims {
		return jwttest.Claims{"sub": sub, "exp": s.clock.now().Add(time.Hour).Unix(), "iat": s.clock.now().Unix()}
	}
	provider.Publish(t, old, next) // rotated after the edge's fetch at start
	provider.SetDelay(300 * time.Millisecond)
	before := provider.Fetches()

	attacker := jwttest.Key{KID: "nobody-publishes-this", Alg: "RS256", Private: old.Private}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel) // the client disconnects mid-fetch
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, base+"/public/courses", nil)
	r.Header.Set("Authorization", "Bearer "+attacker.Sign(t, claims("1")))
	r.RemoteAddr = "198.51.100.66:40000"
	if got := s.serve(r).Code; got == http.StatusOK {
		t.Fatalf("the attacker's JWT was served")
	}

	rec := s.serveFrom("203.0.113.20:50000", base+"/public/courses", "Bearer "+next.Sign(t, claims("2")))
	if rec.Code != http.StatusOK {
		t.Errorf("a student signed in with the rotated key, after the attack: %d %s, want 200", rec.Code, rec.Body)
	}
	if n := provider.Fetches() - before; n != 1 {
		t.Errorf("%d fetches of the JWKS, want 1 (the attacker's, shared)", n)
	}
}
