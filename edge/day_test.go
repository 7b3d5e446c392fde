package edge

import (
	"context"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/config"
)

// TestStaleDayReported: when builds fail or are refused past midnight, the snapshot's
// upcoming_class and can_register describe an earlier day than the one the search uses.
// The edge compares the snapshot's day with its own "today" (D1, in edge's timezone),
// exports both, and warns once per snapshot and day: at the swap, and when its own day
// turns under a snapshot that stays.
func TestStaleDayReported(t *testing.T) {
	env := newAuthEnv(t, func(c *config.Config) { c.Timezone = "America/Chicago" })
	// authT0 is 2030-01-01 00:00 UTC: 2029-12-31 in Chicago.
	env.clock.at(0)
	check := func(step string, wantBehind float64, wantWarnings int) {
		t.Helper()
		got := flatten(scrape(t, env), "catalogue_edge_snapshot_day")
		want := map[string]float64{
			`catalogue_edge_snapshot_day_timestamp_seconds{}`: float64(time.Date(2029, 12, 31, 0, 0, 0, 0, time.UTC).Unix()),
			`catalogue_edge_snapshot_days_behind{}`:           wantBehind,
		}
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Errorf("%s: day metrics mismatch (-want +got):\n%s", step, diff)
		}
		if n := strings.Count(env.logs.String(), "built for an earlier day"); n != wantWarnings {
			t.Errorf("%s: %d warnings of a stale day, want %d\n%s", step, n, wantWarnings, env.logs.String())
		}
	}
	// The env's first snapshot, of 2027-03-01, was warned about when it was loaded.
	reload(t, env, fixture{id: "snap-dec31", today: "2029-12-31", docs: map[string]string{"/public/course/1": authCourse}})
	check("snapshot of today", 0, 1)
	env.clock.at(20 * time.Hour) // 2030-01-01 14:00 in Chicago, and the snapshot stays
	env.s.days.check(env.s.docs.Current())
	env.s.days.check(env.s.docs.Current())
	check("a day later", 1, 2)
	env.clock.at(44 * time.Hour)
	env.s.days.check(env.s.docs.Current())
	check("two days later", 2, 3)
}

// reload publishes f into the env's store and makes the server load it now.
func reload(t *testing.T, env *authEnv, f fixture) {
	t.Helper()
	publish(t, env.s.opts.Store, f)
	if err := env.s.docs.Refresh(context.Background()); err != nil {
		t.Fatalf("load %s: %v", f.id, err)
	}
}

// TestZoneMismatchReported: builder and edge must agree on timezone (D1). A snapshot built
// for another zone than the edge's gives static documents whose "today" is the builder's
// while the search uses the edge's, for hours a day and silently: the edge warns, once per
// snapshot.
func TestZoneMismatchReported(t *testing.T) {
	env := newAuthEnv(t, func(c *config.Config) { c.Timezone = "America/Chicago" })
	warnings := func() int { return strings.Count(env.logs.String(), "built for another time zone") }
	reload(t, env, fixture{id: "snap-chicago", timezone: "America/Chicago", docs: map[string]string{"/public/course/1": authCourse}})
	before := warnings() // the env's first snapshot says UTC
	env.s.days.check(env.s.docs.Current())
	if n := warnings(); n != before {
		t.Errorf("a snapshot of the edge's zone: %d more warnings, want none\n%s", n-before, env.logs.String())
	}
	reload(t, env, fixture{id: "snap-paris", timezone: "Europe/Paris", docs: map[string]string{"/public/course/1": authCourse}})
	env.s.days.check(env.s.docs.Current())
	env.s.days.check(env.s.docs.Current())
	if n := warnings(); n != before+1 || !strings.Contains(env.logs.String(), `"snapshot_timezone":"Europe/Paris","timezone":"America/Chicago"`) {
		t.Errorf("a snapshot of Europe/Paris on an edge of America/Chicago: %d warnings, want one naming both zones\n%s", n-before, env.logs.String())
	}
}
