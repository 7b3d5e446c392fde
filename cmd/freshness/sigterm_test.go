package freshness

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestSIGTERMNeverHalfPublishes stops builder serve with SIGTERM at random moments while
// changes are being committed every 15 ms, so that it is building, often in the middle of
// publishing one: each time it exits 0 and the store's current snapshot is whole (every
// document its manifest names is there and matches its hash). A serve started afterwards
// publishes the last committed state.
func TestSIGTERMNeverHalfPublishes(t *testing.T) {
	st := testkit.NewLocalStore(t)
	e := install(t, st, testkit.Reference())
	e.Extra["CATALOGUE_BUILDER_DEBOUNCE"], e.Extra["CATALOGUE_BUILDER_MAX_DELAY"] = "0s", "50ms"
	r := rand.New(rand.NewPCG(11, 12))
	interrupted := 0
	for i := range 5 {
		serve := e.StartServe(t, nil)
		serve.WaitLog(t, "published snapshot", 1, time.Minute, nil)
		stop := commitEvery(t, e.DatabaseURL, 15*time.Millisecond)
		time.Sleep(time.Duration(50+r.IntN(400)) * time.Millisecond)
		err := serve.Stop()
		stop()
		if err != nil {
			t.Fatalf("stop %d: builder serve exited with %v\nlogs:\n%s", i+1, err, serve.Logs())
		}
		id := checkWhole(t, st)
		builds := len(serve.WaitLog(t, "published snapshot", 1, time.Second, nil))
		cut := serve.Count("build interrupted by shutdown; nothing was published")
		interrupted += cut
		t.Logf("stop %d: %d builds published, %d interrupted; %s current and whole", i+1, builds, cut, id)
	}
	if interrupted == 0 {
		t.Errorf("no SIGTERM came during a build: the test checked nothing it means to")
	}
	serve := e.StartServe(t, nil)
	want := classCost(t, e.DatabaseURL)
	deadline := time.Now().Add(time.Minute)
	for cost := storedCost(t, st); cost != want; cost = storedCost(t, st) {
		if time.Now().After(deadline) {
			t.Fatalf("class 11 costs %d in the store, %d in the database, a minute after restarting\nlogs:\n%s", cost, want, serve.Logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// commitEvery raises class 11's cost every interval until the returned stop is called.
func commitEvery(t *testing.T, dbURL string, interval time.Duration) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(interval):
				testkit.Exec(t, dbURL, `UPDATE classes SET cost = cost + 1 WHERE id = 11`)
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// checkWhole fails the test unless the store's current snapshot is whole, and returns its id.
func checkWhole(t *testing.T, cfg config.Store) string {
	t.Helper()
	ctx := context.Background()
	st := openStore(t, cfg)
	m, err := snapshot.ReadCurrent(ctx, st)
	if err != nil {
		t.Fatalf("read the current snapshot: %v", err)
	}
	for route, e := range m.Documents {
		if _, err := snapshot.ReadDocument(ctx, st, e); err != nil {
			t.Fatalf("snapshot %s is not whole: %s: %v", m.ID, route, err)
		}
	}
	return m.ID
}

// storedCost returns the cost class 11's document shows in the store's current snapshot.
func storedCost(t *testing.T, cfg config.Store) int64 {
	t.Helper()
	ctx := context.Background()
	st := openStore(t, cfg)
	m, err := snapshot.ReadCurrent(ctx, st)
	if err != nil {
		t.Fatalf("read the current snapshot: %v", err)
	}
	b, err := snapshot.ReadDocument(ctx, st, m.Documents[snapshot.ClassRoute(11)])
	if err != nil {
		t.Fatalf("read class 11: %v", err)
	}
	var doc struct{ Cost int64 }
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("decode class 11: %v", err)
	}
	return doc.Cost
}

func openStore(t *testing.T, cfg config.Store) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), store.Options(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return st
}
