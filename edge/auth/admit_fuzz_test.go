package auth_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/edge/auth"
	"github.com/trainingco/catalogue/edge/auth/jwttest"
)

// FuzzAdmitJWT feeds the Gate arbitrary Authorization values, from valid JWTs and their
// near misses on: it never panics, admits only JWTs whose header and claims were signed,
// always with their student, and refuses everything else as unauthenticated (or, past the
// address's allowance, rate limited), never as anything a JWT could not cause.
func FuzzAdmitJWT(f *testing.F) {
	v, err := auth.NewJWTVerifier(f.Context(), auth.JWTOptions{HMACSecret: secret, Leeway: 30 * time.Second,
		Now: func() time.Time { return now }})
	if err != nil {
		f.Fatal(err)
	}
	g := auth.New(auth.Options{JWT: v, RateLimit: 1 << 30, Now: func() time.Time { return now }})
	students := map[string]string{} // signed header and claims -> student
	for _, sub := range []any{"7", 8, "stu-9"} {
		tok := jwttest.HS256(f, secret, with(valid(), "sub", sub))
		students[tok[:strings.LastIndexByte(tok, '.')]] = map[any]string{"7": "7", 8: "8", "stu-9": "stu-9"}[sub]
		f.Add("Bearer " + tok)
		f.Add("bearer  " + tok)
		f.Add("Bearer " + tok + "x")
	}
	f.Add("Bearer " + jwttest.Unsigned(f, valid()))
	f.Add("Bearer a.b.c")
	f.Add("Bearer pcat_a.b")
	f.Fuzz(func(t *testing.T, value string) {
		a, err := g.Admit(t.Context(), http.Header{"Authorization": {value}}, "192.0.2.1")
		if err != nil {
			if !errors.Is(err, auth.ErrUnauthenticated) && !errors.Is(err, auth.ErrRateLimited) && !errors.Is(err, auth.ErrNotLoaded) {
				t.Fatalf("Admit(%q) = %v, want a refusal", value, err)
			}
			if a.Student != "" {
				t.Fatalf("Admit(%q) refused with student %q", value, a.Student)
			}
			return
		}
		_, token, _ := strings.Cut(value, " ")
		token = strings.TrimLeft(token, " ")
		i := strings.LastIndexByte(token, '.')
		if i < 0 || students[token[:i]] == "" || a.Student != students[token[:i]] {
			t.Fatalf("Admit(%q) admitted student %q; that header and claims were never signed for them", value, a.Student)
		}
	})
}
