package ratelimit

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// t0 is an arbitrary whole second so that expected times are easy to write out.
var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// fakeClock is a clock tests move by hand; safe for concurrent reads.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(t0.UnixNano())
	return c
}

func (c *fakeClock) now() time.Time { return time.Unix(0, c.ns.Load()).UTC() }

// at moves the clock to t0 + d.
func (c *fakeClock) at(d time.Duration) { c.ns.Store(t0.Add(d).UnixNano()) }

// sec is t0 plus s seconds.
func sec(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// cmpTime compares instants whatever their location.
var cmpTime = cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })

func TestMemoryAllowSlidingWindow(t *testing.T) {
	clock := newFakeClock()
	m := NewMemory(time.Minute, clock.now)
	steps := []struct {
		at   float64 // seconds after t0
		want Decision
	}{
		{0, Decision{Allowed: true, Limit: 3, Remaining: 2, ResetAt: sec(60)}},
		{10, Decision{Allowed: true, Limit: 3, Remaining: 1, ResetAt: sec(60)}},
		{20, Decision{Allowed: true, Limit: 3, Remaining: 0, ResetAt: sec(60)}},
		// The fourth in the window: rejected until the request at 0 leaves it at 60.
		{30, Decision{Limit: 3, RetryAfter: 30 * time.Second, ResetAt: sec(60)}},
		{30.2, Decision{Limit: 3, RetryAfter: 30 * time.Second, ResetAt: sec(60)}}, // 29.8 s rounds up
		{59.5, Decision{Limit: 3, RetryAfter: time.Second, ResetAt: sec(60)}},
		{59.999, Decision{Limit: 3, RetryAfter: time.Second, ResetAt: sec(60)}}, // at least 1 s
		// At 60 only the request at 0 has left: one slot, not a fresh window of three.
		{60, Decision{Allowed: true, Limit: 3, Remaining: 0, ResetAt: sec(70)}},
		{60, Decision{Limit: 3, RetryAfter: 10 * time.Second, ResetAt: sec(70)}},
		{61, Decision{Limit: 3, RetryAfter: 9 * time.Second, ResetAt: sec(70)}},
		{70, Decision{Allowed: true, Limit: 3, Remaining: 0, ResetAt: sec(80)}},
		// Accepted at 20, 60 and 70; at 125 only 70 is in the window.
		{125, Decision{Allowed: true, Limit: 3, Remaining: 1, ResetAt: sec(130)}},
	}
	for i, s := range steps {
		clock.at(time.Duration(s.at * float64(time.Second)))
		got, err := m.Allow(context.Background(), "k", 3)
		if err != nil {
			t.Fatalf("step %d: Allow: %v", i, err)
		}
		if diff := cmp.Diff(s.want, got, cmpTime); diff != "" {
			t.Errorf("step %d: Allow(%q) at +%gs mismatch (-want +got):\n%s", i, "k", s.at, diff)
		}
	}
}

func TestMemoryExactlyLimitPerWindow(t *testing.T) {
	for _, limit := range []int{1, 2, 60, 1000} {
		t.Run(strconv.Itoa(limit), func(t *testing.T) {
			clock := newFakeClock()
			m := NewMemory(time.Minute, clock.now)
			accepted := 0
			// Two requests a second for three minutes: every rolling minute may hold at
			// most limit accepted requests.
			var times []time.Duration
			for ms := 0; ms < 180_000; ms += 500 {
				clock.at(time.Duration(ms) * time.Millisecond)
				d, err := m.Allow(context.Background(), "k", limit)
				if err != nil {
					t.Fatal(err)
				}
				if d.Allowed {
					accepted++
					times = append(times, time.Duration(ms)*time.Millisecond)
				}
			}
			for i := range times {
				in := 0
				for _, u := range times[i:] {
					if u-times[i] < time.Minute {
						in++
					}
				}
				if in > limit {
					t.Fatalf("window starting at %s holds %d accepted requests, limit %d", times[i], in, limit)
				}
			}
			want := min(limit*3, 360)
			if accepted != want {
				t.Errorf("accepted %d requests in three minutes, want %d", accepted, want)
			}
		})
	}
}

func TestMemoryRejectionsDoNotConsume(t *testing.T) {
	clock := newFakeClock()
	m := NewMemory(time.Minute, clock.now)
	for _, at := range []time.Duration{0, time.Second} {
		clock.at(at)
		if d, _ := m.Allow(context.Background(), "k", 2); !d.Allowed {
			t.Fatalf("Allow at +%s rejected, want accepted", at)
		}
	}
	// A client hammering while limited must not push its own recovery further away.
	for ms := 1000; ms < 60_000; ms += 100 {
		clock.at(time.Duration(ms) * time.Millisecond)
		if d, _ := m.Allow(context.Background(), "k", 2); d.Allowed {
			t.Fatalf("Allow at +%dms accepted, want rejected", ms)
		}
	}
	clock.at(time.Minute)
	got, _ := m.Allow(context.Background(), "k", 2)
	want := Decision{Allowed: true, Limit: 2, Remaining: 0, ResetAt: sec(61)}
	if diff := cmp.Diff(want, got, cmpTime); diff != "" {
		t.Errorf("Allow(%q) after the rejections mismatch (-want +got):\n%s", "k", diff)
	}
}

func TestMemoryKeysIndependent(t *testing.T) {
	clock := newFakeClock()
	m := NewMemory(time.Minute, clock.now)
	ctx := context.Background()
	if d, _ := m.Allow(ctx, "a", 1); !d.Allowed {
		t.Fatal("first request of a rejected")
	}
	if d, _ := m.Allow(ctx, "a", 1); d.Allowed {
		t.Fatal("second request of a accepted with limit 1")
	}
	got, _ := m.Allow(ctx, "b", 1)
	want := Decision{Allowed: true, Limit: 1, Remaining: 0, ResetAt: sec(60)}
	if diff := cmp.Diff(want, got, cmpTime); diff != "" {
		t.Errorf("Allow(%q) mismatch (-want +got):\n%s", "b", diff)
	}
}

func TestMemoryPeekCountsNothing(t *testing.T) {
	clock := newFakeClock()
	m := NewMemory(time.Minute, clock.now)
	ctx := context.Background()
	tests := []struct {
		name string
		do   func() (Decision, error)
		want Decision
	}{
		{"peek unknown", func() (Decision, error) { return m.Peek(ctx, "k", 2) }, Decision{Allowed: true, Limit: 2, Remaining: 2}},
		{"peek again", func() (Decision, error) { return m.Peek(ctx, "k", 2) }, Decision{Allowed: true, Limit: 2, Remaining: 2}},
		{"allow", func() (Decision, error) { return m.Allow(ctx, "k", 2) }, Decision{Allowed: true, Limit: 2, Remaining: 1, ResetAt: sec(60)}},
		{"peek after one", func() (Decision, error) { return m.Peek(ctx, "k", 2) }, Decision{Allowed: true, Limit: 2, Remaining: 1, ResetAt: sec(60)}},
		{"allow last", func() (Decision, error) { return m.Allow(ctx, "k", 2) }, Decision{Allowed: true, Limit: 2, Remaining: 0, ResetAt: sec(60)}},
		{"peek full", func() (Decision, error) { return m.Peek(ctx, "k", 2) }, Decision{Limit: 2, RetryAfter: time.Minute, ResetAt: sec(60)}},
	}
	for _, tt := range tests {
		got, err := tt.do()
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, got, cmpTime); diff != "" {
			t.Errorf("%s: mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
	if n := m.keys(); n != 1 {
		t.Errorf("keys after Peek of an unknown key = %d, want 1 (Peek must not create keys)", n)
	}
}

// TestMemoryPeekEmpty: Peek of a limiter that holds no key reads no clock, and once its
// keys are evicted it holds none again.
func TestMemoryPeekEmpty(t *testing.T) {
	clock := newFakeClock()
	var reads atomic.Int64
	m := NewMemory(time.Minute, func() time.Time { reads.Add(1); return clock.now() })
	ctx := context.Background()
	peek := func(step string, wantReads int64) {
		t.Helper()
		reads.Store(0)
		got, err := m.Peek(ctx, "k", 2)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if diff := cmp.Diff(Decision{Allowed: true, Limit: 2, Remaining: 2}, got, cmpTime); diff != "" {
			t.Errorf("%s: Peek mismatch (-want +got):\n%s", step, diff)
		}
		if n := reads.Load(); n != wantReads {
			t.Errorf("%s: Peek read the clock %d times, want %d", step, n, wantReads)
		}
	}
	peek("new limiter", 0)
	_, _ = m.Allow(ctx, "other", 2)
	peek("a key held", 1)
	clock.at(61 * time.Second)
	_, _ = m.Allow(ctx, "k", 2) // sweeps "other" out, holds "k"
	clock.at(122 * time.Second)
	_, _ = m.Peek(ctx, "x", 2) // a Peek never sweeps: "k" is still held
	peek("a key held past its window", 1)
	_, _ = m.Allow(ctx, "other", 2) // sweeps "k" out, holds "other"
	clock.at(183 * time.Second)
	m.maybeSweep(clock.now().UnixNano())
	peek("every key evicted", 0)
}

func TestMemoryEvictsIdleKeys(t *testing.T) {
	clock := newFakeClock()
	m := NewMemory(time.Minute, clock.now)
	ctx := context.Background()
	for i := range 1000 {
		_, _ = m.Allow(ctx, fmt.Sprintf("idle-%d", i), 5)
	}
	clock.at(30 * time.Second)
	_, _ = m.Allow(ctx, "recent", 5)
	if n := m.keys(); n != 1001 {
		t.Fatalf("keys before a window has passed = %d, want 1001", n)
	}
	// One window after the first requests, any call sweeps: the 1000 idle keys go, the key
	// used 31 s ago stays.
	clock.at(61 * time.Second)
	_, _ = m.Allow(ctx, "new", 5)
	if n := m.keys(); n != 2 {
		t.Errorf("keys after the sweep = %d, want 2 (recent and new)", n)
	}
	got, _ := m.Allow(ctx, "recent", 5)
	want := Decision{Allowed: true, Limit: 5, Remaining: 3, ResetAt: sec(90)}
	if diff := cmp.Diff(want, got, cmpTime); diff != "" {
		t.Errorf("Allow(%q) after the sweep mismatch (-want +got):\n%s", "recent", diff)
	}
}

func TestMemoryHugeLimitDoesNotPreallocate(t *testing.T) {
	clock := newFakeClock()
	m := NewMemory(time.Minute, clock.now)
	for range 10 {
		if d, _ := m.Allow(context.Background(), "k", 1<<40); !d.Allowed {
			t.Fatal("rejected under a huge limit")
		}
	}
	l := m.shard("k").logs["k"]
	if c := cap(l.ts); c > 64 {
		t.Errorf("capacity after 10 requests = %d, want at most 64", c)
	}
}

func TestSlidingLogGivesMemoryBack(t *testing.T) {
	var l slidingLog
	for i := range 10_000 {
		l.push(int64(i))
	}
	l.expire(9_989) // 10 left: 9990..9999
	if l.len() != 10 || l.oldest() != 9990 {
		t.Fatalf("after expire: len %d oldest %d, want 10 and 9990", l.len(), l.oldest())
	}
	if c := cap(l.ts); c > 64 {
		t.Errorf("capacity with 10 live after a burst of 10000 = %d, want at most 64", c)
	}
	for i := range 10_000 {
		l.push(int64(20_000 + i))
	}
	l.expire(40_000)
	if l.len() != 0 || l.ts != nil {
		t.Errorf("after a burst of 10000 expired: len %d, capacity %d; want 0 and a nil slice", l.len(), cap(l.ts))
	}
}

func TestSlidingLogClockStepsBack(t *testing.T) {
	var l slidingLog
	l.push(100)
	l.push(90) // the wall clock was set back
	l.push(120)
	if diff := cmp.Diff([]int64{100, 100, 120}, l.ts[l.head:]); diff != "" {
		t.Errorf("push(100, 90, 120) mismatch (-want +got):\n%s", diff)
	}
}

func TestMemoryConcurrent(t *testing.T) {
	clock := newFakeClock()
	const limit, keys, workers, perWorker = 100, 8, 16, 200
	m := NewMemory(time.Minute, clock.now)
	var accepted [keys]atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				k := (w + i) % keys
				d, err := m.Allow(context.Background(), "key-"+strconv.Itoa(k), limit)
				if err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					accepted[k].Add(1)
				}
				if i%50 == 0 {
					_, _ = m.Peek(context.Background(), "key-"+strconv.Itoa(k), limit)
				}
			}
		})
	}
	wg.Wait()
	// 16 × 200 requests spread evenly over 8 keys is 400 a key, all in one instant.
	for k := range keys {
		if got := accepted[k].Load(); got != limit {
			t.Errorf("key-%d: accepted %d, want exactly %d", k, got, limit)
		}
	}
}

func TestNewMemoryRefusesNonPositive(t *testing.T) {
	for _, window := range []time.Duration{0, -time.Second} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewMemory(%s) did not panic", window)
				}
			}()
			NewMemory(window, nil)
		}()
	}
	m := NewMemory(time.Minute, nil)
	for _, limit := range []int{0, -1} {
		if _, err := m.Allow(context.Background(), "k", limit); err == nil {
			t.Errorf("Allow with limit %d succeeded, want an error", limit)
		}
		if _, err := m.Peek(context.Background(), "k", limit); err == nil {
			t.Errorf("Peek with limit %d succeeded, want an error", limit)
		}
	}
}

func BenchmarkMemoryAllowParallel(b *testing.B) {
	m := NewMemory(time.Minute, nil)
	keys := make([]string, 256)
	for i := range keys {
		keys[i] = fmt.Sprintf("%064x", i)
	}
	var n atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := int(n.Add(1))
		for pb.Next() {
			_, _ = m.Allow(context.Background(), keys[i%len(keys)], 1<<30)
			i++
		}
	})
}
