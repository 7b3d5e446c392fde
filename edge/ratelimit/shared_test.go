package ratelimit

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trainingco/catalogue/edge/ratelimit/redistest"
)

// logBuffer collects log lines written from several goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// count returns how many lines hold s.
func (b *logBuffer) count(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.buf.String(), s)
}

// The timeout leaves room for a machine busy with other tests (a call Redis answers late
// would count as a failure, and a call to a hung Redis may take up to twice the timeout);
// the probe is quick, so that the tests wait little. waitLimit only ends a test whose
// limiter never changes mode.
const (
	testTimeout = time.Second
	testProbe   = 50 * time.Millisecond
	waitLimit   = 20 * time.Second
)

// newTestShared returns a Shared on the Redis at url, probing every testProbe, and its log.
func newTestShared(t *testing.T, url string) (*Shared, *logBuffer) {
	t.Helper()
	r, err := NewRedis(RedisOptions{URL: url, Timeout: testTimeout, Prefix: redistest.Prefix()})
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	s := NewShared(context.Background(), SharedOptions{Redis: r, Local: NewMemory(time.Minute, nil), Probe: testProbe,
		Log: slog.New(slog.NewTextHandler(logs, nil))})
	t.Cleanup(func() { _ = s.Close() })
	return s, logs
}

// allow calls s.Allow and fails the test on an error: Shared decides whatever Redis does.
func allow(t *testing.T, s *Shared, key string, limit int) (Decision, time.Duration) {
	t.Helper()
	start := time.Now()
	d, err := s.Allow(context.Background(), key, limit)
	if err != nil {
		t.Fatalf("Allow(%q, %d): %v", key, limit, err)
	}
	return d, time.Since(start)
}

// waitMode waits for s to be in mode shared.
func waitMode(t *testing.T, s *Shared, shared bool) {
	t.Helper()
	for deadline := time.Now().Add(waitLimit); s.Mode() != shared; {
		if time.Now().After(deadline) {
			t.Fatalf("Mode() still %v %v on, want %v", !shared, waitLimit, shared)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

const (
	logDown = "Redis did not answer"
	logUp   = "Redis answers again"
)

// TestSharedKilledAndRestarted: with Redis gone every call is decided in memory at once,
// the outage is logged once, and once Redis is back (empty, as a restarted Redis without
// persistence is) the limit is shared again.
func TestSharedKilledAndRestarted(t *testing.T) {
	srv := redistest.Start(t)
	s, logs := newTestShared(t, srv.URL)
	if !s.Mode() {
		t.Fatal("Mode() false with Redis up, want shared")
	}
	for i, want := range []bool{true, true, false} {
		if d, _ := allow(t, s, "k", 2); d.Allowed != want {
			t.Fatalf("request %d in Redis: Allowed %v, want %v", i, d.Allowed, want)
		}
	}
	srv.Kill(t)
	// The limiter goes on asking Redis until outageAfter calls in a row have failed, and
	// decides each of them in memory.
	for i := range outageAfter {
		if d, _ := allow(t, s, "m", 5); !d.Allowed || d.Remaining != 4-i || s.Mode() != (i < outageAfter-1) {
			t.Errorf("request %d with Redis gone = %+v, Mode %v; want accepted in memory, %d remaining, shared until the last",
				i, d, s.Mode(), 4-i)
		}
	}
	for range 20 { // decided in memory without asking Redis: Failures stays outageAfter
		allow(t, s, "k2", 100)
	}
	if s.Mode() || s.Failures() != outageAfter || s.Outages() != 1 || logs.count(logDown) != 1 {
		t.Errorf("during the outage: Mode %v, Failures %d, Outages %d, outage logged %d times; want false, %d, 1, 1",
			s.Mode(), s.Failures(), s.Outages(), logs.count(logDown), outageAfter)
	}
	srv.Start(t)
	waitMode(t, s, true)
	if d, _ := allow(t, s, "k", 2); !d.Allowed || d.Remaining != 1 {
		t.Errorf("first request in the restarted Redis = %+v, want accepted with 1 remaining", d)
	}
	if logs.count(logUp) != 1 || s.Outages() != 1 {
		t.Errorf("recovery logged %d times, outages %d; want 1 and 1", logs.count(logUp), s.Outages())
	}
}

// TestSharedHungRedis: a Redis that accepts connections and never answers costs the
// requests of the moment one timeout, and later ones nothing, until it answers again.
func TestSharedHungRedis(t *testing.T) {
	srv := redistest.Start(t)
	s, logs := newTestShared(t, srv.URL)
	allow(t, s, "k", 100)
	srv.Pause(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			// The timeout, and room for a machine busy with other tests.
			if _, took := allow(t, s, "k", 100); took > 2*testTimeout {
				t.Errorf("a request while Redis hung took %s, want about %s", took, testTimeout)
			}
		})
	}
	wg.Wait()
	failed := s.Failures()
	for range 20 {
		allow(t, s, "k", 100)
	}
	if s.Mode() || logs.count(logDown) != 1 || failed < outageAfter || failed > 8 || s.Failures() != failed {
		t.Errorf("while hung: Mode %v, outage logged %d times, Failures %d then %d; want false, once, 3 to 8 and no more",
			s.Mode(), logs.count(logDown), failed, s.Failures())
	}
	srv.Resume(t)
	waitMode(t, s, true)
	// Redis kept its log of k: the request from before, and the requests it had been sent
	// when it hung, which it ran when it resumed although their callers had stopped waiting
	// (their timeouts cannot tell "not run" from "not answered"); none sent after the
	// fallback.
	if d, _ := allow(t, s, "k", 100); !d.Allowed || d.Remaining < 100-1-1-8 || d.Remaining > 100-1-1 {
		t.Errorf("first request after Redis resumed = %+v, want accepted with 90 to 98 remaining", d)
	}
}

// TestSharedStartsWithoutRedis: an edge whose Redis is down at start serves from memory and
// shares once Redis comes up.
func TestSharedStartsWithoutRedis(t *testing.T) {
	srv := redistest.Start(t)
	srv.Stop(t)
	s, logs := newTestShared(t, srv.URL)
	if s.Mode() || logs.count(logDown) != 1 {
		t.Fatalf("started with Redis down: Mode %v, logged %d times; want false and once", s.Mode(), logs.count(logDown))
	}
	if d, _ := allow(t, s, "k", 1); !d.Allowed {
		t.Errorf("first request with Redis down refused, want accepted in memory")
	}
	srv.Start(t)
	waitMode(t, s, true)
	if d, _ := allow(t, s, "k", 1); !d.Allowed {
		t.Errorf("first request in Redis refused, want accepted (memory's count stays in memory)")
	}
}

// TestSharedClosedWhileDown: Close stops the probe of a Redis that never comes back.
func TestSharedClosedWhileDown(t *testing.T) {
	r, err := NewRedis(RedisOptions{URL: "redis://" + closedPort(t) + "/0", Timeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	s := NewShared(context.Background(), SharedOptions{Redis: r, Local: NewMemory(time.Minute, nil), Probe: testProbe,
		Log: slog.New(slog.NewTextHandler(&logBuffer{}, nil))})
	done := make(chan error)
	go func() { done <- s.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatalf("Close did not return within %v", waitLimit)
	}
}
