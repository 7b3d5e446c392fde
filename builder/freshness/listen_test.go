package freshness_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/freshness"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// listener is one builder serve's Listen, recording what it is told.
type listener struct {
	cancel    context.CancelFunc
	done      chan struct{}
	mu        sync.Mutex
	connected []time.Time
	notified  []string
	held      int // ErrLeaseHeld reports
}

func startListener(t *testing.T, dbURL string) *listener {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	l := &listener{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		_ = freshness.Listen(ctx, freshness.ListenOptions{
			URL:       dbURL, // ReconnectDelay left at its default, one second
			Connected: func(freshness.LSN) { l.mu.Lock(); l.connected = append(l.connected, time.Now()); l.mu.Unlock() },
			Notified: func(payload string, _ freshness.LSN, _ time.Time) {
				l.mu.Lock()
				l.notified = append(l.notified, payload)
				l.mu.Unlock()
			},
			LogError: func(err error) {
				if errors.Is(err, freshness.ErrLeaseHeld) {
					l.mu.Lock()
					l.held++
					l.mu.Unlock()
				}
			},
		})
	}()
	t.Cleanup(func() { cancel(); <-l.done })
	return l
}

func (l *listener) state() (connected, notified, held int, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.connected) > 0 {
		at = l.connected[len(l.connected)-1]
	}
	return len(l.connected), len(l.notified), l.held, at
}

// TestOneListenerAtATime (D50): of two builder serves on one database only one listens for
// changes (the other is told the lease is held, and hears nothing); when the listener goes
// away, the other takes over within a second (its retry), with a second of slack for
// connecting on a loaded machine.
func TestOneListenerAtATime(t *testing.T) {
	dbURL := testkit.NewDatabase(t)
	a := startListener(t, dbURL)
	testkit.WaitFor(t, 10*time.Second, "the first listener connects", func() bool { n, _, _, _ := a.state(); return n == 1 })
	b := startListener(t, dbURL)
	testkit.WaitFor(t, 5*time.Second, "the second is told the lease is held", func() bool { _, _, held, _ := b.state(); return held > 0 })

	testkit.Exec(t, dbURL, "SELECT pg_notify('"+freshness.Channel+"', 'course:1')")
	testkit.WaitFor(t, 5*time.Second, "the listener hears the change", func() bool { _, n, _, _ := a.state(); return n == 1 })
	time.Sleep(300 * time.Millisecond)
	if n, heard, _, _ := b.state(); n != 0 || heard != 0 {
		t.Fatalf("the second listener connected %d times and heard %d notifications while the first listened, want 0 and 0", n, heard)
	}

	a.cancel()
	<-a.done
	gone := time.Now()
	testkit.WaitFor(t, 5*time.Second, "the second takes over", func() bool { n, _, _, _ := b.state(); return n == 1 })
	if _, _, _, at := b.state(); at.Sub(gone) > 2*time.Second {
		t.Errorf("the second listener took over %v after the first went away, want within a second (and a second of slack)", at.Sub(gone))
	}
}
