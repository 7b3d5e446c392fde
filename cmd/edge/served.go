package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/config"
)

// servedReporter keeps the snapshot this edge serves in the Redis the edges share, for
// builder serve's webhooks (D42: a delivery waits until every edge serves its snapshot).
type servedReporter struct {
	client *redis.Client
	key    string
	id     atomic.Pointer[string]
	kick   chan struct{}
	log    *slog.Logger
}

// newServedReporter returns nil when the edge shares no Redis: builder serve then waits
// for the store's poll bound instead.
func newServedReporter(c config.Config, log *slog.Logger) (*servedReporter, error) {
	cfg := c.Edge
	if cfg.RedisURL == "" {
		return nil, nil
	}
	opts, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("edge.redis_url: %w", err)
	}
	if opts.Password == "" {
		opts.Password = cfg.RedisPassword
	}
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = time.Second, time.Second, time.Second
	opts.MaxRetries = -1
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	host, _ := os.Hostname()
	return &servedReporter{client: redis.NewClient(opts), key: snapshot.EdgeServedPrefix(c.Store.URL, c.Store.Endpoint) + host + "-" + hex.EncodeToString(b),
		kick: make(chan struct{}, 1), log: log}, nil
}

// swapped is the edge's OnSwap: the new snapshot is reported at once.
func (r *servedReporter) swapped(id string) {
	r.id.Store(&id)
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// run reports every second and at every swap until ctx is done, then removes the key: a
// stopped edge holds no delivery back.
func (r *servedReporter) run(ctx context.Context) {
	defer r.client.Close()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			c, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			r.client.Del(c, r.key)
			cancel()
			return
		case <-t.C:
		case <-r.kick:
		}
		id := r.id.Load()
		if id == nil {
			continue
		}
		err := r.client.Set(ctx, r.key, *id, snapshot.EdgeServedTTL*time.Second).Err()
		switch {
		case err != nil && !failing && ctx.Err() == nil:
			r.log.Warn("cannot report the snapshot served to Redis; builder serve's webhook deliveries stop waiting for this edge once its last report expires", "error", err.Error())
			failing = true
		case err == nil && failing:
			r.log.Info("reporting the snapshot served to Redis again")
			failing = false
		}
	}
}
