package builder

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/doctor"
	"github.com/trainingco/catalogue/builder/publish"
	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestRunPublishesOnlyPublicData builds the fixture into a store that does not exist yet and
// then reads back every object of the store: none may carry anything of a non-public row
// (D28).
func TestRunPublishesOnlyPublicData(t *testing.T) {
	for name, cfg := range newFixture(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			res := mustRun(t, cfg, clock())
			// 13 documents; the course lists of {Blended, Brick and Mortar} and {Brick and
			// Mortar} are the same bytes, and so are three more pairs, hence 10 objects.
			// The first snapshot of a store announces every public course and class (D36).
			want := publish.Result{SnapshotID: res.SnapshotID, Documents: 13, ObjectsStored: 10, BytesStored: res.BytesStored,
				Feed: publish.FeedChanges{Courses: []int64{1, 2}, Classes: []int64{101, 102, 103}}}
			ignored := cmp.FilterPath(func(p cmp.Path) bool {
				return p.Last().String() == ".Duration" || p.Last().String() == ".Manifest"
			}, cmp.Ignore())
			if diff := cmp.Diff(want, res, ignored); diff != "" {
				t.Errorf("Run result mismatch (-want +got):\n%s", diff)
			}
			s := mustOpenStore(t, cfg)
			m, err := snapshot.ReadCurrent(ctx, s)
			if err != nil {
				t.Fatalf("ReadCurrent: %v", err)
			}
			if diff := cmp.Diff(m, res.Manifest); diff != "" {
				t.Errorf("Run result's manifest mismatch (-stored +returned):\n%s", diff)
			}
			if b := m.Build; b == nil || b.Trigger != snapshot.TriggerRun || b.Incremental || b.Rendered != 13 || b.Changed != 13 || b.Removed != 0 {
				t.Errorf("build record = %+v, want a builder run that rendered and changed 13 documents", b)
			}
			var got []string
			for r := range m.Documents {
				got = append(got, r)
			}
			slices.Sort(got)
			if diff := cmp.Diff(routes, got); diff != "" {
				t.Errorf("published routes mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(snapshot.Counts{Courses: 2, Classes: 3, Documents: 13}, m.Counts); diff != "" {
				t.Errorf("counts mismatch (-want +got):\n%s", diff)
			}
			if m.Today != "2027-03-01" || m.Timezone != "UTC" {
				t.Errorf("manifest today/timezone = %q/%q, want 2027-03-01/UTC", m.Today, m.Timezone)
			}
			assertNoSecrets(t, s, 12) // 10 objects, the manifest and the pointer
		})
	}
}

// assertNoSecrets reads every object of s (there must be n) and fails on any secret.
func assertNoSecrets(t *testing.T, s store.Store, n int) {
	t.Helper()
	ctx := context.Background()
	keys, err := s.List(ctx, "")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(keys) != n {
		t.Errorf("store holds %d objects, want %d: %v", len(keys), n, keys)
	}
	for _, k := range keys {
		b, err := s.Get(ctx, k)
		if err != nil {
			t.Fatalf("Get(%s): %v", k, err)
		}
		for _, secret := range secrets {
			if strings.Contains(string(b), secret) {
				t.Errorf("object %s contains %q of a non-public row:\n%s", k, secret, b)
			}
		}
	}
}

func TestRunStoresOnlyWhatChanged(t *testing.T) {
	tests := []struct {
		name   string
		change string
		want   int // objects stored by the run after the change
	}{
		{"nothing", "", 0},
		// The course's own document only: lists and popular carry no description.
		{"one course description", "UPDATE courses SET description = '<p>Learn Go fast</p>' WHERE id = 1", 1},
		// Class 102's document, and its cost as course 2's upcoming class in the lists of
		// every type set with Brick and Mortar (two distinct bodies) and in popular.
		{"one class cost", "UPDATE classes SET cost = cost + 1 WHERE id = 102", 4},
		// Nothing public changes.
		{"a non-public class", "UPDATE classes SET cost = cost + 1 WHERE id = 777002", 0},
	}
	for name, cfg := range newFixture(t) {
		t.Run(name, func(t *testing.T) {
			now := clock()
			mustRun(t, cfg, now)
			for _, tt := range tests {
				if tt.change != "" {
					testkit.Exec(t, cfg.Database.URL, tt.change)
				}
				res := mustRun(t, cfg, now)
				if res.ObjectsStored != tt.want {
					t.Errorf("after %s changed: %d objects stored, want %d", tt.name, res.ObjectsStored, tt.want)
				}
			}
		})
	}
}

func TestRunGuardRefusesShrinkUnlessForced(t *testing.T) {
	for name, cfg := range newFixture(t) {
		t.Run(name, func(t *testing.T) {
			now := clock()
			first := mustRun(t, cfg, now)
			// Public classes fall from 3 to 1: more than builder.max_shrink (0.5).
			testkit.Exec(t, cfg.Database.URL, "UPDATE classes SET is_public = FALSE WHERE id IN (102, 103)")
			_, err := Run(context.Background(), cfg, RunOptions{Now: now})
			if !errors.Is(err, publish.ErrShrink) || !strings.Contains(err.Error(), "from 3 to 1") {
				t.Fatalf("Run after the shrink = %v, want ErrShrink naming 3 and 1", err)
			}
			if got := currentID(t, cfg); got != first.SnapshotID {
				t.Errorf("refused run moved the pointer to %s", got)
			}
			forced, err := Run(context.Background(), cfg, RunOptions{Now: now, Force: true})
			if err != nil {
				t.Fatalf("forced Run: %v", err)
			}
			if got := currentID(t, cfg); got != forced.SnapshotID {
				t.Errorf("forced run: current = %s, want %s", got, forced.SnapshotID)
			}
		})
	}
}

func TestRunFailurePublishesNothing(t *testing.T) {
	for name, cfg := range newFixture(t) {
		t.Run(name, func(t *testing.T) {
			first := mustRun(t, cfg, clock())
			dir := t.TempDir()
			broken := "-- classes.sql: a template that no longer matches the schema\nSELECT id FROM no_such_table\n"
			if err := os.WriteFile(filepath.Join(dir, "classes.sql"), []byte(broken), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg.Templates.Dir = dir
			if _, err := Run(context.Background(), cfg, RunOptions{Now: clock()}); err == nil || !strings.Contains(err.Error(), "no_such_table") {
				t.Fatalf("Run with a broken template = %v, want an error naming no_such_table", err)
			}
			if got := currentID(t, cfg); got != first.SnapshotID {
				t.Errorf("failed run moved the pointer to %s", got)
			}
			keys, err := mustOpenStore(t, cfg).List(context.Background(), snapshot.ManifestPrefix)
			if err != nil || len(keys) != 1 {
				t.Errorf("manifests after a failed run = %v, %v; want the first one only", keys, err)
			}
		})
	}
}

func currentID(t *testing.T, cfg config.Config) string {
	t.Helper()
	ptr, err := snapshot.ReadPointer(context.Background(), mustOpenStore(t, cfg))
	if err != nil {
		t.Fatalf("ReadPointer: %v", err)
	}
	return ptr.ID
}

// TestRunRefusesAMappingOffContract: a build refuses a mapping whose view gives a column a
// type the contract does not accept, as builder doctor does, and publishes nothing: a
// provider's timestamptz start date was published as its UTC date ("2027-07-09" for a class
// starting at 00:30 in London on the 10th), with doctor failing and run going ahead.
func TestRunRefusesAMappingOffContract(t *testing.T) {
	cfg := config.Default()
	cfg.Database.URL = testkit.NewMigratedDatabase(t)
	cfg.Store = testkit.NewLocalStore(t)
	testkit.Exec(t, cfg.Database.URL, fixture+`DROP VIEW catalogue_classes; CREATE VIEW catalogue_classes AS
		SELECT id, course_id, room_id, start_date::timestamptz AS start_date, end_date, schedule, cost, seat_limit, down_payment, is_public FROM classes`)
	_, err := Run(context.Background(), cfg, RunOptions{Logger: slog.New(slog.DiscardHandler)})
	if want := "start_date is timestamp with time zone, not a date"; !errors.Is(err, doctor.ErrContract) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Run over a timestamptz start_date: %v, want doctor.ErrContract naming %q", err, want)
	}
	if _, err := snapshot.ReadPointer(context.Background(), mustOpenStore(t, cfg)); !errors.Is(err, snapshot.ErrNoSnapshot) {
		t.Errorf("after the refused run the store's pointer: %v, want none", err)
	}
}

// TestRunTakesTodayInTheZone (D1): "today" is the date in the configured time zone, not in
// UTC: at 12:00 UTC on 1 March it is already 2 March in Kiritimati (UTC+14). The other
// tests run where both dates agree, so a builder reading UTC passed them all.
func TestRunTakesTodayInTheZone(t *testing.T) {
	cfg := newFixture(t)["local"]
	cfg.Timezone = "Pacific/Kiritimati"
	res := mustRun(t, cfg, clock())
	if m := res.Manifest; m.Today != "2027-03-02" || m.Timezone != "Pacific/Kiritimati" {
		t.Errorf("manifest today/timezone = %q/%q, want 2027-03-02/Pacific/Kiritimati", m.Today, m.Timezone)
	}
}
