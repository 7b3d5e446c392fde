package edge_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestFeedsAfterRollback: a rollback announces, with change numbers above every one
// announced before, every document whose single read it changes (D39). Snapshot A is
// built, the database changed and B built, then the store rolled back to A: a walk from
// B's last next holds exactly the documents that differ between A and B, updated with the
// body the single read serves after the rollback or deleted where it serves none. A build
// after the rollback is announced above it in turn. On both stores.
func TestFeedsAfterRollback(t *testing.T) {
	for name := range testkit.Stores(t) {
		t.Run(name, func(t *testing.T) { testFeedsAfterRollback(t, name) })
	}
}

func testFeedsAfterRollback(t *testing.T, storeName string) {
	b, f := startFeedEdge(t, storeName)
	readsA := f.reads()
	_, lastA := f.walk(feedStarts)
	a := f.snapshot()

	testkit.Exec(t, b.cfg.Database.URL, feedChanges)
	f.build(b)
	f.waitPast(a)
	readsB := f.reads()
	_, lastB := f.walk(lastA)
	bID := f.snapshot()

	if _, err := builder.Rollback(context.Background(), b.cfg, a, nil); err != nil {
		t.Fatalf("roll back to %s: %v", a, err)
	}
	f.waitPast(bID)
	readsR := f.reads()
	if diff := cmp.Diff(readsA, readsR); diff != "" {
		t.Fatalf("single reads after rolling back to A against A's (-A +rolled back):\n%s", diff)
	}
	want := changedReads(readsB, readsR)
	if len(want) < 5 {
		t.Fatalf("A and B differ in only %d single reads: %v", len(want), want)
	}
	got, lastR := f.walk(lastB)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("walk from B's last next after the rollback against the single reads it changed (-reads +feeds):\n%s", diff)
	}
	// From the start: every document served, and tombstones (B's class 60) only of
	// documents not served.
	all, _ := f.walk(feedStarts)
	for key, it := range all {
		if _, served := readsR[key]; it.State == "deleted" && !served {
			delete(all, key)
		}
	}
	if diff := cmp.Diff(readsR, all); diff != "" {
		t.Errorf("walk from the start after the rollback against the single reads (-reads +feeds, deleted ones served):\n%s", diff)
	}

	// The database still holds B's data: the next build serves it again, announced above
	// the rollback's numbers.
	r := f.snapshot()
	f.build(b)
	f.waitPast(r)
	readsC := f.reads()
	if diff := cmp.Diff(readsB, readsC); diff != "" {
		t.Fatalf("single reads of the build after the rollback against B's (-B +C):\n%s", diff)
	}
	got, _ = f.walk(lastR)
	if diff := cmp.Diff(changedReads(readsR, readsC), got); diff != "" {
		t.Errorf("walk from the rollback's last next after the next build against the single reads it changed (-reads +feeds):\n%s", diff)
	}
}
