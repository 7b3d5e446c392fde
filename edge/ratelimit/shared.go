package ratelimit

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultProbe is how often Shared tries an unreachable Redis again.
const DefaultProbe = time.Second

// outageAfter is how many calls in a row Redis must fail before Shared stops asking it. One
// late answer is no outage: a busy host can delay a reply past the timeout now and then
// (under a load average of 11 on 2 cores, 0.07% of calls took over 100 ms), and each such
// call is decided in memory on its own. A Redis that is down or hung fails every call, and
// the concurrent requests of one moment make the count at once.
const outageAfter = 3

// Shared is the limit several edges share through Redis, kept going when Redis is not: a
// call Redis does not answer (down, hung past RedisOptions.Timeout, or answering errors) is
// decided by the edge's own Memory instead, and once calls have failed outageAfter times in
// a row every later call too, without waiting on Redis, until a probe every
// SharedOptions.Probe finds it answering again. Meanwhile each
// edge counts alone, so a token may get its limit once per edge: the API stays up and
// within a few times its limit, rather than refusing or stalling everyone.
//
// Each outage is logged once when it starts and once when it ends; Mode and Failures feed
// the edge's metrics. Safe for concurrent use.
type Shared struct {
	redis *Redis
	local *Memory
	probe time.Duration
	log   *slog.Logger

	shared   atomic.Bool   // counting in Redis
	inARow   atomic.Int64  // calls failed since the last that succeeded
	failures atomic.Uint64 // calls Redis did not answer, decided in memory
	outages  atomic.Uint64 // switches to memory

	mu      sync.Mutex // guards closed and the probe's start
	closed  bool
	done    chan struct{}
	probing sync.WaitGroup
}

var _ Limiter = (*Shared)(nil)

// SharedOptions configures NewShared. Redis and Local are required.
type SharedOptions struct {
	Redis *Redis
	Local *Memory       // decides while Redis cannot
	Probe time.Duration // how often an unreachable Redis is tried; 0: DefaultProbe
	Log   *slog.Logger  // nil: slog.Default()
}

// NewShared returns the limit shared through o.Redis. It tries Redis once, within its
// timeout, and starts in memory (probing) when Redis does not answer, so that an edge
// starts and serves whether Redis is up or not.
func NewShared(ctx context.Context, o SharedOptions) *Shared {
	if o.Probe <= 0 {
		o.Probe = DefaultProbe
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	s := &Shared{redis: o.Redis, local: o.Local, probe: o.Probe, log: o.Log, done: make(chan struct{})}
	s.shared.Store(true)
	if err := s.redis.ping(ctx); err != nil {
		s.down(err) // at start, one failure is enough: there is no count to keep
	} else {
		s.log.Info("rate limits shared through Redis", "redis", o.Redis.addr())
	}
	return s
}

// Allow decides in Redis, or in memory while Redis cannot answer.
func (s *Shared) Allow(ctx context.Context, key string, limit int) (Decision, error) {
	return s.decide(ctx, key, limit, (*Redis).Allow, (*Memory).Allow)
}

// Peek looks in Redis, or in memory while Redis cannot answer.
func (s *Shared) Peek(ctx context.Context, key string, limit int) (Decision, error) {
	return s.decide(ctx, key, limit, (*Redis).Peek, (*Memory).Peek)
}

func (s *Shared) decide(ctx context.Context, key string, limit int,
	remote func(*Redis, context.Context, string, int) (Decision, error),
	local func(*Memory, context.Context, string, int) (Decision, error)) (Decision, error) {
	if s.shared.Load() {
		d, err := remote(s.redis, ctx, key, limit)
		switch {
		case err == nil:
			if s.inARow.Load() != 0 {
				s.inARow.Store(0)
			}
			return d, nil
		case ctx.Err() != nil:
			return d, err // the request went away; Redis is not to blame
		case limit <= 0:
			return d, err // the caller's mistake, not Redis's
		}
		s.failures.Add(1)
		if s.inARow.Add(1) >= outageAfter {
			s.down(err)
		}
	}
	return local(s.local, ctx, key, limit)
}

// down switches to memory, once per outage, and starts probing Redis.
func (s *Shared) down(err error) {
	if !s.shared.CompareAndSwap(true, false) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.outages.Add(1)
	s.log.Warn("Redis did not answer: each edge counts rate limits on its own until it does",
		"redis", s.redis.addr(), "error", err)
	s.probing.Add(1)
	go s.probeUntilUp(time.Now())
}

// probeUntilUp tries Redis every s.probe until it answers, then shares again.
func (s *Shared) probeUntilUp(since time.Time) {
	defer s.probing.Done()
	t := time.NewTicker(s.probe)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		if s.redis.ping(context.Background()) == nil {
			s.inARow.Store(0)
			s.shared.Store(true)
			s.log.Info("Redis answers again: rate limits shared", "redis", s.redis.addr(),
				"outage", time.Since(since).Round(time.Millisecond).String())
			return
		}
	}
}

// Mode is true while limits are counted in Redis, false while in memory.
func (s *Shared) Mode() bool { return s.shared.Load() }

// Failures is the number of calls Redis did not answer (each decided in memory instead).
func (s *Shared) Failures() uint64 { return s.failures.Load() }

// Outages is the number of times the limiter fell back to memory.
func (s *Shared) Outages() uint64 { return s.outages.Load() }

// Close stops probing and closes the connections to Redis.
func (s *Shared) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
	s.mu.Unlock()
	s.probing.Wait()
	return s.redis.Close()
}
