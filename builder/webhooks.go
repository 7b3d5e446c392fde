package builder

import (
	"context"
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

// startWebhooks starts delivering; it returns nil, logged, when the database has no
// webhook tables yet (builder migrate makes them), so that serve runs without webhooks.
func (s *serveLoop) startWebhooks(ctx context.Context) (*webhooks, error) {
	pc, err := pgxpool.ParseConfig(s.cfg.Database.URL)
	if err != nil {
		return nil, fmt.Errorf("database.url: %w", err)
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
		s.log.Warn("webhooks are off: the database has no webhook tables yet; run builder migrate", "error", errString(err))
		return nil, nil
	}
	w := &webhooks{pool: pool}
	reports := edges.Served{Poll: s.cfg.Edge.PollInterval, Prefix: snapshot.EdgeServedPrefix(s.cfg.Store.URL, s.cfg.Store.Endpoint)}
	if s.cfg.Edge.RedisURL != "" {
		opts, err := redis.ParseURL(s.cfg.Edge.RedisURL)
		if err != nil {
			pool.Close()
			return nil, fmt.Errorf("edge.redis_url: %w", err)
		}
		if opts.Password == "" {
			opts.Password = s.cfg.Edge.RedisPassword
		}
		w.redis = redis.NewClient(opts)
		reports.Redis = w.redis
	}
	w.queue, err = queue.New(queue.Options{Pool: pool, Config: s.cfg.Webhooks, Edge: s.cfg.Edge, Served: reports,
		Logger: s.log, Metrics: s.metrics.webhooks(pool), Resolver: s.opts.Resolver}, true)
	if err == nil {
		err = w.queue.Start(context.WithoutCancel(ctx)) // stopped gracefully by stop
	}
	if err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

// webhookTables says whether the database has the webhook tables (builder migrate makes
// them).
func webhookTables(ctx context.Context, pool *pgxpool.Pool) (bool, error) {
	var ready bool
	err := pool.QueryRow(ctx, "SELECT to_regclass('webhook_endpoints') IS NOT NULL AND to_regclass('river_job') IS NOT NULL").Scan(&ready)
	return ready, err
}

// announce queues the catalogue.changed of a publication that changed a served course or
// class document. A failure is logged: the next change's message names the feeds'
// position before it, from which a partner reads this change too.
func (s *serveLoop) announce(ctx context.Context, res publish.Result, noticed time.Time) {
	if s.webhooks == nil || res.SnapshotID == "" || res.Feed.Empty() {
		return
	}
	id, err := s.webhooks.queue.Enqueue(ctx, queue.Change{Snapshot: res.SnapshotID, Courses: res.Feed.Courses,
		Classes: res.Feed.Classes, After: res.Feed.After, Noticed: noticed})
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

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
