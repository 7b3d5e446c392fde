package ratelimit

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// steppedClock is a machine's two clocks: the wall clock, which an administrator or NTP can
// step, and the monotonic one, which only moves forward.
type steppedClock struct {
	wall, mono atomic.Int64 // nanoseconds
}

func (c *steppedClock) now() time.Time { return time.Unix(0, c.wall.Load()).UTC() }

// tick moves both clocks on by d.
func (c *steppedClock) tick(d time.Duration) { c.wall.Add(int64(d)); c.mono.Add(int64(d)) }

// newStepped returns a limiter on c, measuring its windows with c's monotonic clock.
func newStepped(c *steppedClock) *Memory {
	c.wall.Store(t0.UnixNano())
	m := NewMemory(time.Minute, c.now)
	m.elapsed = func(time.Time) time.Duration { return time.Duration(c.mono.Load()) }
	return m
}

// TestMemoryIgnoresWallClockSteps: the window is measured on the monotonic clock, so a wall
// clock stepped back does not block a key for the step plus a window, and one stepped
// forward does not hand out a fresh allowance.
func TestMemoryIgnoresWallClockSteps(t *testing.T) {
	ctx := context.Background()
	for _, step := range []time.Duration{-time.Hour, -5 * time.Second, time.Minute, time.Hour} {
		t.Run(fmt.Sprint(step), func(t *testing.T) {
			c := &steppedClock{}
			m, limit := newStepped(c), 3
			for range 3 {
				if d, _ := m.Allow(ctx, "k", limit); !d.Allowed {
					t.Fatal("rejected within the limit")
				}
				c.tick(time.Second)
			}
			c.wall.Add(int64(step))
			// 3 s after the first request: the window is full whatever the wall clock says.
			d, _ := m.Allow(ctx, "k", limit)
			if d.Allowed || d.RetryAfter != 57*time.Second {
				t.Errorf("wall clock stepped %s, 3 s after the first of 3 requests: %+v; want rejected, Retry-After 57 s", step, d)
			}
			if want := c.now().Add(57 * time.Second); !d.ResetAt.Equal(want) {
				t.Errorf("wall clock stepped %s: ResetAt %s, want %s (the wall clock's now + 57 s)", step, d.ResetAt, want)
			}
			// A window after the first request a slot is free, again whatever the wall says.
			c.tick(57 * time.Second)
			if d, _ := m.Allow(ctx, "k", limit); !d.Allowed || d.Remaining != 0 {
				t.Errorf("wall clock stepped %s, a window after the first request: %+v; want accepted, 0 remaining", step, d)
			}
		})
	}
}

// TestMemoryMaxKeys: a limiter capped at n keys holds at most n, evicting the oldest first,
// so that requests from ever new addresses cannot grow it without bound.
func TestMemoryMaxKeys(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	const capped = 1024 // a multiple of the shards: MaxKeys rounds up to one
	m := NewMemory(time.Minute, clock.now, MaxKeys(capped))
	for i := range 100 * capped {
		_, _ = m.Allow(ctx, fmt.Sprintf("addr-%d", i), 5)
	}
	if n := m.keys(); n > capped {
		t.Errorf("keys after %d new ones = %d, want at most %d", 100*capped, n, capped)
	}
	// The newest keys are still counted; the oldest were evicted and start afresh.
	newest := fmt.Sprintf("addr-%d", 100*capped-1)
	if d, _ := m.Peek(ctx, newest, 5); d.Remaining != 4 {
		t.Errorf("Peek(newest key) = %+v, want 4 remaining", d)
	}
	if d, _ := m.Peek(ctx, "addr-0", 5); d.Remaining != 5 {
		t.Errorf("Peek(oldest key) = %+v, want 5 remaining: evicted", d)
	}
}
