package testkit

import (
	"context"
	"testing"
	"time"
)

// WaitFor polls cond every 20 ms for at most d, failing t with what when it never holds.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitLockWaiter waits, at most 10 s, until a session of dbURL's database whose query is
// LIKE like waits for a lock (pg_stat_activity): a test forcing one interleaving of two
// transactions lets the first commit only once the second waits for it.
func WaitLockWaiter(t testing.TB, dbURL, like string) {
	t.Helper()
	watch := Connect(t, dbURL)
	WaitFor(t, 10*time.Second, "a session waiting for a lock", func() bool {
		var waiting bool
		err := watch.QueryRow(context.Background(), `SELECT count(*) > 0 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`, like).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		return waiting
	})
}
