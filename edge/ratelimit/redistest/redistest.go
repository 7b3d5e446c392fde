// Package redistest gives tests a real Redis: the shared test server that scripts/test.sh
// starts (CATALOGUE_TEST_REDIS_URL), or a server of the test's own (scripts/testkit/services),
// that the test may kill, pause and start again without disturbing others.
//
// Like scripts/testkit, a bare `go test` without the services skips the tests that need
// Redis; under CATALOGUE_TEST_REQUIRE=1 (make test) they fail instead.
package redistest

import (
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/trainingco/catalogue/scripts/testkit/services"
)

// EnvURL names the variable that holds the shared test server's URL.
const EnvURL = "CATALOGUE_TEST_REDIS_URL"

// URL returns the shared test server's URL, skipping or failing t when there is none.
// Tests sharing it keep apart by key prefix (Prefix).
func URL(t testing.TB) string {
	t.Helper()
	return services.Need(t, EnvURL)
}

// Prefix returns a key prefix no other test uses.
func Prefix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "test:" + hex.EncodeToString(b) + ":"
}

// Server is a Redis of one test's own. It comes back on the same port after Kill, as a
// restarted server would, so that clients configured with its URL find it again.
type Server struct {
	*services.TestServer // URL: redis://127.0.0.1:PORT/0; Kill, Stop, Start, Pause, Resume
}

// Start starts a Redis for t and stops it when t ends. It needs the test services (the
// redis-server binary comes with them), so it skips or fails like URL when they are absent.
func Start(t testing.TB) *Server {
	t.Helper()
	URL(t)
	return &Server{services.ForTest(t, EnvURL, services.Redis)}
}
