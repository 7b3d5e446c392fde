package index

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"
)

// fakeLoads is a Load function whose calls the test answers one by one.
type fakeLoads struct {
	calls   chan struct{}
	answers chan error
	version int64
}

func newFakeLoads() *fakeLoads {
	return &fakeLoads{calls: make(chan struct{}), answers: make(chan error)}
}

func (f *fakeLoads) load(ctx context.Context) (*Index, error) {
	select {
	case f.calls <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case err := <-f.answers:
		if err != nil {
			return nil, err
		}
		f.version++
		return &Index{version: f.version}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// expectLoad waits for a call of load and answers it with err.
func (f *fakeLoads) expectLoad(t *testing.T, err error) {
	t.Helper()
	f.expectCall(t)
	f.answers <- err
}

// expectCall waits for a call of load, leaving it unanswered.
func (f *fakeLoads) expectCall(t *testing.T) {
	t.Helper()
	select {
	case <-f.calls:
	case <-time.After(5 * time.Second):
		t.Fatal("no load within 5 s")
	}
}

// expectNoLoad checks that load is not called within d.
func (f *fakeLoads) expectNoLoad(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-f.calls:
		t.Fatalf("a load within %v, want none", d)
	case <-time.After(d):
	}
}

func waitVersion(t *testing.T, k *Keeper, want int64) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if ix := k.Index(); ix != nil && ix.Version() == want {
			return
		}
	}
	t.Fatalf("the keeper's index is %v, want version %d", k.Index(), want)
}

// TestKeeper checks the keeper's loads: one at start, one after Stale, none without Stale,
// one more for any number of Stales during a load, and after a failure a retry, the index
// before it kept meanwhile.
func TestKeeper(t *testing.T) {
	f := newFakeLoads()
	k := NewKeeper(f.load, slog.New(slog.NewTextHandler(io.Discard, nil)))
	k.Gap, k.Retry = 20*time.Millisecond, 50*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { k.Run(ctx); close(done) }()

	if k.Index() != nil {
		t.Fatal("an index before the first load")
	}
	f.expectLoad(t, nil)
	waitVersion(t, k, 1)
	f.expectNoLoad(t, 60*time.Millisecond) // nothing asked

	k.Stale()
	f.expectCall(t)
	k.Stale() // during the load: it may have read before the change
	k.Stale()
	f.answers <- nil
	f.expectLoad(t, nil)
	waitVersion(t, k, 3)
	f.expectNoLoad(t, 60*time.Millisecond) // two Stales during one load: one load more

	k.Stale()
	f.expectLoad(t, errors.New("replica down"))
	f.expectLoad(t, errors.New("still down")) // retried without a Stale
	if v := k.Index().Version(); v != 3 {
		t.Errorf("after failed loads the index is at version %d, want 3 kept", v)
	}
	f.expectLoad(t, nil)
	waitVersion(t, k, 4)

	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
}

// TestKeeperStart checks that Start returns once the first load has ended, successful or
// not, or after its wait when the load takes longer.
func TestKeeperStart(t *testing.T) {
	for _, fail := range []bool{false, true} {
		f := newFakeLoads()
		k := NewKeeper(f.load, slog.New(slog.NewTextHandler(io.Discard, nil)))
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			f.expectCall(t)
			time.Sleep(20 * time.Millisecond)
			if fail {
				f.answers <- errors.New("down")
			} else {
				f.answers <- nil
			}
		}()
		began := time.Now()
		k.Start(ctx, 5*time.Second)
		if d := time.Since(began); d < 20*time.Millisecond || d > 4*time.Second {
			t.Errorf("fail %v: Start returned after %v, want when the load ended (20 ms)", fail, d)
		}
		if got := k.Index() != nil; got == fail {
			t.Errorf("fail %v: an index after Start: %v", fail, got)
		}
		cancel()
	}
	f := newFakeLoads() // never answers
	k := NewKeeper(f.load, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	began := time.Now()
	k.Start(ctx, 30*time.Millisecond)
	if d := time.Since(began); d < 30*time.Millisecond || d > 4*time.Second {
		t.Errorf("Start with a load that does not end returned after %v, want its wait (30 ms)", d)
	}
}
