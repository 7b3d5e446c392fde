package builder

import (
	"sync"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/publish"
	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// steppedClock starts at today and moves one second at every reading (as clock does) and
// by any duration a test advances it.
type steppedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *steppedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

func (c *steppedClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestRunKeepsTombstonesForConfiguredRetention: a build keeps a deleted class's tombstone
// for feeds.retention as configured (D36), not for the default: 30 days configured, the
// tombstone is still in the feed a day after the default 168h would have dropped it.
func TestRunKeepsTombstonesForConfiguredRetention(t *testing.T) {
	cfg := config.Default()
	cfg.Database.URL = testkit.NewMigratedDatabase(t)
	cfg.Store = testkit.NewLocalStore(t)
	cfg.Feeds.Retention = 30 * 24 * time.Hour
	testkit.Exec(t, cfg.Database.URL, fixture)
	age := publish.DefaultRetention + 24*time.Hour // past the default, within the configured
	if age >= cfg.Feeds.Retention {
		t.Fatalf("the tombstone's age %s is not within the configured retention %s", age, cfg.Feeds.Retention)
	}
	clk := &steppedClock{t: today}
	mustRun(t, cfg, clk.Now)
	testkit.Exec(t, cfg.Database.URL, "UPDATE classes SET is_public = FALSE WHERE id = 103")
	deleted := mustRun(t, cfg, clk.Now)
	if !hasTombstone(deleted.Manifest, snapshot.ClassRoute(103)) {
		t.Fatalf("the build after class 103 was hidden has no tombstone for it: %+v", deleted.Manifest.Feed)
	}
	clk.advance(age)
	later := mustRun(t, cfg, clk.Now)
	if !hasTombstone(later.Manifest, snapshot.ClassRoute(103)) {
		t.Errorf("%s after class 103 was hidden, with feeds.retention %s, its tombstone is gone: %+v",
			age, cfg.Feeds.Retention, later.Manifest.Feed)
	}
}

// hasTombstone reports whether m's feed announces route as deleted.
func hasTombstone(m *snapshot.Manifest, route string) bool {
	if m == nil || m.Feed == nil {
		return false
	}
	for _, ts := range m.Feed.Tombstones {
		if ts.Route == route {
			return true
		}
	}
	return false
}
