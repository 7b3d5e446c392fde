package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trainingco/catalogue/builder/webhook"
	"github.com/trainingco/catalogue/builder/webhook/queue"
	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// TestJobSeesAMessageQueuedWhileItEnds: the job ending (pendingLocked, in its finish) waits for
// the lock a queueing holds, and then sees its message, so the job goes on and delivers it.
// Asked in the locking statement, the question was answered from before the queueing
// committed: the job ended, River had skipped the queueing's job as a duplicate of the
// running one, and the message waited for the next change (a CI run's flake of
// TestGivesUpThenDisables: "the healthy endpoint's fifth: not within 15s").
func TestJobSeesAMessageQueuedWhileItEnds(t *testing.T) {
	ctx := context.Background()
	dbURL := testkit.NewDatabase(t)
	if err := queue.Migrate(ctx, dbURL); err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	conn := testkit.Connect(t, dbURL)
	id, _, err := webhook.Add(ctx, conn, webhook.Rules{AllowHTTP: true, AllowPrivate: true}, "http://127.0.0.1:9/hook", "")
	if err != nil {
		t.Fatal(err)
	}

	// The queueing: the endpoint's row locked, the message added, not committed yet.
	queueing, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = queueing.Rollback(ctx) }() // after the commit, a no-op
	if _, err := queueing.Exec(ctx, webhook.SQL(templates.WebhookEnqueue), "msg_1", webhook.TypeChanged, `{}`, "s", nil); err != nil {
		t.Fatal(err)
	}

	// The job ending, in a transaction of its own: it waits for the lock.
	type answer struct {
		pending bool
		err     error
	}
	ended := make(chan answer, 1)
	go func() {
		var a answer
		a.err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			var err error
			a.pending, err = queue.PendingLocked(ctx, tx, id)
			return err
		})
		ended <- a
	}()
	deadline := time.Now().Add(10 * time.Second)
	for waiting := false; !waiting; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the job's transaction never waited for the endpoint's lock")
		}
		err := pool.QueryRow(ctx, `SELECT count(*) > 0 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE%'`).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := queueing.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if a := <-ended; a.err != nil || !a.pending {
		t.Errorf("the job ending after the queueing committed: pending %t (%v), want true: the message would wait for the next change", a.pending, a.err)
	}
}
