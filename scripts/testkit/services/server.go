// Package services starts and stops the real servers that the tests, the benchmark, the soak
// and `make services` run against: PostgreSQL with a streaming standby, MinIO, Redis and
// nginx, each on a free loopback port, in a folder of its own, installing the program first
// when the machine lacks it (Debian's packages through apt-get; MinIO with `go install`, as
// the Go module proxy is the only source of it here).
//
// It lives under scripts/ because it is tooling shared by both halves: the builder's tests,
// the edge's tests and the scripts use it, and none of them owns it. It imports nothing of
// the project. scripts/testkit/cmd/services is its command line, for the shell scripts.
//
// Every server runs in its own session (setsid), detached from the program that started it,
// with its output in DIR/server.log and its kind, pid, port and URL in DIR/server.json, so
// that another process can stop it later (Open, StopAll): `make services` starts them in one
// program and `make services-stop` stops them from another. A stopped server starts again on
// its earlier port, as a restarted server would, so that clients configured with its URL find
// it again.
package services

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Server is one server, running or stopped.
type Server struct {
	Kind string // postgres, standby, minio, redis or nginx
	Dir  string // absolute; holds server.json and server.log
	Port int    // 0 until it has started once
	URL  string // how clients reach it, e.g. redis://127.0.0.1:PORT/0
	Pid  int    // the server's process while it runs

	command func(port int) (*exec.Cmd, error) // the server's command line for a port
	url     func(port int) string
	ready   func(ctx context.Context, s *Server) error // nil once the server answers
	exited  chan struct{}                              // closed when a process this program started has exited
}

// state is what server.json holds.
type state struct {
	Kind string `json:"kind"`
	Pid  int    `json:"pid"`
	Port int    `json:"port"`
	URL  string `json:"url"`
}

// kinds are the process names (/proc/PID/comm) and the clean-stop signal of each kind of
// server. The name is checked before any signal, so that a stale state file never makes
// us signal an unrelated process that reused the pid. PostgreSQL's fast shutdown is
// SIGINT (SIGTERM would wait for every client to leave).
var kinds = map[string]struct {
	comm string
	stop syscall.Signal
}{
	"postgres": {"postgres", syscall.SIGINT},
	"standby":  {"postgres", syscall.SIGINT},
	"minio":    {"minio", syscall.SIGTERM},
	"redis":    {"redis-server", syscall.SIGTERM},
	"nginx":    {"nginx", syscall.SIGTERM},
}

// startTimeout bounds the wait for a server to answer: MinIO's first start on a busy
// machine takes several seconds.
const startTimeout = 60 * time.Second

// errExited says that the server exited before it answered, usually because another
// process took its port between FreePort and the server binding it.
var errExited = errors.New("it exited before answering")

// newServer prepares a server of kind in dir, which it creates.
func newServer(kind, dir string) (*Server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	return &Server{Kind: kind, Dir: abs}, nil
}

// Start starts the server: on its earlier port when it ran before, else on a free one,
// trying another when the port is taken before the server binds it.
func (s *Server) Start() error {
	if s.command == nil {
		return fmt.Errorf("%s in %s: opened from its state file, it can only be stopped", s.Kind, s.Dir)
	}
	fixed := s.Port != 0
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		port := s.Port
		if !fixed {
			if port, err = freePort(); err != nil {
				return err
			}
		}
		if err = s.launch(port); err == nil {
			return nil
		}
		if !fixed {
			s.Port, s.URL = 0, ""
		}
		if fixed || !errors.Is(err, errExited) {
			break
		}
	}
	log, _ := os.ReadFile(filepath.Join(s.Dir, "server.log"))
	return fmt.Errorf("start %s in %s: %w; its log:\n%s", s.Kind, s.Dir, err, log)
}

// launch starts the server on port, detached, and waits until it answers.
func (s *Server) launch(port int) error {
	cmd, err := s.command(port)
	if err != nil {
		return err
	}
	logFile, err := os.Create(filepath.Join(s.Dir, "server.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, logFile, logFile
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true // its own session: it outlives us and our terminal's signals
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }() // reaps it while we run
	s.Pid, s.Port, s.URL, s.exited = cmd.Process.Pid, port, s.url(port), exited
	if err := s.save(); err != nil {
		_ = s.Kill()
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	for {
		err := s.ready(ctx, s)
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			s.Pid = 0
			return errExited
		case <-ctx.Done():
			_ = s.Kill()
			return fmt.Errorf("it did not answer on port %d within %v: %w", port, startTimeout, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// save writes server.json.
func (s *Server) save() error {
	b, err := json.Marshal(state{Kind: s.Kind, Pid: s.Pid, Port: s.Port, URL: s.URL})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.Dir, "server.json"), b, 0o644)
}

// Open returns the server whose state dir holds, as another program started it; it can be
// stopped, killed and signalled, not started.
func Open(dir string) (*Server, error) {
	b, err := os.ReadFile(filepath.Join(dir, "server.json"))
	if err != nil {
		return nil, err
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%s/server.json: %w", dir, err)
	}
	if _, ok := kinds[st.Kind]; !ok {
		return nil, fmt.Errorf("%s/server.json: unknown kind %q", dir, st.Kind)
	}
	return &Server{Kind: st.Kind, Dir: dir, Port: st.Port, URL: st.URL, Pid: st.Pid}, nil
}

// Stop stops the server cleanly and waits for it to be gone: 20 s, then SIGKILL. A server
// paused with SIGSTOP is let go on first, so that it can exit.
func (s *Server) Stop() error {
	if !s.running() {
		s.Pid = 0
		return nil
	}
	_ = syscall.Kill(s.Pid, syscall.SIGCONT)
	if err := syscall.Kill(s.Pid, kinds[s.Kind].stop); err != nil {
		return fmt.Errorf("stop %s (pid %d): %w", s.Kind, s.Pid, err)
	}
	if s.wait(20 * time.Second) {
		s.Pid = 0
		return nil
	}
	return s.Kill()
}

// Kill ends the server at once with SIGKILL, as a crash would, and waits for it to be gone.
func (s *Server) Kill() error {
	if !s.running() {
		s.Pid = 0
		return nil
	}
	if err := syscall.Kill(s.Pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill %s (pid %d): %w", s.Kind, s.Pid, err)
	}
	if !s.wait(10 * time.Second) {
		return fmt.Errorf("%s (pid %d) still runs 10 s after SIGKILL", s.Kind, s.Pid)
	}
	s.Pid = 0
	return nil
}

// Signal sends sig to the server's process: SIGSTOP leaves it holding its port and
// accepting connections (the kernel does) but never answering, as a hung server would;
// SIGCONT lets it go on.
func (s *Server) Signal(sig syscall.Signal) error {
	if !s.running() {
		return fmt.Errorf("signal %v to %s: it is not running", sig, s.Kind)
	}
	return syscall.Kill(s.Pid, sig)
}

// running reports whether s.Pid is still this kind of server.
func (s *Server) running() bool {
	if s.Pid <= 0 {
		return false
	}
	if s.exited != nil {
		select {
		case <-s.exited:
			return false
		default:
			return true
		}
	}
	comm, stat, ok := procStatus(s.Pid)
	return ok && comm == kinds[s.Kind].comm && stat != "Z"
}

// wait reports whether the server's process is gone within d.
func (s *Server) wait(d time.Duration) bool {
	deadline := time.After(d)
	for s.running() {
		select {
		case <-deadline:
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	return true
}

// procStatus returns a process's name and state (R, S, T, Z...) from /proc/PID/stat.
func procStatus(pid int) (comm, state string, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", "", false
	}
	// PID (COMM) STATE ...: COMM may hold spaces and parentheses, so cut at the last ')'.
	line := string(b)
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return "", "", false
	}
	rest := strings.Fields(line[end+1:])
	if len(rest) == 0 {
		return "", "", false
	}
	return line[open+1 : end], rest[0], true
}

// StopAll stops every server started in dir or in its immediate subfolders (what `make
// services` starts), the standby before its primary; folders without a server are skipped.
func StopAll(dir string) error {
	dirs := []string{dir}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(dir, e.Name()))
		}
	}
	var servers []*Server
	for _, d := range dirs {
		if s, err := Open(d); err == nil {
			servers = append(servers, s)
		}
	}
	// A primary last: its standby would otherwise retry connecting while it stops.
	var errs []error
	for _, last := range []bool{false, true} {
		for _, s := range servers {
			if (s.Kind == "postgres") == last {
				errs = append(errs, s.Stop())
			}
		}
	}
	return errors.Join(errs...)
}

// freePort is FreePort, which a test replaces to hand out a port that is taken.
var freePort = FreePort

// FreePort returns a loopback TCP port that nothing listens on, chosen by the kernel.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
