package queue

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/trainingco/catalogue/builder/webhook"
	"github.com/trainingco/catalogue/templates"
)

// lockClass is the first key of the per-endpoint advisory locks ("wh" in ASCII); the
// endpoint's id is the second.
const lockClass = 0x7768

// worker delivers one endpoint's messages in order.
type worker struct {
	river.WorkerDefaults[deliverArgs]
	q      *Queue
	sender *webhook.Sender
}

// delivery is one message to send to one endpoint (webhook_head.sql).
type delivery struct {
	id              int64
	messageID, body string
	snapshot        *string
	noticed         *time.Time
	created         time.Time
	attempts        int
	firstAttempt    *time.Time
	nextAttempt     time.Time
}

// Work sends the endpoint's messages, oldest first, until none is left, a failure makes
// the next wait, or its time is up (then it runs again at once).
func (w *worker) Work(ctx context.Context, job *river.Job[deliverArgs]) error {
	id := job.Args.Endpoint
	conn, err := w.q.opts.Pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	var locked bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, $2)", lockClass, int32(id)).Scan(&locked); err != nil {
		return err
	}
	if !locked { // a job rescued from a builder that is slow, not dead: it goes on delivering
		return river.JobSnooze(time.Second)
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1, $2)", lockClass, int32(id)); err != nil {
			conn.Conn().Close(context.WithoutCancel(ctx)) // the session goes, and its lock with it
		}
	}()
	// A run ends well before webhooks.stuck_after, when River would take it as abandoned:
	// its last delivery starts at the latest half-way between, and takes at most the timeout.
	until := time.Now().Add((w.q.opts.Config.StuckAfter - w.q.opts.Config.Timeout) / 2)
	for {
		next, err := w.step(ctx, conn, job, until)
		if err != nil || !next {
			return err
		}
	}
}

// step makes the endpoint's next delivery on conn, the connection holding its lock (one
// connection per delivery in flight); it says whether to go on.
func (w *worker) step(ctx context.Context, conn *pgxpool.Conn, job *river.Job[deliverArgs], until time.Time) (bool, error) {
	id := job.Args.Endpoint
	ep, err := webhook.Load(ctx, conn, id)
	if err != nil && !errors.Is(err, webhook.ErrNotFound) {
		return false, err
	}
	var d delivery
	ok := false // removed, disabled or nothing to deliver: finish decides under the lock
	if err == nil && !ep.Disabled {
		if d, ok, err = w.head(ctx, conn, id); err != nil {
			return false, err
		}
	}
	if !ok {
		done, err := w.finish(ctx, conn, job)
		return !done, err
	}
	if wait := time.Until(d.nextAttempt); wait > 0 {
		return false, river.JobSnooze(wait)
	}
	if time.Now().After(until) {
		return false, river.JobSnooze(0)
	}
	if d.snapshot != nil && w.q.opts.Served != nil {
		if served := w.waitServed(ctx, d, until); !served {
			return false, river.JobSnooze(0) // its time is up: waits on in its next run
		}
	}
	res := w.sender.Send(ctx, ep.URL, ep.Secrets, webhook.Message{ID: d.messageID, Body: []byte(d.body)})
	if res.Err == nil {
		return true, w.delivered(ctx, conn, id, d)
	}
	return w.failed(ctx, conn, id, d, res.Err)
}

// head reads the endpoint's oldest delivery not yet made.
func (w *worker) head(ctx context.Context, conn *pgxpool.Conn, id int64) (delivery, bool, error) {
	var d delivery
	err := conn.QueryRow(ctx, webhook.SQL(templates.WebhookHead), id).Scan(&d.id, &d.messageID, &d.body,
		&d.snapshot, &d.noticed, &d.created, &d.attempts, &d.firstAttempt, &d.nextAttempt)
	if errors.Is(err, pgx.ErrNoRows) {
		return d, false, nil
	}
	return d, err == nil, err
}

// disable disables endpoint, failing since failingSince, and gives up its deliveries not yet
// made, once it holds the endpoint's row (webhook_head_lock.sql), in a statement after the
// lock's: one statement both waiting for a queueing's lock and giving up the deliveries
// missed the message that queueing added, left pending on a disabled endpoint and sent
// first after an enable. It says whether it disabled the endpoint: not when an admin
// enabled it since its failure was recorded (the failing_since read is gone).
func disable(ctx context.Context, conn *pgxpool.Conn, endpoint int64, why string, failingSince time.Time) (bool, error) {
	disabled := false
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if exists, err := lockEndpoint(ctx, tx, endpoint); err != nil || !exists {
			return err
		}
		var id int64
		err := tx.QueryRow(ctx, webhook.SQL(templates.WebhookDisable), endpoint, why, failingSince).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		disabled = err == nil
		return err
	})
	return disabled, err
}

// ending says whether endpoint's job ends: when the endpoint is gone, disabled, or has no
// delivery to make. It locks the endpoint's row first, then asks in statements of their
// own (webhook_head_lock.sql says why): asked in the locking statement, a message whose
// queueing held the lock was not seen, the job ended, and the message waited for the next
// change; asked before the lock, an endpoint an admin enabled and a change queued for
// while the job ended had the same fate.
func ending(ctx context.Context, tx pgx.Tx, endpoint int64) (bool, error) {
	if exists, err := lockEndpoint(ctx, tx, endpoint); err != nil || !exists {
		return true, err
	}
	ep, err := webhook.Load(ctx, tx, endpoint)
	if err != nil || ep.Disabled {
		return true, err
	}
	rows, err := tx.Query(ctx, webhook.SQL(templates.WebhookHead), endpoint)
	if err != nil {
		return false, err
	}
	pending := rows.Next()
	rows.Close()
	return !pending, rows.Err()
}

// lockEndpoint locks endpoint's row for the rest of tx (webhook_head_lock.sql); false when
// the endpoint is gone.
func lockEndpoint(ctx context.Context, tx pgx.Tx, endpoint int64) (bool, error) {
	var id int64
	err := tx.QueryRow(ctx, webhook.SQL(templates.WebhookHeadLock), endpoint).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// finish completes the job if it ends (ending), in a transaction holding the endpoint's
// row (webhook_head_lock.sql), so that a message queued meanwhile is either seen here or
// queues a new job. It says whether the job is done.
func (w *worker) finish(ctx context.Context, conn *pgxpool.Conn, job *river.Job[deliverArgs]) (bool, error) {
	done := false
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		ends, err := ending(ctx, tx, job.Args.Endpoint)
		if err != nil || !ends {
			return err
		}
		done = true
		_, err = river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		return err
	})
	return done, err
}

// waitServed waits until the edges serve d's snapshot, and at most until until (the job
// then snoozes and its next run waits on). A delivery is never sent before (D42): an edge
// still reporting an older snapshot holds every delivery back, and once the message has
// waited webhooks.edge_wait that is logged and counted, once per message (q.waited).
func (w *worker) waitServed(ctx context.Context, d delivery, until time.Time) bool {
	warnAt := d.created.Add(w.q.opts.Config.EdgeWait)
	for {
		ok, err := w.q.opts.Served.Serves(ctx, *d.snapshot, d.created)
		if ok {
			return true
		}
		now := time.Now()
		if now.After(warnAt) && w.q.waited.first(d.messageID, now) {
			w.q.opts.Metrics.edgeWaitTimeouts.Inc()
			w.q.opts.Logger.Warn("the edges do not serve the snapshot a webhook announces within webhooks.edge_wait; "+
				"its deliveries wait on until every edge reporting in Redis serves it (an edge that stops reporting holds nothing back)",
				"snapshot", *d.snapshot, "webhook_id", d.messageID, "error", errString(err))
		}
		if now.After(until) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitedMessages are the messages whose wait for the edges was logged and counted: a message
// waits through several runs of its job, and for each of its endpoints.
type waitedMessages struct {
	mu   sync.Mutex
	seen map[string]time.Time // message id -> when it was logged
}

// first records id and reports whether it was not recorded yet; records older than a day go.
func (m *waitedMessages) first(id string, now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.seen[id]; ok {
		return false
	}
	if m.seen == nil {
		m.seen = map[string]time.Time{}
	}
	for k, at := range m.seen {
		if now.Sub(at) > 24*time.Hour {
			delete(m.seen, k)
		}
	}
	m.seen[id] = now
	return true
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// delivered records a success.
func (w *worker) delivered(ctx context.Context, conn *pgxpool.Conn, endpoint int64, d delivery) error {
	if _, err := conn.Exec(ctx, webhook.SQL(templates.WebhookDelivered), d.id, endpoint); err != nil {
		return fmt.Errorf("record a webhook delivery: %w", err)
	}
	w.q.opts.Metrics.delivered(d)
	return nil
}

// failed records a failure and decides what follows: a retry after the backoff, giving
// the message up once it has been retried for webhooks.retry_for (then the next one is
// tried), or disabling the endpoint once it has failed for webhooks.disable_after.
func (w *worker) failed(ctx context.Context, conn *pgxpool.Conn, endpoint int64, d delivery, why error) (bool, error) {
	cfg := w.q.opts.Config
	now := time.Now()
	first := now
	if d.firstAttempt != nil {
		first = *d.firstAttempt
	}
	wait := Backoff(cfg.RetryBase, cfg.RetryMax, d.attempts+1)
	giveUp := GivesUp(first, now, cfg.RetryFor)
	reason := webhook.Reason(why.Error(), 300)
	var failingSince time.Time
	err := conn.QueryRow(ctx, webhook.SQL(templates.WebhookFailed), d.id, endpoint, reason, now.Add(wait), giveUp).Scan(&failingSince)
	if err != nil {
		return false, fmt.Errorf("record a webhook failure: %w", err)
	}
	w.q.opts.Metrics.failed(giveUp)
	log := w.q.opts.Logger.With("endpoint", endpoint, "webhook_id", d.messageID, "attempt", d.attempts+1, "reason", reason)
	if now.Sub(failingSince) >= cfg.DisableAfter {
		why := "failing since " + failingSince.UTC().Format(time.RFC3339)
		disabled, err := disable(ctx, conn, endpoint, why, failingSince)
		if err != nil {
			return false, fmt.Errorf("disable a webhook endpoint: %w", err)
		}
		if disabled {
			w.q.opts.Metrics.disabled.Inc()
			log.Warn("webhook endpoint disabled: its deliveries have failed for webhooks.disable_after", "failing_since", failingSince)
			return true, nil // the next step ends the job, under the endpoint's lock
		}
		// Enabled again by an admin meanwhile: an ordinary failure, retried below.
	}
	if giveUp {
		log.Warn("webhook delivery given up after webhooks.retry_for")
		return true, nil
	}
	log.Info("webhook delivery failed; retrying", "retry_in_seconds", wait.Seconds())
	return false, river.JobSnooze(wait)
}

// GivesUp says whether a message first tried at first, whose attempt at now failed, is
// given up: once it has been retried for retryFor (D42: for at least 24 hours). Giving up
// when the next attempt would come after retryFor stopped up to one longest backoff (an
// hour) short of it.
func GivesUp(first, now time.Time, retryFor time.Duration) bool {
	return now.Sub(first) >= retryFor
}

// Backoff is the wait after a delivery's attempt-th failure: base doubled attempt-1
// times, at most limit, less up to a fifth at random (jitter), so that endpoints failing
// together are not retried together.
func Backoff(base, limit time.Duration, attempt int) time.Duration {
	d := base
	for i := 1; i < attempt && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	return d - time.Duration(rand.Int64N(int64(d)/5+1))
}
