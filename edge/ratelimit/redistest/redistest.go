// Package redistest gives tests a real Redis: the shared test server that scripts/test.sh
// starts (CATALOGUE_TEST_REDIS_URL), or a server of the test's own, started with
// scripts/redis.sh, that the test may kill, pause and start again without disturbing others.
//
// Like builder/buildertest, a bare `go test` without the services skips the tests that need
// Redis; under CATALOGUE_TEST_REQUIRE=1 (make test) they fail instead.
package redistest

import (
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// EnvURL names the variable that holds the shared test server's URL.
const EnvURL = "CATALOGUE_TEST_REDIS_URL"

// URL returns the shared test server's URL, skipping or failing t when there is none.
// Tests sharing it keep apart by key prefix (Prefix).
func URL(t testing.TB) string {
	t.Helper()
	v := os.Getenv(EnvURL)
	if v != "" {
		return v
	}
	if os.Getenv("CATALOGUE_TEST_REQUIRE") != "" {
		t.Fatalf("%s is not set: make test starts the services and sets it", EnvURL)
	}
	t.Skipf("%s is not set; run make test to start the real services", EnvURL)
	return ""
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
	URL  string // redis://127.0.0.1:PORT/0
	dir  string
	port string
	up   bool
}

// Start starts a Redis for t and stops it when t ends. It needs the test services (the
// redis-server binary comes with them), so it skips or fails like URL when they are absent.
func Start(t testing.TB) *Server {
	t.Helper()
	URL(t)
	s := &Server{dir: t.TempDir()}
	s.Start(t)
	t.Cleanup(func() {
		if s.up {
			s.Stop(t)
		}
	})
	return s
}

// script returns the path of scripts/redis.sh, found from this source file.
func script(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the source folder")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "scripts", "redis.sh")
}

// Start starts the server again, on its earlier port when it ran before.
func (s *Server) Start(t testing.TB) {
	t.Helper()
	cmd := exec.Command(script(t), "start", s.dir)
	cmd.Env = os.Environ()
	if s.port != "" {
		cmd.Env = append(cmd.Env, "REDIS_PORT="+s.port)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("redis.sh start: %v\n%s", err, stderr.String())
	}
	got := strings.TrimSpace(string(out))
	u, err := url.Parse(got)
	if err != nil || u.Scheme != "redis" || u.Port() == "" || (s.port != "" && u.Port() != s.port) {
		t.Fatalf("redis.sh start printed %q, want redis://127.0.0.1:PORT/0 (port %q if set)", got, s.port)
	}
	s.URL, s.port, s.up = got, u.Port(), true
}

// Stop stops the server with redis.sh stop.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if out, err := exec.Command(script(t), "stop", s.dir).CombinedOutput(); err != nil {
		t.Fatalf("redis.sh stop: %v\n%s", err, out)
	}
	s.up = false
}

// Kill ends the server at once with SIGKILL, as a crash would, and lets redis.sh tidy up.
func (s *Server) Kill(t testing.TB) {
	t.Helper()
	s.signal(t, syscall.SIGKILL)
	s.Stop(t)
}

// Pause stops the server with SIGSTOP: it keeps its port and accepts connections (the
// kernel does), but never answers, as a hung server would.
func (s *Server) Pause(t testing.TB) { t.Helper(); s.signal(t, syscall.SIGSTOP) }

// Resume lets a paused server go on (SIGCONT).
func (s *Server) Resume(t testing.TB) { t.Helper(); s.signal(t, syscall.SIGCONT) }

func (s *Server) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.dir, "pid"))
	if err != nil {
		t.Fatalf("read Redis's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("Redis's pid file holds %q", b)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("signal %v to Redis (pid %d): %v", sig, pid, err)
	}
}
