package builder

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/trainingco/catalogue/builder/publish"
	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/webhook/edges"
	"github.com/trainingco/catalogue/builder/webhook/queue"
)

// webhooks is builder serve's part of the webhooks: the queue on database.url, which this
// builder feeds after each publication and whose deliveries it makes with the other
// builders.
type webhooks struct {
	queue *queue.Queue
	pool  *pgxpool.Pool
	redis *redis.Client
}

// announceTimeout bounds the queueing of a publication's catalogue.changed, which holds the
// builder lock: past it the message is not sent, and the next one's feed positions lead to
// this change too.
const announceTimeout = 10 * time.Second

// webhookRetry is how long serve waits before it tries again to start its webhooks, when
// the primary did not answer or had no webhook tables yet.
const webhookRetry = 30 * time.Second

// errWebhookConfig marks a failure to start the webhooks that trying again cannot mend.
var errWebhookConfig = errors.New("webhooks' configuration")

// errNoWebhookTables: the primary answers, but builder migrate has not made the tables.
var errNoWebhookTables = errors.New("the database has no webhook tables yet; run builder migrate")

// startWebhooks starts delivering. It fails with errNoWebhookTables when the database has
// no webhook tables yet (builder migrate makes them), with an error wrapping
// errWebhookConfig when database.url or edge.redis_url cannot be used, and with the
// database's error when it does not answer; the webhooks are off until it succeeds.
func (s *serveLoop) startWebhooks(ctx context.Context) (*webhooks, error) {
	pc, err := pgxpool.ParseConfig(s.cfg.Database.URL)
	if err != nil {
		return nil, fmt.Errorf("%w: database.url: %w", errWebhookConfig, err)
	}
	var redisOpts *redis.Options
	if s.cfg.Edge.RedisURL != "" {
		if redisOpts, err = redis.ParseURL(s.cfg.Edge.RedisURL); err != nil {
			return nil, fmt.Errorf("%w: edge.redis_url: %w", errWebhookConfig, err)
		}
		if redisOpts.Password == "" {
			redisOpts.Password = s.cfg.Edge.RedisPassword
		}
	}
	// One connection per delivery in flight (it holds the endpoint's lock), and River's own.
	pc.MaxConns = int32(s.cfg.Webhooks.Workers) + 4
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("connect to the database for the webhooks: %w", err)
	}
	ready, err := webhookTables(ctx, pool)
	if err != nil || !ready {
		pool.Close()
		return nil, cmp.Or(err, errNoWebhookTables)
	}
	w := &webhooks{pool: pool}
	reports := edges.Served{Poll: s.cfg.Edge.PollInterval, Prefix: snapshot.EdgeServedPrefix(s.cfg.Store.URL, s.cfg.Store.Endpoint)}
	if redisOpts != nil {
		w.redis = redis.NewClient(redisOpts)
		reports.Redis = w.redis
	}
	w.queue, err = queue.New(queue.Options{Pool: pool, Config: s.cfg.Webhooks, Edge: s.cfg.Edge, Served: reports,
		Logger: s.log, Metrics: s.metrics.webhooks(pool), Resolver: s.opts.Resolver}, true)
	if err == nil {
		err = w.queue.Start(context.WithoutCancel(ctx)) // stopped gracefully by stop
	}
	if err != nil {
		s.metrics.webhooksOff()
		w.close()
		return nil, err
	}
	return w, nil
}

// retryWebhooks tries to start the webhooks every webhookRetry until they do or ctx is
// done: a primary that did not answer when serve started, or had no webhook tables yet,
// must not leave them off for as long as serve runs. err is why they are off (logged);
// each new reason is logged once.
func (s *serveLoop) retryWebhooks(ctx context.Context, err error) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.webhookRetry()):
		}
		w, next := s.startWebhooks(ctx)
		if next == nil {
			s.webhooks.Store(w)
			s.log.Info("webhooks started")
			return
		}
		if next.Error() != err.Error() {
			s.webhooksOff(next)
		}
		err = next
	}
}

// webhooksOff logs why the webhooks are off, and that serve tries again.
func (s *serveLoop) webhooksOff(err error) {
	every := s.webhookRetry().String()
	if errors.Is(err, errNoWebhookTables) {
		s.log.Warn("webhooks are off: the database has no webhook tables yet; run builder migrate", "retry_every", every)
		return
	}
	s.log.Warn("webhooks are off: they could not start; trying again", "retry_every", every, "error", err.Error())
}

func (s *serveLoop) webhookRetry() time.Duration { return cmp.Or(s.opts.webhookRetry, webhookRetry) }

// webhookTables says whether the database has the webhook tables (builder migrate makes
// them).
func webhookTables(ctx context.Context, pool *pgxpool.Pool) (bool, error) {
	var ready bool
	err := pool.QueryRow(ctx, "SELECT to_regclass('webhook_endpoints') IS NOT NULL AND to_regclass('river_job') IS NOT NULL").Scan(&ready)
	return ready, err
}

// announce queues the catalogue.changed of a publication that changed a served document
// (D41): a course or class, or only another (popular, a course list), with empty lists. A
// failure is logged, and the change has no message of its own: the next message names the
// feeds from the position after the last message queued (queue.Change), before this
// change, so a receiver following it reads this change too; only its id lists are lost.
func (s *serveLoop) announce(ctx context.Context, res publish.Result, noticed time.Time) {
	w := s.webhooks.Load()
	if w == nil || res.SnapshotID == "" || !res.Changed() {
		return
	}
	// Queued holding the builder lock: bounded, so that webhook tables locked by someone
	// else hold up no builder for longer.
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(s.opts.announceTimeout, announceTimeout))
	defer cancel()
	id, err := w.queue.Enqueue(ctx, queue.Change{Snapshot: res.SnapshotID, Courses: res.Feed.Courses,
		Classes: res.Feed.Classes, After: res.Feed.After, Last: res.FeedLast(), Noticed: noticed})
	if err != nil {
		s.log.Error("could not queue the webhooks of a publication", "snapshot", res.SnapshotID, "error", err.Error())
		return
	}
	s.log.Info("webhooks queued", "snapshot", res.SnapshotID, "webhook_id", id,
		"courses", len(res.Feed.Courses), "classes", len(res.Feed.Classes))
}

// stop lets the deliveries in flight finish, at most webhooks.timeout and a second.
func (w *webhooks) stop(ctx context.Context, timeout time.Duration) {
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout+time.Second)
	defer cancel()
	_ = w.queue.Stop(c)
	w.close()
}

func (w *webhooks) close() {
	if w.redis != nil {
		_ = w.redis.Close()
	}
	w.pool.Close()
}
