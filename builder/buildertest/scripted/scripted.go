// Package scripted runs a service of one test's own with the project's script for it
// (scripts/minio.sh, scripts/redis.sh): `NAME.sh start DIR` prints the service's URL and
// keeps its pid in DIR/pid, `NAME.sh stop DIR` stops it. A test can then stop, kill or
// pause its service without disturbing the shared services other tests use. The service
// comes back on the same port, as a restarted server would, so that clients configured with
// its URL find it again.
package scripted

import (
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

// Service is one running (or stopped) service.
type Service struct {
	URL string // what the script printed, e.g. http://127.0.0.1:PORT

	name    string   // the script's name without .sh
	portVar string   // the variable the script reads a port from
	env     []string // more variables for the script
	dir     string
	port    string
	up      bool
}

// Start starts the service scripts/NAME.sh runs, with env added to the script's
// environment, and stops it when t ends. portVar names the variable by which the script
// takes a port (MINIO_PORT, REDIS_PORT).
func Start(t testing.TB, name, portVar string, env ...string) *Service {
	t.Helper()
	s := &Service{name: name, portVar: portVar, env: env, dir: t.TempDir()}
	s.Start(t)
	t.Cleanup(func() {
		if s.up {
			s.Stop(t)
		}
	})
	return s
}

// script returns the path of scripts/NAME.sh, found from this source file.
func (s *Service) script(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the source folder")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "scripts", s.name+".sh")
}

// Start starts the service again, on its earlier port when it ran before.
func (s *Service) Start(t testing.TB) {
	t.Helper()
	cmd := exec.Command(s.script(t), "start", s.dir)
	cmd.Env = append(os.Environ(), s.env...)
	if s.port != "" {
		cmd.Env = append(cmd.Env, s.portVar+"="+s.port)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s.sh start: %v\n%s", s.name, err, stderr.String())
	}
	got := strings.TrimSpace(string(out))
	u, err := url.Parse(got)
	if err != nil || u.Host == "" || u.Port() == "" || (s.port != "" && u.Port() != s.port) {
		t.Fatalf("%s.sh start printed %q, want a URL with a port (%q if set)", s.name, got, s.port)
	}
	s.URL, s.port, s.up = got, u.Port(), true
}

// Stop stops the service with its script, which waits for the process to be gone.
func (s *Service) Stop(t testing.TB) {
	t.Helper()
	if out, err := exec.Command(s.script(t), "stop", s.dir).CombinedOutput(); err != nil {
		t.Fatalf("%s.sh stop: %v\n%s", s.name, err, out)
	}
	s.up = false
}

// Kill ends the service at once with SIGKILL, as a crash would, and lets the script tidy
// up.
func (s *Service) Kill(t testing.TB) {
	t.Helper()
	s.Signal(t, syscall.SIGKILL)
	s.Stop(t)
}

// Signal sends sig to the service's process: SIGSTOP leaves it holding its port and
// accepting connections (the kernel does) but never answering, as a hung server would.
func (s *Service) Signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.dir, "pid"))
	if err != nil {
		t.Fatalf("read %s's pid: %v", s.name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s's pid file holds %q", s.name, b)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("signal %v to %s (pid %d): %v", sig, s.name, pid, err)
	}
}
