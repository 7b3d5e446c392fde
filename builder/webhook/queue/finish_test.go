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

// TestJobSeesAMessageQueuedWhileItEnds: the job ending (ending, in its finish) waits for
// the lock a queueing holds, and then sees its message, so the job goes on and delivers
// it. Asked in the locking statement, the question was answered from before the queueing
// committed: the job ended, River had skipped the queueing's job as a duplicate of the
// running one, and the message waited for the next change (a CI run's flake of
// TestGivesUpThenDisables: "the healthy endpoint's fifth: not within 15s").
func TestJobSeesAMessageQueuedWhileItEnds(t *testing.T) {
	dbURL, pool, id := queueingRace(t)
	if ends := endsWhileQueueing(t, dbURL, pool, id, 0); ends {
		t.Error("the job ending after the queueing committed found nothing pending: the message would wait for the next change")
	}
}

// TestJobSeesAnEnableWhileItEnds: a job that found its endpoint disabled ends only under
// the endpoint's lock, so an admin's enable and a message queued since are seen, and the
// job goes on to deliver it. It ended on what it had read before the lock: River had
// skipped the queueing's job as a duplicate of the running one, and the message waited
// for the next change (found by a read-only concurrency review).
func TestJobSeesAnEnableWhileItEnds(t *testing.T) {
	dbURL, pool, id := queueingRace(t)
	if _, err := pool.Exec(context.Background(), "UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = 'test' WHERE id = $1", id); err != nil {
		t.Fatal(err)
	}
	if ends := endsWhileQueueing(t, dbURL, pool, id, id); ends {
		t.Error("the job ending after an enable and a queueing committed ended: the message would wait for the next change")
	}
}

// endsWhileQueueing asks whether endpoint id's job ends (queue.Ending) while a queueing
// holds its row, having enabled endpoint enable first unless it is 0 (whileQueueing).
func endsWhileQueueing(t *testing.T, dbURL string, pool *pgxpool.Pool, id, enable int64) bool {
	t.Helper()
	var ends bool
	whileQueueing(t, dbURL, pool, enable, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			var err error
			ends, err = queue.Ending(ctx, tx, id)
			return err
		})
	})
	return ends
}

// TestDisableGivesUpAMessageQueuedMeanwhile: disabling an endpoint waits for the lock a
// queueing holds, and then gives up its message too. In one statement it missed it: the
// message stayed pending on the disabled endpoint and went first after builder webhook
// enable, although enable says those queued before were given up (found by a read-only
// concurrency review).
func TestDisableGivesUpAMessageQueuedMeanwhile(t *testing.T) {
	dbURL, pool, id := queueingRace(t)
	since := failing(t, pool, id)
	whileQueueing(t, dbURL, pool, 0, func(ctx context.Context) error {
		conn, err := pool.Acquire(ctx)
		if err != nil {
			return err
		}
		defer conn.Release()
		_, err = queue.Disable(ctx, conn, id, "failing since the test began", since)
		return err
	})
	var disabled bool
	var pending int
	err := pool.QueryRow(context.Background(), `SELECT e.disabled_at IS NOT NULL,
		(SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.delivered_at IS NULL AND d.given_up_at IS NULL)
		FROM webhook_endpoints e WHERE e.id = $1`, id).Scan(&disabled, &pending)
	if err != nil || !disabled || pending != 0 {
		t.Errorf("after the disable: disabled %t, %d deliveries pending (%v); want disabled and none", disabled, pending, err)
	}
}

// TestDisableLeavesAnEnabledEndpoint: an endpoint an admin enabled again after its failure
// was recorded, and before the delivery job disabled it, stays enabled: the job read when
// its failures began, then disabled it in another statement, undoing the enable (found by
// a read-only concurrency review).
func TestDisableLeavesAnEnabledEndpoint(t *testing.T) {
	_, pool, id := queueingRace(t)
	since := failing(t, pool, id)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, webhook.SQL(templates.WebhookEnable), id); err != nil {
		t.Fatal(err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	disabled, err := queue.Disable(ctx, conn, id, "failing since the test began", since)
	var off bool
	if err == nil {
		err = pool.QueryRow(ctx, "SELECT disabled_at IS NOT NULL FROM webhook_endpoints WHERE id = $1", id).Scan(&off)
	}
	if err != nil || disabled || off {
		t.Errorf("disabling an endpoint enabled meanwhile: disabled %t, off %t (%v); want it left enabled", disabled, off, err)
	}
}

// failing records that endpoint id has been failing since a while ago, as webhook_failed.sql
// does, and returns since when.
func failing(t *testing.T, pool *pgxpool.Pool, id int64) time.Time {
	t.Helper()
	var since time.Time
	err := pool.QueryRow(context.Background(), `UPDATE webhook_endpoints
		SET consecutive_failures = 3, failing_since = now() - interval '6 days' WHERE id = $1
		RETURNING failing_since`, id).Scan(&since)
	if err != nil {
		t.Fatal(err)
	}
	return since
}

// queueingRace returns a database with the webhook tables and one endpoint: its URL, a
// pool on it and the endpoint's id.
func queueingRace(t *testing.T) (string, *pgxpool.Pool, int64) {
	t.Helper()
	dbURL, pool := newDatabase(t)
	id, _ := addEndpoint(t, dbURL, "http://127.0.0.1:9/hook")
	return dbURL, pool, id
}

// whileQueueing runs action while a queueing holds the endpoints' rows (webhook_enqueue.sql,
// its message added, not committed), commits the queueing once action waits for a lock,
// and returns when action has. Unless enable is 0, the queueing's transaction first enables
// that endpoint (webhook_enable.sql), as an admin's enable committed just before would.
func whileQueueing(t *testing.T, dbURL string, pool *pgxpool.Pool, enable int64, action func(context.Context) error) {
	t.Helper()
	ctx := context.Background()
	queueing, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = queueing.Rollback(ctx) }() // after the commit, a no-op
	if enable != 0 {
		if _, err := queueing.Exec(ctx, webhook.SQL(templates.WebhookEnable), enable); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := queueing.Exec(ctx, webhook.SQL(templates.WebhookEnqueue), "msg_1", webhook.TypeChanged, `{}`, "s", nil); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- action(ctx) }()
	testkit.WaitLockWaiter(t, dbURL, "%")
	if err := queueing.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
