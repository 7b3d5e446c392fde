// Package edges tells builder serve whether the edges serve a snapshot (D42): a webhook
// delivery waits until they do.
package edges

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// Served is D42's answer: where the edges share a Redis they report there the snapshot each
// serves (cmd/edge, under snapshot.EdgeServedPrefix), and a snapshot is served once every edge
// reporting serves it or a later one (ids sort in build order). Where none reports (no
// shared Redis, or Redis unreachable), the store's poll bound stands in: an edge sees a new
// pointer within edge.poll_interval and swaps within Settle.
type Served struct {
	Redis *redis.Client // nil: the poll bound alone
	// Prefix is snapshot.EdgeServedPrefix of the store the builder publishes to.
	Prefix string
	Poll   time.Duration // edge.poll_interval
	// Now is the clock the poll bound is measured on; nil: time.Now. Tests set one so as
	// not to wait out the bound.
	Now func() time.Time
}

// Settle is what the poll bound allows an edge for its swap after it has seen the pointer:
// the delta and changed documents of a change build take 0.1-0.5 s at 100,000 classes.
const Settle = 2 * time.Second

// Serves implements queue.Served.
func (e Served) Serves(ctx context.Context, snap string, published time.Time) (bool, error) {
	if e.Redis != nil {
		served, err := e.reported(ctx)
		if err == nil && len(served) > 0 {
			for _, s := range served {
				if s < snap {
					return false, nil
				}
			}
			return true, nil
		}
		if err != nil {
			return e.pollBound(published), err
		}
	}
	return e.pollBound(published), nil
}

// pollBound says whether every edge has seen a snapshot published at published and
// swapped to it: edge.poll_interval and Settle have passed since.
func (e Served) pollBound(published time.Time) bool {
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	return now().Sub(published) >= e.Poll+Settle
}

// reported reads the snapshot of every edge reporting in Redis.
func (e Served) reported(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var keys []string
	iter := e.Redis.Scan(ctx, 0, e.Prefix+"*", 100).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil || len(keys) == 0 {
		return nil, err
	}
	vals, err := e.Redis.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, err
	}
	var served []string
	for _, v := range vals {
		if s, ok := v.(string); ok { // nil: expired between SCAN and MGET
			served = append(served, s)
		}
	}
	return served, nil
}
