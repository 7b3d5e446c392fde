package doctor

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// checkRedis checks that the Redis the edges share their rate limits through answers.
func checkRedis(ctx context.Context, url, password string) Check {
	c := Check{Name: "redis"}
	opts, err := redis.ParseURL(url)
	if err != nil {
		c.Detail = "edge.redis_url: " + err.Error()
		c.Fix = "write edge.redis_url as redis://HOST:PORT/DB or rediss://..."
		return c
	}
	if opts.Password == "" {
		opts.Password = password
	}
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = connectTimeout, connectTimeout, connectTimeout
	client := redis.NewClient(opts)
	defer client.Close()
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	began := time.Now()
	if err := client.Ping(ctx).Err(); err != nil {
		c.Detail = opts.Addr + ": " + err.Error()
		c.Fix = "check edge.redis_url and edge.redis_password; without Redis each edge counts its rate limits alone"
		return c
	}
	c.OK, c.Detail = true, opts.Addr+" answers PING in "+time.Since(began).Round(time.Millisecond).String()
	return c
}
