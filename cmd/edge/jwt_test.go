package main

import (
	"crypto/elliptic"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/edge/auth/jwttest"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestRunAcceptsConfiguredJWTs: edge.jwt in the configuration reaches the edge: an HS256
// JWT signed with edge.jwt.hmac_secret (given in the environment) and an ES256 JWT of the
// JWKS at edge.jwt.jwks_url (in the file) are served, one from another issuer is not
// (edge.jwt.issuer), and the secret is not in the logged configuration.
func TestRunAcceptsConfiguredJWTs(t *testing.T) {
	storeDir := t.TempDir()
	publishOne(t, storeDir)
	dbURL := testkit.NewMigratedDatabase(t)
	key := jwttest.EC(t, "k1", elliptic.P256(), "ES256")
	jwks := jwttest.NewJWKS(t, key)
	secret := "run test secret: thirty-two bytes or more"
	t.Setenv("CATALOGUE_EDGE_JWT_HMAC_SECRET", secret)
	cfg := writeConfig(t, fmt.Sprintf("database:\n  url: %s\nstore:\n  url: file://%s\nedge:\n  jwt:\n    jwks_url: %s\n    issuer: https://portal.example\n",
		dbURL, storeDir, jwks.URL))
	addr, stop := started(t, "--config", cfg, "--listen", "127.0.0.1:0")
	course := "http://" + addr + "/api/v2/public/course/1"
	claims := func(iss string) jwttest.Claims {
		return jwttest.Claims{"sub": "7", "iss": iss, "exp": time.Now().Add(time.Hour).Unix()}
	}
	for name, tt := range map[string]struct {
		token string
		want  int
	}{
		"HS256 with the secret": {jwttest.HS256(t, []byte(secret), claims("https://portal.example")), 200},
		"ES256 from the JWKS":   {key.Sign(t, claims("https://portal.example")), 200},
		"HS256, another issuer": {jwttest.HS256(t, []byte(secret), claims("https://other.example")), 401},
		"HS256, another secret": {jwttest.HS256(t, []byte(strings.Repeat("x", 40)), claims("https://portal.example")), 401},
	} {
		if status, body := get(t, course, tt.token); status != tt.want {
			t.Errorf("%s: GET %s = %d %s, want %d", name, course, status, body, tt.want)
		}
	}
	log, err := stop()
	if err != nil {
		t.Errorf("run after cancel = %v", err)
	}
	if strings.Contains(log, secret) || !strings.Contains(log, `"edge.jwt.jwks_url":"`+jwks.URL+`"`) {
		t.Errorf("the logged configuration should show edge.jwt.jwks_url and hide the secret:\n%s", log)
	}
}
