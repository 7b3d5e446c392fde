package ratelimit

import (
	"context"
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// shardCount spreads keys over this many independently locked maps so that concurrent
// requests for different tokens rarely wait for each other. A power of two.
const shardCount = 64

// Memory is a Limiter held in this process: a sliding log of the accepted requests' times
// per key. It is exact (no fixed-window burst at a boundary) and its memory is bounded by
// the requests accepted in the last window: expired times are dropped as keys are used, and
// keys idle for a whole window are evicted by a sweep that runs at most once per window.
// Safe for concurrent use.
type Memory struct {
	limit     int
	window    int64 // nanoseconds
	now       func() time.Time
	seed      maphash.Seed
	nextSweep atomic.Int64 // Unix nanoseconds at which the next sweep is due
	held      atomic.Int64 // keys in the shards' maps, so that Peek of an empty limiter is free
	shards    [shardCount]shard
}

var _ Limiter = (*Memory)(nil)

// shard is one lock and the logs of the keys that hash to it.
type shard struct {
	mu   sync.Mutex
	logs map[string]*slidingLog
	_    [48]byte // keeps neighbouring shards' locks off one cache line
}

// NewMemory returns a limiter that accepts at most limit requests per key in any rolling
// window. now is the clock (nil: time.Now); tests inject a fake one. limit and window must
// be positive: the configuration is validated before this point, so anything else is a bug.
func NewMemory(limit int, window time.Duration, now func() time.Time) *Memory {
	if limit <= 0 || window <= 0 {
		panic(fmt.Sprintf("ratelimit: NewMemory needs a positive limit and window (got %d, %s)", limit, window))
	}
	if now == nil {
		now = time.Now
	}
	m := &Memory{limit: limit, window: int64(window), now: now, seed: maphash.MakeSeed()}
	for i := range m.shards {
		m.shards[i].logs = map[string]*slidingLog{}
	}
	m.nextSweep.Store(now().UnixNano() + m.window)
	return m
}

// Allow accepts the request and records its time when fewer than limit requests were
// accepted for key in the window that ends now; otherwise it rejects it without recording
// anything, so that rejected requests do not consume the allowance (D23).
func (m *Memory) Allow(_ context.Context, key string) (Decision, error) {
	now := m.now().UnixNano()
	m.maybeSweep(now)
	sh := m.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	l := sh.logs[key]
	if l == nil {
		l = &slidingLog{}
		// Clone so that the map does not pin a larger string the key was sliced from.
		sh.logs[strings.Clone(key)] = l
		m.held.Add(1)
	}
	l.expire(now - m.window)
	n := l.len()
	if n >= m.limit {
		return m.rejected(l, now), nil
	}
	l.push(now)
	return Decision{Allowed: true, Limit: m.limit, Remaining: m.limit - n - 1, ResetAt: m.resetAt(l)}, nil
}

// Peek reports what Allow would decide for key now, recording nothing. The edge peeks at
// the failures of every request's address, and almost always finds none: a limiter that
// holds no key at all answers without reading the clock or locking.
func (m *Memory) Peek(_ context.Context, key string) (Decision, error) {
	if m.held.Load() == 0 {
		return Decision{Allowed: true, Limit: m.limit, Remaining: m.limit}, nil
	}
	now := m.now().UnixNano()
	sh := m.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	l := sh.logs[key]
	if l == nil {
		return Decision{Allowed: true, Limit: m.limit, Remaining: m.limit}, nil
	}
	l.expire(now - m.window)
	n := l.len()
	if n >= m.limit {
		return m.rejected(l, now), nil
	}
	d := Decision{Allowed: true, Limit: m.limit, Remaining: m.limit - n}
	if n > 0 {
		d.ResetAt = m.resetAt(l)
	}
	return d, nil
}

// rejected is the decision for a full window: a request is accepted again when the oldest
// accepted time in it leaves the window.
func (m *Memory) rejected(l *slidingLog, now int64) Decision {
	reset := l.oldest() + m.window
	return Decision{
		Limit:      m.limit,
		RetryAfter: retryAfter(time.Duration(reset - now)),
		ResetAt:    time.Unix(0, reset),
	}
}

func (m *Memory) resetAt(l *slidingLog) time.Time { return time.Unix(0, l.oldest()+m.window) }

func (m *Memory) shard(key string) *shard {
	return &m.shards[maphash.String(m.seed, key)&(shardCount-1)]
}

// maybeSweep evicts idle keys when a window has passed since the last sweep. One caller
// wins the compare-and-swap and sweeps; the others carry on without waiting.
func (m *Memory) maybeSweep(now int64) {
	due := m.nextSweep.Load()
	if now < due || !m.nextSweep.CompareAndSwap(due, now+m.window) {
		return
	}
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		m.held.Add(-int64(sh.sweep(now - m.window)))
		sh.mu.Unlock()
	}
}

// sweep evicts the keys whose every accepted time is at or before cutoff, so that memory
// follows the keys in use rather than every key ever seen. Go maps do not give memory back
// when entries are deleted, so the survivors move to a new map when most entries went. The
// caller holds the lock. It returns how many keys it evicted.
func (sh *shard) sweep(cutoff int64) int {
	deleted := 0
	for k, l := range sh.logs {
		if l.expire(cutoff); l.len() == 0 {
			delete(sh.logs, k)
			deleted++
		}
	}
	if deleted > len(sh.logs) {
		fresh := make(map[string]*slidingLog, len(sh.logs))
		for k, l := range sh.logs {
			fresh[k] = l
		}
		sh.logs = fresh
	}
	return deleted
}

// keys returns how many keys the limiter holds, for tests of eviction.
func (m *Memory) keys() int {
	n := 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		n += len(sh.logs)
		sh.mu.Unlock()
	}
	return n
}
