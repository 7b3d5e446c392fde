package auth

import (
	"net/http"
	"strings"
	"testing"
)

// TestJWKSRedirectKeepsTheURLRule: the client fetching key sets follows a redirect only
// where edge.jwt.jwks_url itself may point: https, or http to the local machine.
func TestJWKSRedirectKeepsTheURLRule(t *testing.T) {
	from, err := http.NewRequest(http.MethodGet, "https://idp.example/.well-known/jwks.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	for target, ok := range map[string]bool{
		"https://keys.idp.example/jwks": true,
		"http://localhost:8081/jwks":    true,
		"http://127.0.0.1:8081/jwks":    true,
		"http://[::1]:8081/jwks":        true,
		"http://keys.idp.example/jwks":  false, // https to http: keys replaceable on the way
		"http://10.0.0.5/jwks":          false,
		"ftp://keys.idp.example/jwks":   false,
		"http://localhost.example/jwks": false,
		"http://127.0.0.1.nip.io/jwks":  false,
	} {
		req, err := http.NewRequest(http.MethodGet, target, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = defaultJWKSClient.CheckRedirect(req, []*http.Request{from})
		if (err == nil) != ok {
			t.Errorf("redirect to %s: %v, want followed %t", target, err, ok)
		}
		if err != nil && !strings.Contains(err.Error(), "https only") {
			t.Errorf("redirect to %s: %v, want it to say keys are fetched over https only", target, err)
		}
	}
	via := make([]*http.Request, 10)
	if err := defaultJWKSClient.CheckRedirect(from, via); err == nil {
		t.Error("an eleventh redirect was followed")
	}
}
