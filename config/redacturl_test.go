package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestRedactURL: the one rule for a URL the programs log (database.url, replica.url,
// edge.jwt.jwks_url, the edge's JWKS warning): the user info's password and the values of
// query parameters whose names look secret are hidden, the rest stays readable, and a URL
// with nothing secret is shown as written. edge.jwt.jwks_url was logged in clear at start,
// credentials and all (an operator's review).
func TestRedactURL(t *testing.T) {
	tests := []struct {
		in   string
		keep []string // parts that must still be shown
	}{
		{"https://user:hunter2@idp.example/jwks?kid=k1", []string{"https://xxxxx@idp.example/jwks", "kid=k1"}},
		// A token as the user name; a fragment; ';' as a separator; a JWT; an OAuth code
		// (a review of 20da718).
		{"https://hunter2@idp.example/jwks", []string{"https://xxxxx@idp.example/jwks"}},
		{"https://idp.example/jwks#access_token=hunter2", []string{"https://idp.example/jwks#"}},
		{"https://idp.example/jwks?a=1;token=hunter2", []string{"a=1;token=xxxxx"}},
		{"https://idp.example/jwks?jwt=hunter2&code=hunter2&kid=k1", []string{"jwt=xxxxx&code=xxxxx&kid=k1"}},
		// A PostgreSQL URL's user name is the role: it stays.
		{"postgres://catalogue_builder:hunter2@db/catalogue", []string{"postgres://catalogue_builder:xxxxx@db/catalogue"}},
		{"https://idp.example/jwks?api_key=hunter2&tenant=t1", []string{"idp.example/jwks", "tenant=t1", "api_key=xxxxx"}},
		{"https://idp.example/jwks?access_token=hunter2", []string{"access_token=xxxxx"}},
		{"https://idp.example/jwks?token=hunter2&x=1", []string{"x=1"}},
		{"https://idp.example/jwks?client_secret=hunter2", nil},
		{"https://idp.example/jwks?sig=hunter2&se=2030", []string{"se=2030"}},
		{"https://b.s3.example/jwks.json?X-Amz-Credential=hunter2&X-Amz-Signature=hunter2&X-Amz-Security-Token=hunter2&X-Amz-Expires=60", []string{"X-Amz-Expires=60"}},
		{"https://idp.example/jwks?Subscription-Key=hunter2", nil},
		{"postgres://u@h/db?password=hunter2&sslmode=require", []string{"u@h/db", "sslmode=require"}},
		{"https://u:hunter2@idp.example:port/jwks", nil}, // not a valid URL: hidden whole
	}
	for _, tt := range tests {
		got := RedactURL(tt.in)
		if strings.Contains(got, "hunter2") {
			t.Errorf("RedactURL(%q) = %q, want the secret hidden", tt.in, got)
		}
		for _, k := range tt.keep {
			if !strings.Contains(got, k) {
				t.Errorf("RedactURL(%q) = %q, want %q still shown", tt.in, got, k)
			}
		}
	}
	for _, plain := range []string{"https://idp.example/jwks.json", "https://idp.example/a%20b/jwks?kid=k1&v=2", "http://127.0.0.1:9000/jwks"} {
		if got := RedactURL(plain); got != plain {
			t.Errorf("RedactURL(%q) = %q, want it unchanged", plain, got)
		}
	}
}

// TestLogValueRedactsTheJWKSURL: the configuration logged at start hides
// edge.jwt.jwks_url's credentials as it does database.url's.
func TestLogValueRedactsTheJWKSURL(t *testing.T) {
	c := Default()
	c.Edge.JWT.JWKSURL = "https://user:hunter2@idp.example/jwks?token=hunter3&kid=k1"
	var b strings.Builder
	slog.New(slog.NewJSONHandler(&b, nil)).Info("configuration", "config", c)
	if strings.Contains(b.String(), "hunter") || !strings.Contains(b.String(), `"edge.jwt.jwks_url":"https://xxxxx@idp.example/jwks?token=xxxxx&kid=k1"`) {
		t.Errorf("logged configuration shows edge.jwt.jwks_url's secrets, or not the rest of it:\n%s", b.String())
	}
}

// TestRedactURLError: the error of a request to a URL (net/http's client hides only the
// URL's password, as ***) is shown with its URL redacted by RedactURL.
func TestRedactURLError(t *testing.T) {
	req, err := http.NewRequest(http.MethodGet, "http://user:hunter2@127.0.0.1:1/jwks?api_key=hunter3&kid=k1", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = http.DefaultClient.Do(req)
	if err == nil {
		t.Fatal("a request to port 1 succeeded")
	}
	wrapped := errors.Join(errors.New("fetch JWKS"), err)
	got := RedactURLError(wrapped)
	if strings.Contains(got, "hunter") || !strings.Contains(got, "127.0.0.1:1/jwks?api_key=xxxxx&kid=k1") || !strings.Contains(got, "fetch JWKS") {
		t.Errorf("RedactURLError(%v) = %q, want the URL's secrets hidden, the rest kept", wrapped, got)
	}
	// url.Error quotes its URL with %q: a quote or backslash in it is escaped there, and the
	// URL as written is not found in the text (a review of 20da718).
	quoted := &url.Error{Op: "Get", URL: `https://idp.example/jwks?token=hun"ter2`, Err: errors.New("boom")}
	if got := RedactURLError(fmt.Errorf("fetch JWKS: %w", quoted)); strings.Contains(got, "ter2") || !strings.Contains(got, "token=xxxxx") {
		t.Errorf("RedactURLError of a URL with a quote = %q, want its token hidden", got)
	}
	if got := RedactURLError(errors.New("status 500")); got != "status 500" {
		t.Errorf("RedactURLError(status 500) = %q, want it unchanged", got)
	}
}

// TestRefusedJWKSURLIsRedacted: edge.jwt.jwks_url refused at start is quoted redacted.
func TestRefusedJWKSURLIsRedacted(t *testing.T) {
	t.Setenv("CATALOGUE_EDGE_JWT_JWKS_URL", "http://user:hunter2@idp.example/jwks?token=hunter3")
	_, err := Load("", nil)
	if err == nil || !strings.Contains(err.Error(), "edge.jwt.jwks_url") || strings.Contains(err.Error(), "hunter") {
		t.Errorf("Load with an http:// JWKS URL with credentials: error %v, want it refused, its secrets hidden", err)
	}
}
