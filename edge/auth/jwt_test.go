package auth_test

import (
	"context"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/trainingco/catalogue/edge/auth"
	"github.com/trainingco/catalogue/edge/auth/jwttest"
)

// now is the verifier's clock in these tests; tokens are timed against it.
var now = time.Date(2027, 3, 15, 12, 0, 0, 0, time.UTC)

var secret = []byte("a test secret of at least thirty-two bytes")

// at is now moved by d, as a NumericDate claim value.
func at(d time.Duration) int64 { return now.Add(d).Unix() }

// valid are claims every option of hmacVerifier accepts; with() changes them.
func valid() jwttest.Claims {
	return jwttest.Claims{"sub": "1042", "exp": at(time.Hour), "iat": at(-time.Minute),
		"iss": "https://portal.example", "aud": "catalogue"}
}

func with(c jwttest.Claims, kv ...any) jwttest.Claims {
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(c, kv[i].(string))
			continue
		}
		c[kv[i].(string)] = kv[i+1]
	}
	return c
}

func newVerifier(t *testing.T, o auth.JWTOptions) *auth.JWTVerifier {
	t.Helper()
	o.Now = func() time.Time { return now }
	if o.Leeway == 0 {
		o.Leeway = 30 * time.Second
	}
	v, err := auth.NewJWTVerifier(t.Context(), o)
	if err != nil {
		t.Fatalf("NewJWTVerifier: %v", err)
	}
	return v
}

func hmacVerifier(t *testing.T) *auth.JWTVerifier {
	return newVerifier(t, auth.JWTOptions{HMACSecret: secret, Issuer: "https://portal.example", Audience: "catalogue"})
}

// TestVerifyAccepts: a valid HS256 JWT names its student by edge.jwt.student_claim (D31).
func TestVerifyAccepts(t *testing.T) {
	v := hmacVerifier(t)
	tests := []struct {
		name   string
		claims jwttest.Claims
		want   string
	}{
		{"sub as a string", valid(), "1042"},
		{"sub as a number", with(valid(), "sub", 1042), "1042"},
		{"sub as a large number, not rounded", with(valid(), "sub", int64(9007199254740993)), "9007199254740993"},
		{"sub not numeric", with(valid(), "sub", "stu-7f3a"), "stu-7f3a"},
		{"aud a list holding the audience", with(valid(), "aud", []string{"other", "catalogue"}), "1042"},
		{"expired within the leeway", with(valid(), "exp", at(-29*time.Second)), "1042"},
		{"nbf within the leeway", with(valid(), "nbf", at(29*time.Second)), "1042"},
		{"iat within the leeway", with(valid(), "iat", at(29*time.Second)), "1042"},
		{"no iat", with(valid(), "iat", nil), "1042"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := v.Verify(t.Context(), jwttest.HS256(t, secret, tt.claims))
			if err != nil || got != tt.want {
				t.Errorf("Verify(%v) = %q, %v; want %q", tt.claims, got, err, tt.want)
			}
		})
	}
}

// TestVerifyStudentClaim: the student claim, a string or a number (D31, D49).
func TestVerifyStudentClaim(t *testing.T) {
	v := newVerifier(t, auth.JWTOptions{HMACSecret: secret, StudentClaim: "student_id"})
	got, err := v.Verify(t.Context(), jwttest.HS256(t, secret, with(valid(), "student_id", 77)))
	if err != nil || got != "77" {
		t.Errorf("Verify with student_id 77 = %q, %v; want 77", got, err)
	}
	_, err = v.Verify(t.Context(), jwttest.HS256(t, secret, valid())) // sub only
	if !errors.Is(err, auth.ErrNoStudent) {
		t.Errorf("Verify with sub but no student_id: %v, want ErrNoStudent", err)
	}
}

// TestVerifyRejects holds every refusal of D33 for HS256 (signing and key cases of the
// JWKS are in TestJWKSRejects); each must be refused for its own reason.
func TestVerifyRejects(t *testing.T) {
	v := hmacVerifier(t)
	good := jwttest.HS256(t, secret, valid())
	parts := strings.Split(good, ".")
	rsaKey := jwttest.RSA(t, "r", 2048)
	tests := []struct {
		name  string
		token string
		want  error
	}{
		{"empty", "", jwt.ErrTokenMalformed},
		{"two parts", parts[0] + "." + parts[1], jwt.ErrTokenMalformed},
		{"not base64", "eyJ!.eyJ.sig", jwt.ErrTokenMalformed},
		{"header not JSON", b64("hello") + "." + parts[1] + "." + parts[2], jwt.ErrTokenMalformed},
		{"claims not JSON", parts[0] + "." + b64("[1,2") + "." + parts[2], jwt.ErrTokenMalformed},
		{"alg none", jwttest.Unsigned(t, valid()), jwt.ErrTokenSignatureInvalid},
		{"alg none with a signature", strings.Join([]string{b64(`{"alg":"none","typ":"JWT"}`), parts[1], parts[2]}, "."), jwt.ErrTokenSignatureInvalid},
		{"HS384", jwttest.Key{Alg: "HS384", Private: secret}.Sign(t, valid()), jwt.ErrTokenSignatureInvalid},
		{"RS256 without edge.jwt.jwks_url", rsaKey.Sign(t, valid()), jwt.ErrTokenSignatureInvalid},
		{"another secret", jwttest.HS256(t, []byte("another secret of thirty-two bytes or more"), valid()), jwt.ErrTokenSignatureInvalid},
		{"claims changed after signing", parts[0] + "." + b64(`{"sub":"1","exp":9999999999,"iss":"https://portal.example","aud":"catalogue"}`) + "." + parts[2], jwt.ErrTokenSignatureInvalid},
		{"signature reversed", parts[0] + "." + parts[1] + "." + reverse(parts[2]), jwt.ErrTokenSignatureInvalid},
		{"signature cut", good[:len(good)-2], jwt.ErrTokenMalformed},
		{"expired past the leeway", jwttest.HS256(t, secret, with(valid(), "exp", at(-31*time.Second))), jwt.ErrTokenExpired},
		{"no exp", jwttest.HS256(t, secret, with(valid(), "exp", nil)), jwt.ErrTokenRequiredClaimMissing},
		{"exp not a number", jwttest.HS256(t, secret, with(valid(), "exp", "tomorrow")), jwt.ErrInvalidType},
		{"nbf past the leeway", jwttest.HS256(t, secret, with(valid(), "nbf", at(31*time.Second))), jwt.ErrTokenNotValidYet},
		{"iat past the leeway", jwttest.HS256(t, secret, with(valid(), "iat", at(31*time.Second))), jwt.ErrTokenUsedBeforeIssued},
		{"another issuer", jwttest.HS256(t, secret, with(valid(), "iss", "https://evil.example")), jwt.ErrTokenInvalidIssuer},
		{"no issuer", jwttest.HS256(t, secret, with(valid(), "iss", nil)), jwt.ErrTokenRequiredClaimMissing},
		{"another audience", jwttest.HS256(t, secret, with(valid(), "aud", "billing")), jwt.ErrTokenInvalidAudience},
		{"no audience", jwttest.HS256(t, secret, with(valid(), "aud", nil)), jwt.ErrTokenRequiredClaimMissing},
		{"no student claim", jwttest.HS256(t, secret, with(valid(), "sub", nil)), auth.ErrNoStudent},
		{"student claim empty", jwttest.HS256(t, secret, with(valid(), "sub", "")), auth.ErrNoStudent},
		{"student claim a fraction", jwttest.HS256(t, secret, with(valid(), "sub", 10.5)), auth.ErrNoStudent},
		{"student claim past int64", jwttest.HS256(t, secret, with(valid(), "sub", jsonNumber("99999999999999999999"))), auth.ErrNoStudent},
		{"student claim a boolean", jwttest.HS256(t, secret, with(valid(), "sub", true)), auth.ErrNoStudent},
		{"student claim an object", jwttest.HS256(t, secret, with(valid(), "sub", map[string]int{"id": 1})), auth.ErrNoStudent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := v.Verify(t.Context(), tt.token)
			if !errors.Is(err, auth.ErrInvalidJWT) || !errors.Is(err, tt.want) {
				t.Errorf("Verify(%s) = %q, %v; want ErrInvalidJWT wrapping %v", tt.name, got, err, tt.want)
			}
		})
	}
}

// jsonNumber is a number claim written exactly as given.
type jsonNumber string

func (n jsonNumber) MarshalJSON() ([]byte, error) { return []byte(n), nil }

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// TestJWKSAccepts verifies RS256, ES256 and EdDSA tokens with keys from a JWKS endpoint,
// with and without a kid, beside HS256 with the configured secret.
func TestJWKSAccepts(t *testing.T) {
	rs, es, ed := jwttest.RSA(t, "rsa-1", 2048), jwttest.EC(t, "ec-1", elliptic.P256(), "ES256"), jwttest.Ed25519(t, "ed-1")
	noAlg := jwttest.EC(t, "ec-2", elliptic.P256(), "ES256")
	noAlg.PublishAlg = ""
	srv := jwttest.NewJWKS(t, rs, es, ed, noAlg)
	v := newVerifier(t, auth.JWTOptions{HMACSecret: secret, JWKSURL: srv.URL})
	noKID := rs
	noKID.KID = ""
	for name, token := range map[string]string{
		"RS256": rs.Sign(t, valid()), "ES256": es.Sign(t, valid()), "EdDSA": ed.Sign(t, valid()),
		"RS256 without kid": noKID.Sign(t, valid()), "ES256, JWK without alg": noAlg.Sign(t, valid()),
		"HS256 beside the JWKS": jwttest.HS256(t, secret, valid()),
	} {
		if got, err := v.Verify(t.Context(), token); err != nil || got != "1042" {
			t.Errorf("Verify(%s) = %q, %v; want 1042", name, got, err)
		}
	}
}

// TestJWKSRejects holds the key and algorithm cases of D30: the algorithm must match the
// key that verifies it.
func TestJWKSRejects(t *testing.T) {
	rs := jwttest.RSA(t, "rsa-1", 2048)
	es := jwttest.EC(t, "ec-1", elliptic.P256(), "ES256")
	p384 := jwttest.EC(t, "ec-384", elliptic.P384(), "ES384")
	// An ES256 header over a P-384 key: the jwt package checks only the signature's length,
	// which this key's 96-byte ES384 signature fails, so the refusal must come earlier,
	// from the key not fitting ES256.
	p384.HeaderAlg, p384.PublishAlg = "ES256", ""
	small := jwttest.RSA(t, "rsa-small", 1024)
	oct := jwttest.Key{KID: "oct-1", Alg: "HS256", Private: []byte("an oct key published in the JWKS!!")}
	srv := jwttest.NewJWKS(t, rs, es, p384, small, oct)
	v := newVerifier(t, auth.JWTOptions{JWKSURL: srv.URL})
	withSecret := newVerifier(t, auth.JWTOptions{HMACSecret: secret, JWKSURL: srv.URL})

	pub := rs.Private.(*rsa.PrivateKey).Public()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	rsHeaderECKey := jwttest.Key{KID: "ec-1", Alg: "RS256", Private: rs.Private}
	esHeaderRSAKey := jwttest.Key{KID: "rsa-1", Alg: "ES256", Private: es.Private}
	tests := []struct {
		name  string
		v     *auth.JWTVerifier
		token string
		want  error
	}{
		{"HS256 keyed with the RSA public key (PEM), JWKS only", v, jwttest.Key{KID: "rsa-1", Alg: "HS256", Private: pemKey}.Sign(t, valid()), jwt.ErrTokenSignatureInvalid},
		{"HS256 keyed with the RSA public key (PEM), with a secret", withSecret, jwttest.Key{KID: "rsa-1", Alg: "HS256", Private: pemKey}.Sign(t, valid()), jwt.ErrTokenSignatureInvalid},
		{"HS256 keyed with the RSA public key (DER)", withSecret, jwttest.Key{KID: "rsa-1", Alg: "HS256", Private: der}.Sign(t, valid()), jwt.ErrTokenSignatureInvalid},
		{"HS256 keyed with an oct key of the JWKS", withSecret, oct.Sign(t, valid()), jwt.ErrTokenSignatureInvalid},
		{"RS256 header, kid of an EC key", v, rsHeaderECKey.Sign(t, valid()), jwt.ErrTokenUnverifiable},
		{"ES256 header, kid of an RSA key", v, esHeaderRSAKey.Sign(t, valid()), jwt.ErrTokenUnverifiable},
		{"ES256 header over a P-384 key", v, p384.Sign(t, valid()), jwt.ErrTokenUnverifiable},
		{"RSA key under 2048 bits", v, small.Sign(t, valid()), jwt.ErrTokenUnverifiable},
		{"kid of no key", v, jwttest.Key{KID: "nobody", Alg: "RS256", Private: rs.Private}.Sign(t, valid()), jwt.ErrTokenUnverifiable},
		{"signed by another RSA key under a known kid", v, jwttest.RSA(t, "rsa-1", 2048).Sign(t, valid()), jwt.ErrTokenSignatureInvalid},
		{"PS256", v, jwttest.Key{KID: "rsa-1", Alg: "PS256", Private: rs.Private}.Sign(t, valid()), jwt.ErrTokenSignatureInvalid},
		{"expired RS256", v, rs.Sign(t, with(valid(), "exp", at(-time.Hour))), jwt.ErrTokenExpired},
		{"RS256 without student", v, rs.Sign(t, with(valid(), "sub", nil)), auth.ErrNoStudent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.v.Verify(t.Context(), tt.token)
			if !errors.Is(err, auth.ErrInvalidJWT) || !errors.Is(err, tt.want) {
				t.Errorf("Verify(%s) = %q, %v; want ErrInvalidJWT wrapping %v", tt.name, got, err, tt.want)
			}
		})
	}
}

// fastJWKS shortens the JWKS cache's waits so that a test of a rotation takes milliseconds.
var fastJWKS = auth.JWKSOptions{Refresh: time.Hour, Cooldown: time.Millisecond, Timeout: 2 * time.Second}

// TestJWKSRotation: a token signed with a key published after the set was fetched is
// accepted at once (the unknown kid triggers a fetch), and a key withdrawn from the set
// stops verifying once the set is fetched again.
func TestJWKSRotation(t *testing.T) {
	old, next := jwttest.RSA(t, "2027-01", 2048), jwttest.EC(t, "2027-02", elliptic.P256(), "ES256")
	srv := jwttest.NewJWKS(t, old)
	v := newVerifier(t, auth.JWTOptions{JWKSURL: srv.URL, JWKS: fastJWKS})
	if _, err := v.Verify(t.Context(), old.Sign(t, valid())); err != nil {
		t.Fatalf("Verify with the first key: %v", err)
	}
	srv.Publish(t, old, next)
	if _, err := v.Verify(t.Context(), next.Sign(t, valid())); err != nil {
		t.Fatalf("Verify with a key published after the first fetch: %v", err)
	}
	srv.Publish(t, next)
	time.Sleep(2 * fastJWKS.Cooldown)
	// An unknown kid triggers the fetch that learns old is withdrawn.
	if _, err := v.Verify(t.Context(), jwttest.Ed25519(t, "unknown").Sign(t, valid())); err == nil {
		t.Fatal("Verify with an unpublished key succeeded")
	}
	if _, err := v.Verify(t.Context(), old.Sign(t, valid())); !errors.Is(err, jwt.ErrTokenUnverifiable) {
		t.Errorf("Verify with a withdrawn key: %v, want it refused as unverifiable", err)
	}
	if _, err := v.Verify(t.Context(), next.Sign(t, valid())); err != nil {
		t.Errorf("Verify with the key still published: %v", err)
	}
}

// TestJWKSLastGoodSetKept: a failing endpoint (an error status, a body that is no JWKS)
// leaves the keys fetched before in force.
func TestJWKSLastGoodSetKept(t *testing.T) {
	k := jwttest.RSA(t, "k1", 2048)
	srv := jwttest.NewJWKS(t, k)
	v := newVerifier(t, auth.JWTOptions{JWKSURL: srv.URL, JWKS: fastJWKS})
	token := k.Sign(t, valid())
	for _, breakIt := range []func(){
		func() { srv.Fail(503) },
		func() { srv.PublishRaw([]byte(`<html>maintenance</html>`)) },
		func() { srv.PublishRaw([]byte(`{"keys":[{"kty":"RSA","kid":"k1","n":"AQAB"}]}`)) },
	} {
		breakIt()
		before := srv.Fetches()
		time.Sleep(2 * fastJWKS.Cooldown)
		if _, err := v.Verify(t.Context(), jwttest.Ed25519(t, "new").Sign(t, valid())); err == nil {
			t.Fatal("Verify with a key the endpoint never served succeeded")
		}
		if srv.Fetches() == before {
			t.Fatal("an unknown kid did not make the verifier fetch the JWKS")
		}
		if _, err := v.Verify(t.Context(), token); err != nil {
			t.Errorf("Verify with the last good key after a failed fetch: %v", err)
		}
	}
}

// TestJWKSDownAtStart: an endpoint that fails at start does not stop the verifier; its keys
// are fetched when the first token naming one arrives.
func TestJWKSDownAtStart(t *testing.T) {
	k := jwttest.EC(t, "k1", elliptic.P256(), "ES256")
	srv := jwttest.NewJWKS(t, k)
	srv.Fail(500)
	v := newVerifier(t, auth.JWTOptions{JWKSURL: srv.URL, JWKS: fastJWKS})
	if _, err := v.Verify(t.Context(), k.Sign(t, valid())); err == nil {
		t.Fatal("Verify succeeded while no key set was ever fetched")
	}
	srv.Publish(t, k)
	time.Sleep(2 * fastJWKS.Cooldown)
	if _, err := v.Verify(t.Context(), k.Sign(t, valid())); err != nil {
		t.Errorf("Verify once the endpoint answers: %v", err)
	}
}

// TestJWKSUnknownKIDFlood: tokens naming unknown key ids, sent as fast as possible, make
// the edge fetch at most once per cooldown, and are refused without waiting for it.
func TestJWKSUnknownKIDFlood(t *testing.T) {
	k := jwttest.RSA(t, "k1", 2048)
	srv := jwttest.NewJWKS(t, k)
	v := newVerifier(t, auth.JWTOptions{JWKSURL: srv.URL, JWKS: auth.JWKSOptions{Cooldown: time.Hour, Timeout: 2 * time.Second}})
	// Signed beforehand: 50 RSA signatures take long enough on a loaded machine to pass
	// for a wait; what is timed is only the edge's verification.
	forged, tokens := jwttest.Key{Alg: "RS256", Private: k.Private}, make([]string, 50)
	for i := range tokens {
		forged.KID = "forged-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		tokens[i] = forged.Sign(t, valid())
	}
	before := srv.Fetches()
	began := time.Now()
	for i, token := range tokens {
		if _, err := v.Verify(t.Context(), token); err == nil {
			t.Fatalf("Verify with unknown kid %d succeeded", i)
		}
	}
	if n := srv.Fetches() - before; n > 1 {
		t.Errorf("50 unknown kids made %d fetches, want at most 1 per cooldown", n)
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("50 unknown kids took %v: refused requests waited for the cooldown", d)
	}
}

func TestNewJWTVerifierNeedsAKey(t *testing.T) {
	if _, err := auth.NewJWTVerifier(context.Background(), auth.JWTOptions{Issuer: "x"}); err == nil {
		t.Error("NewJWTVerifier without a secret or a JWKS URL: no error")
	}
}

func TestLooksLikeJWT(t *testing.T) {
	for token, want := range map[string]bool{
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln": true,
		"a.b.c":                           true,
		"pcat_0123456789abcdefghijklmnop": false,
		"a.b":                             false,
		"a.b.c.d":                         false,
		"a.b.c=":                          false,
		"a.b c.d":                         false,
		"":                                false,
	} {
		if got := auth.LooksLikeJWT(token); got != want {
			t.Errorf("LooksLikeJWT(%q) = %v, want %v", token, got, want)
		}
	}
}
