package cmdtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Serve is a running builder serve.
type Serve struct {
	Cmd    *exec.Cmd
	logs   *logBuffer
	exited chan struct{}
	err    error
}

// StartServe starts builder serve with the environment of e plus extra. When the test ends
// it is stopped with SIGTERM, and the test fails if it then does not exit 0.
func (e *Env) StartServe(t testing.TB, extra map[string]string) *Serve {
	t.Helper()
	bin, _ := Binaries(t)
	env := &Env{DatabaseURL: e.DatabaseURL, Store: e.Store, Extra: maps.Clone(e.Extra)}
	if env.Extra == nil {
		env.Extra = map[string]string{}
	}
	maps.Copy(env.Extra, extra)
	s := &Serve{Cmd: exec.Command(bin, "serve"), logs: newLogBuffer(), exited: make(chan struct{})}
	s.Cmd.Env = env.Environ()
	s.Cmd.Stdout, s.Cmd.Stderr = s.logs, s.logs
	if err := s.Cmd.Start(); err != nil {
		t.Fatalf("start builder serve: %v", err)
	}
	go func() {
		s.err = s.Cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-s.exited:
			return // the test stopped it and has seen how it ended
		default:
		}
		if err := s.Stop(); err != nil {
			t.Errorf("builder serve: %v\nlogs:\n%s", err, s.Logs())
		}
	})
	return s
}

// Logs returns everything serve has written so far.
func (s *Serve) Logs() string { return s.logs.String() }

// Stop sends SIGTERM and waits, at most stopTimeout, for serve to exit: nil for exit 0.
func (s *Serve) Stop() error {
	select {
	case <-s.exited:
		return s.err
	default:
	}
	_ = s.Cmd.Process.Signal(syscall.SIGTERM) // an error means it has just exited
	select {
	case <-s.exited:
		return s.err
	case <-time.After(stopTimeout):
	}
	_ = s.Cmd.Process.Kill()
	<-s.exited
	return fmt.Errorf("builder serve did not exit within %s and was killed: %w", stopTimeout, s.err)
}

// WaitLog waits, at most within, for n log lines whose msg is msg and for which match
// (nil: any) holds, and returns them.
func (s *Serve) WaitLog(t testing.TB, msg string, n int, within time.Duration, match func(map[string]any) bool) []map[string]any {
	t.Helper()
	deadline := time.After(within)
	for {
		changed := s.logs.changed()
		if got := s.lines(msg, match); len(got) >= n {
			return got
		}
		select {
		case <-changed:
		case <-s.exited:
			t.Fatalf("builder serve exited (%v) waiting for %d %q lines\nlogs:\n%s", s.err, n, msg, s.Logs())
		case <-deadline:
			t.Fatalf("fewer than %d %q lines within %s\nlogs:\n%s", n, msg, within, s.Logs())
		}
	}
}

// Count returns how many log lines have msg.
func (s *Serve) Count(msg string) int { return len(s.lines(msg, nil)) }

// lines returns the JSON log lines with msg that match.
func (s *Serve) lines(msg string, match func(map[string]any) bool) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s.Logs()))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		var l map[string]any
		if json.Unmarshal(sc.Bytes(), &l) == nil && l["msg"] == msg && (match == nil || match(l)) {
			out = append(out, l)
		}
	}
	return out
}
