package auth_test

import (
	"crypto/elliptic"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/trainingco/catalogue/edge/auth"
	"github.com/trainingco/catalogue/edge/auth/jwttest"
)

// TestCritRefused: RFC 7515 section 4.1.11: a JWS whose "crit" header names an extension
// the verifier does not understand must be refused, and this verifier understands none;
// an empty or malformed "crit" is refused too (issue 23, defect 10).
func TestCritRefused(t *testing.T) {
	v := hmacVerifier(t)
	rs := jwttest.RSA(t, "rsa-1", 2048)
	srv := jwttest.NewJWKS(t, rs)
	withJWKS := newVerifier(t, auth.JWTOptions{JWKSURL: srv.URL, JWKS: fastJWKS})
	hs := jwttest.Key{Alg: "HS256", Private: secret}
	for name, header := range map[string]map[string]any{
		"an unknown extension":             {"crit": []string{"x-unknown"}, "x-unknown": true},
		"a registered name it does not do": {"crit": []string{"b64"}, "b64": false},
		"an empty list":                    {"crit": []string{}},
		"not a list":                       {"crit": "x-unknown", "x-unknown": true},
	} {
		hs.Header = header
		if got, err := v.Verify(t.Context(), hs.Sign(t, valid())); !errors.Is(err, auth.ErrInvalidJWT) {
			t.Errorf("Verify(HS256, crit %s) = %q, %v; want ErrInvalidJWT", name, got, err)
		}
		k := rs
		k.Header = header
		if got, err := withJWKS.Verify(t.Context(), k.Sign(t, valid())); !errors.Is(err, auth.ErrInvalidJWT) {
			t.Errorf("Verify(RS256, crit %s) = %q, %v; want ErrInvalidJWT", name, got, err)
		}
	}
	if _, err := v.Verify(t.Context(), jwttest.HS256(t, secret, valid())); err != nil {
		t.Errorf("Verify without crit: %v", err)
	}
}

// TestEncryptionKeysNotUsedForSignatures: a JWKS key published with "use": "enc" is for
// encryption (RFC 7517 section 4.2) and verifies no signature, with or without a kid; keys
// with "use": "sig" or without "use" do (issue 23, defect 10).
func TestEncryptionKeysNotUsedForSignatures(t *testing.T) {
	enc := jwttest.RSA(t, "rsa-enc", 2048)
	enc.Use = "enc"
	sig := jwttest.EC(t, "ec-sig", elliptic.P256(), "ES256")
	srv := jwttest.NewJWKS(t, enc, sig)
	v := newVerifier(t, auth.JWTOptions{JWKSURL: srv.URL, JWKS: fastJWKS})
	noKID := enc
	noKID.KID = ""
	for name, token := range map[string]string{"with its kid": enc.Sign(t, valid()), "without kid": noKID.Sign(t, valid())} {
		if got, err := v.Verify(t.Context(), token); !errors.Is(err, jwt.ErrTokenUnverifiable) {
			t.Errorf("Verify(signed with an enc key, %s) = %q, %v; want refused as unverifiable", name, got, err)
		}
	}
	if _, err := v.Verify(t.Context(), sig.Sign(t, valid())); err != nil {
		t.Errorf("Verify with the sig key: %v", err)
	}
}

// TestMaxLifetime: a token whose exp is more than JWTOptions.MaxLifetime after its iat is
// refused (edge.jwt.max_lifetime, default 24h), and so is one without iat whose exp is more
// than that (and the leeway) from now (issue 23, defect 10; a token without iat escaped).
func TestMaxLifetime(t *testing.T) {
	v := newVerifier(t, auth.JWTOptions{HMACSecret: secret, MaxLifetime: 24 * time.Hour})
	for _, tt := range []struct {
		name   string
		claims jwttest.Claims
		ok     bool
	}{
		{"an hour", with(valid(), "iat", at(-time.Minute), "exp", at(time.Hour-time.Minute)), true},
		{"exactly 24h", with(valid(), "iat", at(-time.Hour), "exp", at(23*time.Hour)), true},
		{"24h and a second", with(valid(), "iat", at(-time.Hour), "exp", at(23*time.Hour+time.Second)), false},
		{"ten years", with(valid(), "iat", at(-time.Minute), "exp", at(10*365*24*time.Hour)), false},
		{"ten years without iat", with(valid(), "iat", nil, "exp", at(10*365*24*time.Hour)), false},
		{"without iat, 25h left", with(valid(), "iat", nil, "exp", at(25*time.Hour)), false},
		{"without iat, 23h left", with(valid(), "iat", nil, "exp", at(23*time.Hour)), true},
	} {
		got, err := v.Verify(t.Context(), jwttest.HS256(t, secret, tt.claims))
		if ok := err == nil; ok != tt.ok {
			t.Errorf("Verify(%s) = %q, %v; want accepted %v", tt.name, got, err, tt.ok)
		}
		if err != nil && !errors.Is(err, auth.ErrInvalidJWT) {
			t.Errorf("Verify(%s): %v does not wrap ErrInvalidJWT", tt.name, err)
		}
	}
	// Without iat, the issuer's clock may be ahead by the leeway: exp up to max_lifetime
	// plus the leeway from now is accepted, a second more is not.
	skewed := newVerifier(t, auth.JWTOptions{HMACSecret: secret, MaxLifetime: 24 * time.Hour, Leeway: 30 * time.Second})
	for left, want := range map[time.Duration]bool{24*time.Hour + 30*time.Second: true, 24*time.Hour + 31*time.Second: false} {
		_, err := skewed.Verify(t.Context(), jwttest.HS256(t, secret, with(valid(), "iat", nil, "exp", at(left))))
		if ok := err == nil; ok != want {
			t.Errorf("Verify(no iat, %s left, leeway 30s) = %v; want accepted %v", left, err, want)
		}
	}
}

// TestStudentClaimBounded: a string student claim must be printable and at most 255 bytes
// (an OpenID Connect sub is at most 255 ASCII characters); otherwise the token is refused
// as having no usable student (issue 23, defect 8: a NUL byte made the class read 503).
func TestStudentClaimBounded(t *testing.T) {
	v := hmacVerifier(t)
	for _, sub := range []string{"7\x00", "\x00", "7\n", "\t7", "\x1b[31m7", "7\x7f", "7\u0085", "7\u200b", "7\u2028", "\ufeff7", strings.Repeat("7", 256), strings.Repeat("é", 128)} {
		if got, err := v.Verify(t.Context(), jwttest.HS256(t, secret, with(valid(), "sub", sub))); !errors.Is(err, auth.ErrNoStudent) {
			t.Errorf("Verify(sub %q) = %q, %v; want ErrNoStudent", sub, got, err)
		}
	}
	for _, sub := range []string{strings.Repeat("7", 255), "stu 7f3a", "Ünïcode-学生", "a|b&c;d", strings.Repeat("é", 127)} {
		if got, err := v.Verify(t.Context(), jwttest.HS256(t, secret, with(valid(), "sub", sub))); err != nil || got != sub {
			t.Errorf("Verify(sub %q) = %q, %v; want it accepted as is", sub, got, err)
		}
	}
}
