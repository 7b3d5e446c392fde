package config

import (
	"net/url"
	"testing"
)

// TestJWKSURLAllowed: keys come over https, or over http from the local machine only; the
// one rule holds edge.jwt.jwks_url (config) and every redirect from it.
func TestJWKSURLAllowed(t *testing.T) {
	for s, want := range map[string]bool{
		"https://idp.example/jwks.json":   true,
		"http://localhost:8080/jwks":      true,
		"http://127.0.0.1/jwks":           true,
		"http://127.9.9.9/jwks":           true,
		"http://[::1]:9000/jwks":          true,
		"http://idp.example/jwks.json":    false,
		"http://localhost.evil.example/x": false,
		"http://10.0.0.1/jwks":            false,
		"https:///jwks":                   false,
		"ftp://idp.example/jwks":          false,
		"/jwks.json":                      false,
	} {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := JWKSURLAllowed(u); got != want {
			t.Errorf("JWKSURLAllowed(%s) = %v, want %v", s, got, want)
		}
	}
}
