package webhook_test

import (
	"context"
	"errors"
	"testing"

	"github.com/trainingco/catalogue/builder/webhook"
	"github.com/trainingco/catalogue/builder/webhook/queue"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestAddOneURLOnceAtATime: an add while another add of the same URL is not yet committed
// waits for it, then refuses the URL. Both found no other and both stored theirs, so the
// partner got every message twice (found by a read-only concurrency review).
func TestAddOneURLOnceAtATime(t *testing.T) {
	ctx := context.Background()
	dbURL := testkit.NewDatabase(t)
	if err := queue.Migrate(ctx, dbURL); err != nil {
		t.Fatal(err)
	}
	const url = "http://127.0.0.1:9/hook"
	first := testkit.Connect(t, dbURL)
	tx, err := first.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }() // after the commit, a no-op
	if _, err := tx.Exec(ctx, `INSERT INTO webhook_endpoints (url, description, secret) VALUES ($1, 'first', 'whsec_x')`, url); err != nil {
		t.Fatal(err)
	}
	second := testkit.Connect(t, dbURL) // here: Connect may end the test, which a goroutine must not
	done := make(chan error, 1)
	go func() {
		_, _, err := webhook.Add(ctx, second, webhook.Rules{AllowHTTP: true, AllowPrivate: true}, url, "second")
		done <- err
	}()
	testkit.WaitLockWaiter(t, dbURL, "%") // the second add waits for the first: it did not
	watch := testkit.Connect(t, dbURL)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, webhook.ErrExists) {
		t.Errorf("the second add: %v, want the URL refused as a duplicate", err)
	}
	var n int
	if err := watch.QueryRow(ctx, "SELECT count(*) FROM webhook_endpoints WHERE url = $1", url).Scan(&n); err != nil || n != 1 {
		t.Errorf("%d endpoints at %s (%v), want 1", n, url, err)
	}
}
