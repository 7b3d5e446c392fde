package auth_test

import (
	"crypto/elliptic"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/edge/auth"
	"github.com/trainingco/catalogue/edge/auth/jwttest"
)

// FuzzVerifyJWT feeds the verifier arbitrary tokens, starting from valid ones of every
// algorithm it accepts. It must never panic, and must accept only what was signed: the
// header and claims of an accepted token are those of a seed (the fuzzer cannot sign).
func FuzzVerifyJWT(f *testing.F) {
	rs, es := jwttest.RSA(f, "rs", 2048), jwttest.EC(f, "es", elliptic.P256(), "ES256")
	ed := jwttest.Ed25519(f, "ed")
	srv := jwttest.NewJWKS(f, rs, es, ed)
	v, err := auth.NewJWTVerifier(f.Context(), auth.JWTOptions{
		HMACSecret: secret, JWKSURL: srv.URL, Leeway: 30 * time.Second,
		Now: func() time.Time { return now },
		// Unknown kids are refused at once: no fuzz input waits for a fetch.
		JWKS: auth.JWKSOptions{Cooldown: time.Hour, Timeout: time.Second},
	})
	if err != nil {
		f.Fatal(err)
	}
	signed := map[string]bool{}
	for _, tok := range []string{
		jwttest.HS256(f, secret, valid()), jwttest.HS256(f, secret, with(valid(), "sub", 7)),
		rs.Sign(f, valid()), es.Sign(f, valid()), ed.Sign(f, valid()),
		jwttest.HS256(f, secret, with(valid(), "exp", at(-time.Hour))),
		jwttest.Unsigned(f, valid()), "a.b.c", "..", "eyJ.eyJ.", "pcat_x",
	} {
		f.Add(tok)
		if i := strings.LastIndexByte(tok, '.'); i > 0 {
			signed[tok[:i]] = true
		}
	}
	f.Fuzz(func(t *testing.T, token string) {
		student, err := v.Verify(t.Context(), token)
		if err != nil {
			if student != "" {
				t.Errorf("Verify(%q) refused the token but returned student %q", token, student)
			}
			return
		}
		i := strings.LastIndexByte(token, '.')
		if i < 0 || !signed[token[:i]] {
			t.Errorf("Verify(%q) accepted a header and claims never signed (student %q)", token, student)
		}
		if student == "" {
			t.Errorf("Verify(%q) accepted the token with an empty student", token)
		}
	})
}
