// Package jwttest makes JWTs and serves JWKS for tests of the edge's JWT verification: keys
// of each kind the edge accepts (and some it must refuse), signed tokens, and an httptest
// JWKS endpoint whose key set a test can rotate or break. The JWKS documents are written
// here from RFC 7517/7518 directly, not by the library the edge verifies with, so that a
// mistake shared by both sides cannot hide.
package jwttest

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Claims are a JWT's claims, as JSON encodes them (numbers become JSON numbers).
type Claims map[string]any

// Key is a signing key with the key id and algorithm it is published under.
type Key struct {
	KID string
	Alg string // the JWS alg the token is signed with: RS256, ES256, EdDSA, HS256...
	// Private is *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey or []byte (oct).
	Private any
	// PublishAlg is the "alg" member of the published JWK; empty leaves it out.
	PublishAlg string
	// HeaderAlg, when set, replaces Alg in the token's header (the signature is still
	// made with Alg): a token that lies about its algorithm.
	HeaderAlg string
	// Use is the "use" member of the published JWK; empty: "sig".
	Use string
	// Header holds more parameters of the token's header ("crit" and the like).
	Header map[string]any
}

// Sign returns a compact JWT of claims signed with k, kid in its header unless k.KID is empty.
func (k Key) Sign(t testing.TB, claims Claims) string {
	t.Helper()
	return sign(t, jwt.GetSigningMethod(k.Alg), k.KID, k.HeaderAlg, k.Private, claims, k.Header)
}

// HS256 returns a JWT of claims signed with secret, without a key id.
func HS256(t testing.TB, secret []byte, claims Claims) string {
	t.Helper()
	return sign(t, jwt.SigningMethodHS256, "", "", secret, claims, nil)
}

// Unsigned returns a JWT with "alg": "none" and an empty signature.
func Unsigned(t testing.TB, claims Claims) string {
	t.Helper()
	return sign(t, jwt.SigningMethodNone, "", "", jwt.UnsafeAllowNoneSignatureType, claims, nil)
}

func sign(t testing.TB, m jwt.SigningMethod, kid, headerAlg string, key any, claims Claims, header map[string]any) string {
	t.Helper()
	if m == nil {
		t.Fatal("jwttest: unknown signing method")
	}
	tok := jwt.NewWithClaims(m, jwt.MapClaims(claims))
	for k, v := range header {
		tok.Header[k] = v
	}
	if kid != "" {
		tok.Header["kid"] = kid
	}
	if headerAlg != "" {
		tok.Header["alg"] = headerAlg
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatalf("jwttest: sign a %s token: %v", m.Alg(), err)
	}
	return s
}

// RSA returns an RS256 key of the given size.
func RSA(t testing.TB, kid string, bits int) Key {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatalf("jwttest: generate an RSA key: %v", err)
	}
	return Key{KID: kid, Alg: "RS256", Private: k, PublishAlg: "RS256"}
}

// EC returns an ECDSA key on curve c, signing with alg (ES256 for P-256, ES384 for P-384).
func EC(t testing.TB, kid string, c elliptic.Curve, alg string) Key {
	t.Helper()
	k, err := ecdsa.GenerateKey(c, rand.Reader)
	if err != nil {
		t.Fatalf("jwttest: generate an ECDSA key: %v", err)
	}
	return Key{KID: kid, Alg: alg, Private: k, PublishAlg: alg}
}

// Ed25519 returns an EdDSA key.
func Ed25519(t testing.TB, kid string) Key {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatalf("jwttest: generate an Ed25519 key: %v", err)
	}
	return Key{KID: kid, Alg: "EdDSA", Private: k, PublishAlg: "EdDSA"}
}

// JWK returns the public JWK of k (for an oct key, the secret itself) as a JSON object.
func (k Key) JWK() map[string]string {
	j := map[string]string{"kid": k.KID, "use": "sig"}
	if k.Use != "" {
		j["use"] = k.Use
	}
	if k.PublishAlg != "" {
		j["alg"] = k.PublishAlg
	}
	switch p := k.Private.(type) {
	case *rsa.PrivateKey:
		j["kty"], j["n"], j["e"] = "RSA", b64(p.N.Bytes()), b64(big.NewInt(int64(p.E)).Bytes())
	case *ecdsa.PrivateKey:
		size := (p.Curve.Params().BitSize + 7) / 8
		j["kty"], j["crv"] = "EC", p.Curve.Params().Name
		j["x"], j["y"] = b64(p.X.FillBytes(make([]byte, size))), b64(p.Y.FillBytes(make([]byte, size)))
	case ed25519.PrivateKey:
		j["kty"], j["crv"], j["x"] = "OKP", "Ed25519", b64(p.Public().(ed25519.PublicKey))
	case []byte:
		j["kty"], j["k"] = "oct", b64(p)
	}
	return j
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// JWKS is an httptest server answering GET with a JWK Set it holds, which a test may
// replace (a rotation) or break (the endpoint fails) at any time.
type JWKS struct {
	URL     string
	fetches atomic.Int64

	mu     sync.Mutex
	body   []byte
	status int           // 0: 200 with body
	delay  time.Duration // how long each answer takes (SetDelay)
}

// NewJWKS starts a JWKS endpoint publishing keys; it stops when the test ends.
func NewJWKS(t testing.TB, keys ...Key) *JWKS {
	t.Helper()
	j := &JWKS{}
	j.Publish(t, keys...)
	srv := httptest.NewServer(http.HandlerFunc(j.serve))
	t.Cleanup(srv.Close)
	j.URL = srv.URL + "/.well-known/jwks.json"
	return j
}

func (j *JWKS) serve(w http.ResponseWriter, _ *http.Request) {
	j.fetches.Add(1)
	j.mu.Lock()
	body, status, delay := j.body, j.status, j.delay
	j.mu.Unlock()
	time.Sleep(delay)
	if status != 0 {
		http.Error(w, "unavailable", status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// Publish replaces the published set with keys and makes the endpoint answer again.
func (j *JWKS) Publish(t testing.TB, keys ...Key) {
	t.Helper()
	set := struct {
		Keys []map[string]string `json:"keys"`
	}{Keys: []map[string]string{}}
	for _, k := range keys {
		set.Keys = append(set.Keys, k.JWK())
	}
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatalf("jwttest: encode a JWKS: %v", err)
	}
	j.PublishRaw(b)
}

// PublishRaw makes the endpoint answer 200 with body, whatever it holds.
func (j *JWKS) PublishRaw(body []byte) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.body, j.status = body, 0
}

// Fail makes the endpoint answer status until the next Publish.
func (j *JWKS) Fail(status int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.status = status
}

// SetDelay makes every later answer take d: a slow identity provider.
func (j *JWKS) SetDelay(d time.Duration) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.delay = d
}

// Fetches is the number of requests the endpoint has answered.
func (j *JWKS) Fetches() int64 { return j.fetches.Load() }
