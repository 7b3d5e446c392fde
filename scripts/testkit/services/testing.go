package services

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestServer is a server of one test's own, which the test may stop, kill, pause and start
// again without disturbing the shared services other tests use; its methods fail the test
// when they fail.
type TestServer struct{ *Server }

// ForTest starts a server of t's own with start, in a folder that t removes, and stops it
// when t ends. Like the shared services, it needs a reason to run: the variable env that
// names the shared server of that kind (the program comes with it), or
// CATALOGUE_TEST_REQUIRE=1 (make test), under which a server that cannot start, even once
// installed, fails t instead of skipping it.
func ForTest(t testing.TB, env string, start func(dir string) (*Server, error)) *TestServer {
	t.Helper()
	if os.Getenv("CATALOGUE_TEST_REQUIRE") == "" {
		Need(t, env)
	}
	dir := t.TempDir()
	// A PostgreSQL run as the user postgres must reach dir: t.TempDir's folders are 0700.
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s, err := start(dir)
	if s != nil {
		t.Cleanup(func() {
			if err := s.Stop(); err != nil {
				t.Errorf("stop %s: %v", s.Kind, err)
			}
		})
	}
	if err != nil {
		t.Fatalf("start a server of the test's own: %v", err)
	}
	return &TestServer{s}
}

// Need returns the value of the variable env that names a shared test service
// (CATALOGUE_TEST_PG_URL...). When it is unset, it fails t under CATALOGUE_TEST_REQUIRE=1
// (make test, make services), where the service should be there, and skips t otherwise: a
// bare `go test` without the services skips the tests that need them.
func Need(t testing.TB, env string) string {
	t.Helper()
	v := os.Getenv(env)
	if v != "" {
		return v
	}
	if os.Getenv("CATALOGUE_TEST_REQUIRE") != "" {
		t.Fatalf("%s is not set: make test starts the services and sets it", env)
	}
	t.Skipf("%s is not set; run make test to start the real services", env)
	return ""
}

// Port returns a loopback port that nothing listens on now, for a server the test starts
// that cannot take port 0 and report the one it got.
func Port(t testing.TB) int {
	t.Helper()
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// Start starts the server again, on its earlier port.
func (s *TestServer) Start(t testing.TB) { t.Helper(); check(t, s.Server.Start()) }

// Stop stops the server and waits for it to be gone.
func (s *TestServer) Stop(t testing.TB) { t.Helper(); check(t, s.Server.Stop()) }

// Kill ends the server at once with SIGKILL, as a crash would.
func (s *TestServer) Kill(t testing.TB) { t.Helper(); check(t, s.Server.Kill()) }

// Pause stops the server with SIGSTOP: it keeps its port and accepts connections (the
// kernel does), but never answers, as a hung server would.
func (s *TestServer) Pause(t testing.TB) { t.Helper(); check(t, s.Signal(syscall.SIGSTOP)) }

// Resume lets a paused server go on (SIGCONT).
func (s *TestServer) Resume(t testing.TB) { t.Helper(); check(t, s.Signal(syscall.SIGCONT)) }

func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
