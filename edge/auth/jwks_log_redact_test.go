package auth_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/edge/auth"
)

// TestJWKSFetchWarningHidesTheURLsSecrets: the warning of a failed JWKS fetch names the URL
// with its password and secret-looking query values hidden (config.RedactURL), in its url
// field and in its error, which quotes the request's URL; both showed them in clear (an
// operator's review).
func TestJWKSFetchWarningHidesTheURLsSecrets(t *testing.T) {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	t.Cleanup(down.Close)
	for name, host := range map[string]string{
		"refused":    "127.0.0.1:1",                           // the error quotes the URL
		"status 500": strings.TrimPrefix(down.URL, "http://"), // it does not
	} {
		t.Run(name, func(t *testing.T) {
			var log bytes.Buffer
			_, err := auth.NewJWTVerifier(t.Context(), auth.JWTOptions{
				JWKSURL: "http://user:hunter2@" + host + "/jwks?api_key=hunter3&kid=k1",
				Log:     slog.New(slog.NewJSONHandler(&log, nil)),
				JWKS:    auth.JWKSOptions{Refresh: time.Hour, Cooldown: time.Hour, Timeout: 2 * time.Second},
			})
			if err != nil {
				t.Fatal(err)
			}
			got := log.String()
			if !strings.Contains(got, "JWKS fetch failed") || !strings.Contains(got, `"url":"http://xxxxx@`+host+`/jwks?api_key=xxxxx&kid=k1"`) ||
				strings.Contains(got, "hunter") {
				t.Errorf("the failed fetch logged %s; want its URL with the user info and api_key hidden, the rest shown", got)
			}
		})
	}
}
