package builder

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/builder/publish"
	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/scripts/testkit"
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

// TestLostLockPublishesNothing: builder A's lock session dies (its backend terminated, as an
// idle timeout, a failover or a pooler would) after A wrote its manifest and before its
// pointer, and builder B, which then gets the lock, publishes and collects. A must not
// publish, and B's collection must not delete A's young manifest or the objects it names:
// every manifest in the store stays whole and the current snapshot is B's.
func TestLostLockPublishesNothing(t *testing.T) {
	for name, cfg := range newFixture(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			now := clock()
			first := mustRun(t, cfg, now)
			testkit.Exec(t, cfg.Database.URL, "UPDATE classes SET cost = cost + 1 WHERE id = 102")

			atPointer, resume := make(chan struct{}), make(chan struct{})
			var resA publish.Result
			var errA error
			done := make(chan struct{})
			go func() {
				defer close(done)
				resA, errA = Run(ctx, cfg, RunOptions{Now: now, Progress: func(p publish.Progress) {
					if p.Phase == publish.PhasePointer {
						close(atPointer)
						<-resume
					}
				}})
			}()
			select {
			case <-atPointer:
			case <-done:
				t.Fatalf("run A ended before its pointer: %v", errA)
			}
			terminateLockHolder(t, cfg.Database.URL)
			// B renders the first snapshot's documents again: A's new objects are used by no
			// published snapshot, so a collection that trusted only published ones drops them.
			testkit.Exec(t, cfg.Database.URL, "UPDATE classes SET cost = cost - 1 WHERE id = 102")
			resB := mustRun(t, cfg, now)
			close(resume)
			<-done

			if errA == nil || !strings.Contains(errA.Error(), "builder lock") {
				t.Errorf("run A after losing its lock = %+v, %v; want an error saying the builder lock was lost", resA, errA)
			}
			if got := currentID(t, cfg); got != resB.SnapshotID {
				t.Errorf("current = %s, want B's snapshot %s (first %s)", got, resB.SnapshotID, first.SnapshotID)
			}
			s := mustOpenStore(t, cfg)
			keys, err := s.List(ctx, snapshot.ManifestPrefix)
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) != 3 {
				t.Errorf("manifests = %v, want 3: the first, A's (younger than the grace period) and B's", keys)
			}
			for _, k := range keys {
				m, err := snapshot.ReadManifest(ctx, s, snapshot.IDFromManifestKey(k))
				if err != nil {
					t.Errorf("ReadManifest(%s): %v", k, err)
					continue
				}
				for route, e := range m.Documents {
					if _, err := snapshot.ReadDocument(ctx, s, e); err != nil {
						t.Errorf("snapshot %s, %s: %v", m.ID, route, err)
					}
				}
			}
		})
	}
}

// terminateLockHolder ends the backend that holds the builder lock in dbURL's database.
func terminateLockHolder(t *testing.T, dbURL string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	err = conn.QueryRow(ctx, `
SELECT count(pg_terminate_backend(pid)) FROM pg_locks
WHERE locktype = 'advisory' AND granted
  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&n)
	if err != nil || n != 1 {
		t.Fatalf("terminate the lock holder: %d terminated, %v; want 1", n, err)
	}
}
