package builder

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/builder/publish"
	"github.com/trainingco/catalogue/builder/snapshot"
)

// TestRunsTakeTurns holds the builder lock, starts two runs, lets both reach the lock, and
// then releases it: both must publish, one entirely after the other.
func TestRunsTakeTurns(t *testing.T) {
	for name, cfg := range newFixture(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			holder, err := pgx.Connect(ctx, cfg.Database.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Close(ctx)
			if _, err := holder.Exec(ctx, embedded().SQL(tplLock), LockName); err != nil {
				t.Fatal(err)
			}

			var mu sync.Mutex
			var events []string // "<run> <phase>" in the order they happened
			waiting := make(chan struct{}, 2)
			results := make([]publish.Result, 2)
			errs := make([]error, 2)
			now := clock()
			var wg sync.WaitGroup
			for i, run := range []string{"A", "B"} {
				wg.Go(func() {
					results[i], errs[i] = Run(ctx, cfg, RunOptions{
						Now:     now,
						Waiting: func() { waiting <- struct{}{} },
						Progress: func(p publish.Progress) {
							if p.Phase == PhaseWaiting {
								return
							}
							mu.Lock()
							defer mu.Unlock()
							if len(events) == 0 || events[len(events)-1] != run+" "+p.Phase {
								events = append(events, run+" "+p.Phase)
							}
						},
					})
				})
			}
			for range 2 {
				select {
				case <-waiting:
				case <-time.After(30 * time.Second):
					t.Fatal("the runs did not wait for the lock held by the test")
				}
			}
			if _, err := holder.Exec(ctx, embedded().SQL(tplUnlock), LockName); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("run %d: %v", i, err)
				}
			}

			// Whichever went first, its phases all come before the other's.
			first, second := "A", "B"
			if events[0][0] == 'B' {
				first, second = "B", "A"
			}
			phases := []string{PhaseReading, PhaseRendering, publish.PhaseHashing, publish.PhaseUploading,
				publish.PhaseManifest, publish.PhasePointer, publish.PhaseCollecting}
			var want []string
			for _, run := range []string{first, second} {
				for _, p := range phases {
					want = append(want, run+" "+p)
				}
			}
			if d := cmp.Diff(want, events); d != "" {
				t.Errorf("phases of the two runs mismatch (-want +got):\n%s", d)
			}

			// The pointer ends at the later snapshot, and both manifests are complete.
			later := slices.Max([]string{results[0].SnapshotID, results[1].SnapshotID})
			if got := currentID(t, cfg); got != later {
				t.Errorf("current = %s, want the later snapshot %s", got, later)
			}
			s := mustOpenStore(t, cfg)
			for _, r := range results {
				m, err := snapshot.ReadManifest(ctx, s, r.SnapshotID)
				if err != nil {
					t.Fatalf("ReadManifest(%s): %v", r.SnapshotID, err)
				}
				for route, e := range m.Documents {
					if _, err := snapshot.ReadDocument(ctx, s, e); err != nil {
						t.Errorf("snapshot %s, %s: %v", r.SnapshotID, route, err)
					}
				}
				if len(m.Documents) != len(routes) {
					t.Errorf("snapshot %s has %d documents, want %d", r.SnapshotID, len(m.Documents), len(routes))
				}
			}
		})
	}
}
