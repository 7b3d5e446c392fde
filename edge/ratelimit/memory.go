package ratelimit

import (
	"context"
	"fmt"
	"hash/maphash"
	"slices"
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
// MaxKeys bounds the keys held as well. Safe for concurrent use.
//
// Times are measured as durations since the limiter was made, on the monotonic clock that
// time.Now's readings carry: a wall clock stepped back would otherwise block every key for
// the step plus a window, and one stepped forward would hand out a fresh allowance.
type Memory struct {
	window    int64 // nanoseconds
	now       func() time.Time
	epoch     time.Time                     // now() when the limiter was made
	elapsed   func(time.Time) time.Duration // a reading of now() as time since epoch
	seed      maphash.Seed
	nextSweep atomic.Int64 // elapsed nanoseconds at which the next sweep is due
	held      atomic.Int64 // keys in the shards' maps, so that Peek of an empty limiter is free
	perShard  int          // most keys a shard holds; 0: no bound
	shards    [shardCount]shard
}

var _ Limiter = (*Memory)(nil)

// shard is one lock and the logs of the keys that hash to it.
type shard struct {
	mu    sync.Mutex
	logs  map[string]*slidingLog
	order []string // with MaxKeys: keys in the order they were added, some gone since
	_     [24]byte // keeps neighbouring shards' locks off one cache line
}

// Option changes a Memory limiter.
type Option func(*Memory)

// MaxKeys bounds the keys the limiter holds at n, rounded up to a multiple of its shards, evicting
// the key added first when a new one would pass it: the limiter of failed authentications
// is keyed by client address, which a client with many addresses can vary at will.
func MaxKeys(n int) Option {
	return func(m *Memory) { m.perShard = max(1, (n+shardCount-1)/shardCount) }
}

// NewMemory returns a limiter that accepts, for each key, at most the limit its caller
// gives in any rolling window. now is the clock (nil: time.Now); tests inject a fake one.
// window must be positive: the configuration is validated before this point, so anything
// else is a bug.
func NewMemory(window time.Duration, now func() time.Time, opts ...Option) *Memory {
	if window <= 0 {
		panic(fmt.Sprintf("ratelimit: NewMemory needs a positive window (got %s)", window))
	}
	if now == nil {
		now = time.Now
	}
	m := &Memory{window: int64(window), now: now, epoch: now(), seed: maphash.MakeSeed()}
	// Sub uses the monotonic readings when both times have one, as time.Now's do; a test's
	// fake clock has none and measures with its own times.
	m.elapsed = func(t time.Time) time.Duration { return t.Sub(m.epoch) }
	for i := range m.shards {
		m.shards[i].logs = map[string]*slidingLog{}
	}
	for _, o := range opts {
		o(m)
	}
	m.nextSweep.Store(m.window)
	return m
}

// clock reads the time once: as elapsed nanoseconds, which the logs hold, and on the wall,
// from which the decision's ResetAt is told.
func (m *Memory) clock() (int64, time.Time) {
	t := m.now()
	return int64(m.elapsed(t)), t
}

// Allow accepts the request and records its time when fewer than limit requests were
// accepted for key in the window that ends now; otherwise it rejects it without recording
// anything, so that rejected requests do not consume the allowance (D23).
func (m *Memory) Allow(_ context.Context, key string, limit int) (Decision, error) {
	if limit <= 0 {
		return Decision{}, errLimit(key, limit)
	}
	now, wall := m.clock()
	m.maybeSweep(now)
	sh := m.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	l := sh.logs[key]
	if l == nil {
		l = m.add(sh, key)
	}
	l.expire(now - m.window)
	n := l.len()
	if n >= limit {
		return m.rejected(l, now, wall, limit), nil
	}
	l.push(now)
	return Decision{Allowed: true, Limit: limit, Remaining: limit - n - 1, ResetAt: m.resetAt(l, now, wall)}, nil
}

// add makes the log of a new key, first evicting the oldest key of a full shard. The
// caller holds the shard's lock.
func (m *Memory) add(sh *shard, key string) *slidingLog {
	// Clone so that the map does not pin a larger string the key was sliced from.
	key = strings.Clone(key)
	l := &slidingLog{}
	sh.logs[key] = l
	m.held.Add(1)
	if m.perShard == 0 {
		return l
	}
	for len(sh.logs) > m.perShard && len(sh.order) > 0 {
		old := sh.order[0]
		sh.order = sh.order[1:]
		if _, ok := sh.logs[old]; ok {
			delete(sh.logs, old)
			m.held.Add(-1)
		}
	}
	if len(sh.order) >= 2*m.perShard { // drop the keys swept since, and the array's dead front
		sh.order = slices.DeleteFunc(slices.Clone(sh.order), func(k string) bool { return sh.logs[k] == nil })
	}
	sh.order = append(sh.order, key)
	return l
}

// Peek reports what Allow would decide for key now, recording nothing. The edge peeks at
// the failures of every request's address, and almost always finds none: a limiter that
// holds no key at all answers without reading the clock or locking.
func (m *Memory) Peek(_ context.Context, key string, limit int) (Decision, error) {
	if limit <= 0 {
		return Decision{}, errLimit(key, limit)
	}
	if m.held.Load() == 0 {
		return Decision{Allowed: true, Limit: limit, Remaining: limit}, nil
	}
	now, wall := m.clock()
	sh := m.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	l := sh.logs[key]
	if l == nil {
		return Decision{Allowed: true, Limit: limit, Remaining: limit}, nil
	}
	l.expire(now - m.window)
	n := l.len()
	if n >= limit {
		return m.rejected(l, now, wall, limit), nil
	}
	d := Decision{Allowed: true, Limit: limit, Remaining: limit - n}
	if n > 0 {
		d.ResetAt = m.resetAt(l, now, wall)
	}
	return d, nil
}

// rejected is the decision for a full window: a request is accepted again once fewer than
// limit accepted times are in it, when the (held - limit + 1)-th oldest leaves: the oldest
// when the window holds exactly limit, a later one when the key's limit was lowered below
// what it holds.
func (m *Memory) rejected(l *slidingLog, now int64, wall time.Time, limit int) Decision {
	reset := l.nth(l.len()-limit) + m.window
	return Decision{
		Limit:      limit,
		RetryAfter: retryAfter(time.Duration(reset - now)),
		ResetAt:    wall.Add(time.Duration(reset - now)),
	}
}

// resetAt is when the oldest time in l leaves the window, on the wall clock as read now.
func (m *Memory) resetAt(l *slidingLog, now int64, wall time.Time) time.Time {
	return wall.Add(time.Duration(l.oldest() + m.window - now))
}

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
