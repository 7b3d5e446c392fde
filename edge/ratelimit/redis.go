package ratelimit

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// DefaultRedisTimeout bounds one call to Redis when RedisOptions.Timeout is zero: a Redis on
// the edge's network answers in well under a millisecond, and a hung one must cost a request
// no more than this (the caller then decides in memory).
const DefaultRedisTimeout = 50 * time.Millisecond

// DefaultRedisPrefix starts every key the limiter writes, so that it can share a Redis (and
// a database number) with other applications. Every edge must use the same prefix.
const DefaultRedisPrefix = "catalogue:ratelimit:"

// slidingScript keeps one key's log in Redis as a sorted set of its accepted requests,
// scored by their time in microseconds, and decides in one round trip. See its comments.
//
//go:embed sliding.lua
var slidingSource string

var slidingScript = redis.NewScript(slidingSource)

// Redis is a Limiter whose logs live in one Redis, so that every edge using that Redis
// counts the same requests: the limit holds across all of them exactly as it does for one
// edge with Memory. Each decision is one call of a Lua script (EVALSHA), which Redis runs
// atomically, so two edges deciding for one key at once can never both take the last slot.
//
// Time is Redis's own clock (the script reads TIME), one clock for every edge, unless
// RedisOptions.Now is set. Safe for concurrent use.
type Redis struct {
	client  *redis.Client
	prefix  string
	window  int64 // microseconds
	timeout time.Duration
	now     func() time.Time
	id      string        // distinguishes this process's log entries from other edges'
	seq     atomic.Uint64 // and each of its own entries from the others
}

// RedisOptions configures NewRedis.
type RedisOptions struct {
	// URL is redis://[user:password@]host:port/db, or rediss:// for TLS.
	URL string
	// Password is used when the URL carries none, so that it can come from the
	// environment rather than a file.
	Password string
	// Timeout bounds each call, connecting included; 0 is DefaultRedisTimeout.
	Timeout time.Duration
	// Window is the rolling window; 0 is one minute (D23).
	Window time.Duration
	// Prefix starts every key; empty is DefaultRedisPrefix.
	Prefix string
	// Now replaces Redis's clock; tests set it. nil: the script reads Redis's TIME.
	Now func() time.Time
}

// NewRedis returns a limiter on the Redis at o.URL. It does not connect: a Redis that is
// down at start is the caller's to handle at the first call, like one that goes down later.
func NewRedis(o RedisOptions) (*Redis, error) {
	opts, err := redis.ParseURL(o.URL)
	if err != nil {
		return nil, fmt.Errorf("redis url: %w", err)
	}
	if opts.Password == "" {
		opts.Password = o.Password
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultRedisTimeout
	}
	if o.Window <= 0 {
		o.Window = time.Minute
	}
	if o.Prefix == "" {
		o.Prefix = DefaultRedisPrefix
	}
	boundCalls(opts, o.Timeout)
	quietOnce.Do(func() { redis.SetLogger(quiet{}) })
	id := make([]byte, 6)
	if _, err := rand.Read(id); err != nil {
		return nil, fmt.Errorf("limiter id: %w", err)
	}
	return &Redis{
		client: redis.NewClient(opts), prefix: o.Prefix, window: o.Window.Microseconds(),
		timeout: o.Timeout, now: o.Now, id: hex.EncodeToString(id) + ":",
	}, nil
}

// quiet is go-redis's logger: none. go-redis would print every failed dial to stderr, a
// line per request outside the edge's JSON log while Redis is down; Shared logs each outage
// once instead. go-redis has one logger per process, set once.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

var quietOnce sync.Once

// Connections and their buffers (see boundCalls).
const (
	poolSize   = 64
	bufferSize = 4 << 10
)

// boundCalls makes every call fail within timeout rather than wait: the calls carry a
// context with that deadline, and go-redis's own waits (dial, its retries, the pool) are
// kept inside it. A failed call is not retried: the caller decides in memory instead.
func boundCalls(opts *redis.Options, timeout time.Duration) {
	opts.ContextTimeoutEnabled = true
	opts.DialTimeout = timeout
	opts.DialerRetries = 1
	opts.ReadTimeout = timeout
	opts.WriteTimeout = timeout
	opts.PoolTimeout = timeout
	opts.MaxRetries = -1
	// Every request in flight holds a connection for its call: go-redis's default of ten per
	// core would make requests beyond that wait for one, and past the timeout fail. The
	// script's arguments and answer are a few hundred bytes: small buffers do.
	opts.PoolSize = max(opts.PoolSize, poolSize)
	opts.ReadBufferSize, opts.WriteBufferSize = bufferSize, bufferSize
	// No extra commands on each new connection (CLIENT SETINFO, maintenance notifications):
	// a reconnection during a request should cost one round trip, not three.
	opts.DisableIdentity = true
	opts.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
}

var _ Limiter = (*Redis)(nil)

// Allow accepts the request and records it when fewer than limit requests were accepted
// for key in the window that ends now; a rejected request records nothing (D23). An error
// means Redis did not answer within the timeout, or answered with an error.
func (r *Redis) Allow(ctx context.Context, key string, limit int) (Decision, error) {
	member := r.id + strconv.FormatUint(r.seq.Add(1), 36)
	return r.run(ctx, key, limit, member)
}

// Peek reports what Allow would decide for key now, recording nothing.
func (r *Redis) Peek(ctx context.Context, key string, limit int) (Decision, error) {
	return r.run(ctx, key, limit, "")
}

// run calls the script; an empty member only looks.
func (r *Redis) run(ctx context.Context, key string, limit int, member string) (Decision, error) {
	if limit <= 0 {
		return Decision{}, errLimit(key, limit)
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	now := ""
	if r.now != nil {
		now = strconv.FormatInt(r.now().UnixMicro(), 10)
	}
	res, err := slidingScript.Run(ctx, r.client, []string{r.prefix + key}, limit, r.window, member, now).Int64Slice()
	if err != nil {
		return Decision{}, fmt.Errorf("redis rate limit: %w", err)
	}
	if len(res) != 4 {
		return Decision{}, fmt.Errorf("redis rate limit: script returned %d values, want 4", len(res))
	}
	return r.decision(limit, res[0] == 1, int(res[1]), res[2], res[3]), nil
}

// decision turns the script's answer into a Decision, as Memory would have decided: held
// is the number of accepted requests in the window after this one, oldest the time whose
// leaving the window lets a request in (the (held - limit + 1)-th oldest when refused, the
// oldest within the limit; 0 when the script did not look: an accepted request has no ResetAt) and
// now the time of the decision, both in microseconds.
func (r *Redis) decision(limit int, allowed bool, held int, oldest, now int64) Decision {
	d := Decision{Allowed: allowed, Limit: limit}
	if oldest > 0 {
		d.ResetAt = time.UnixMicro(oldest + r.window)
	}
	if allowed {
		d.Remaining = limit - held
	} else {
		d.RetryAfter = retryAfter(time.Duration(oldest+r.window-now) * time.Microsecond)
	}
	return d
}

// ping checks that Redis answers and runs the script; it records nothing (a look at a key
// that may exist changes nothing either).
func (r *Redis) ping(ctx context.Context) error {
	_, err := r.Peek(ctx, "probe", 1)
	return err
}

// addr is Redis's address, for logs: never the URL, which may hold a password.
func (r *Redis) addr() string { return r.client.Options().Addr }

// Close closes the connections to Redis.
func (r *Redis) Close() error {
	if err := r.client.Close(); err != nil && !errors.Is(err, redis.ErrClosed) {
		return err
	}
	return nil
}
