package publish

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
)

// stillWall is a wall clock that stands still until slept on, then moves by the time slept:
// a build that gives out its numbers in no time at all, the case waitClock exists for.
type stillWall struct {
	mu sync.Mutex
	t  time.Time
}

func (w *stillWall) Now() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.t
}

func (w *stillWall) Sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.t = w.t.Add(d)
	return ctx.Err()
}

// emptyStore opens a new, empty local store.
func emptyStore(t *testing.T) store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), store.Options{URL: "file://" + t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFeedNumbersAboveAnEmptiedStoreAtOnce: a build whose numbers run ahead of the wall
// clock, published into a store that is then replaced by an empty one at once, still leaves
// the new store's numbers above every old one (D39): the publication is held until the
// clock has passed its last number. The clock stands still while numbers are given out, so
// only that hold can move it on; real time hides the hold behind a few microseconds.
func TestFeedNumbersAboveAnEmptiedStoreAtOnce(t *testing.T) {
	w := &stillWall{t: time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)}
	oldP, newP := newPublisher(emptyStore(t), 10), newPublisher(emptyStore(t), 10)
	oldP.wall, newP.wall = w, w
	old := mustPublish(t, oldP, feedDocs())
	if now := w.Now().UnixMicro(); now < old.Manifest.Feed.Last {
		t.Errorf("published with the clock at %d µs, before its last change number %d", now, old.Manifest.Feed.Last)
	}
	again := mustPublish(t, newP, feedDocs())
	for route, e := range again.Manifest.Documents {
		if _, _, ok := snapshot.FeedRoute(route); ok && e.Modified <= old.Manifest.Feed.Last {
			t.Errorf("%s: change number %d in the new store, not above the old store's last %d", route, e.Modified, old.Manifest.Feed.Last)
		}
	}
}
