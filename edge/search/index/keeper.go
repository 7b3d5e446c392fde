package index

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// Keeper keeps the search's current Index. It loads one when it starts, and again whenever
// a search reports that the database has moved to another version (Stale): one load at a
// time, at most one per Gap, so that a stream of changes costs the replica at most about one
// read of the catalogue's classes per Gap. A load that fails is retried after Retry, and the
// index before it stays in use: an outdated index is harmless, as a search checks the
// version before using it.
type Keeper struct {
	Load  func(context.Context) (*Index, error)
	Log   *slog.Logger
	Gap   time.Duration // between the starts of two loads
	Retry time.Duration // after a failed load

	current atomic.Pointer[Index]
	wake    chan struct{}
	tried   chan struct{} // closed when the first load has ended
}

// NewKeeper returns a Keeper loading with load, with a Gap of one second and a Retry of 10
// seconds. Nothing is loaded until Run.
func NewKeeper(load func(context.Context) (*Index, error), log *slog.Logger) *Keeper {
	return &Keeper{Load: load, Log: log, Gap: time.Second, Retry: 10 * time.Second,
		wake: make(chan struct{}, 1), tried: make(chan struct{})}
}

// Start runs the keeper in the background until ctx is done, and returns when its first
// load has ended, or after wait.
func (k *Keeper) Start(ctx context.Context, wait time.Duration) {
	go k.Run(ctx)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-k.tried:
	case <-t.C:
	case <-ctx.Done():
	}
}

// Index returns the current index: nil until the first load succeeds.
func (k *Keeper) Index() *Index { return k.current.Load() }

// Stale asks for a new index: a search found the database at a version other than the
// current index's. It never blocks.
func (k *Keeper) Stale() {
	select {
	case k.wake <- struct{}{}:
	default: // a load is asked for already
	}
}

// Run loads the index, then again each time Stale is called, until ctx is done. Call it
// once.
func (k *Keeper) Run(ctx context.Context) {
	failing, first := false, true
	for {
		began := time.Now()
		ix, err := k.Load(ctx)
		next := k.Gap
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			if !failing {
				k.Log.Warn("search index: load failed; searches run in the database alone until it loads", "error", err, "retry", k.Retry)
			}
			failing, next = true, k.Retry
		default:
			if failing {
				k.Log.Info("search index: loaded again", "version", ix.Version())
			}
			failing = false
			k.current.Store(ix)
		}
		if first {
			close(k.tried)
			first = false
		}
		if !k.wait(ctx, began, next, failing) {
			return
		}
	}
}

// wait returns when the next load is due: after Stale, but not before gap has passed since
// began; or, after a failure, at began + gap whatever is asked. The load to come answers
// every Stale until then; one during it asks for another. It returns false when ctx is
// done.
func (k *Keeper) wait(ctx context.Context, began time.Time, gap time.Duration, failing bool) bool {
	t := time.NewTimer(time.Until(began.Add(gap)))
	defer t.Stop()
	if !failing {
		select {
		case <-k.wake:
		case <-ctx.Done():
			return false
		}
	}
	select {
	case <-t.C:
	case <-ctx.Done():
		return false
	}
	select {
	case <-k.wake:
	default:
	}
	return true
}
