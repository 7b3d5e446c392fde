package ratelimit

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/trainingco/catalogue/edge/ratelimit/redistest"
)

// newTestRedis returns a limiter on the shared test Redis under a prefix of this test's own,
// on the clock now (nil: Redis's own). These tests check what Redis decides, not how long
// it may take: the timeout leaves room for a machine busy with other tests.
func newTestRedis(t *testing.T, now func() time.Time) (*Redis, RedisOptions) {
	t.Helper()
	o := RedisOptions{URL: redistest.URL(t), Prefix: redistest.Prefix(), Now: now, Timeout: 5 * time.Second}
	r, err := NewRedis(o)
	if err != nil {
		t.Fatalf("NewRedis: %v", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r, o
}

// bothLimiters makes each limiter on a fake clock, for a subtest: the Redis one needs the
// subtest's t, which skips (or fails, under CATALOGUE_TEST_REQUIRE) without a Redis.
func bothLimiters() map[string]func(*testing.T, *fakeClock) Limiter {
	return map[string]func(*testing.T, *fakeClock) Limiter{
		"memory": func(_ *testing.T, c *fakeClock) Limiter { return NewMemory(time.Minute, c.now) },
		"redis":  func(t *testing.T, c *fakeClock) Limiter { r, _ := newTestRedis(t, c.now); return r },
	}
}

type step struct {
	at    float64 // seconds after t0
	limit int
	want  Decision
}

// runSteps calls Allow for key at each step's time and compares the decision.
func runSteps(t *testing.T, clock *fakeClock, l Limiter, key string, steps []step) {
	t.Helper()
	for i, s := range steps {
		clock.at(time.Duration(s.at * float64(time.Second)))
		got, err := l.Allow(context.Background(), key, s.limit)
		if err != nil {
			t.Fatalf("step %d: Allow: %v", i, err)
		}
		if diff := cmp.Diff(s.want, got, cmpTime); diff != "" {
			t.Errorf("step %d: Allow(%q, %d) at +%gs mismatch (-want +got):\n%s", i, key, s.limit, s.at, diff)
		}
	}
}

func TestRedisAllowSlidingWindow(t *testing.T) {
	clock := newFakeClock()
	r, _ := newTestRedis(t, clock.now)
	// An accepted request has no ResetAt from Redis (Decision.ResetAt).
	runSteps(t, clock, r, "k", []step{
		{0, 3, Decision{Allowed: true, Limit: 3, Remaining: 2}},
		{10, 3, Decision{Allowed: true, Limit: 3, Remaining: 1}},
		{20, 3, Decision{Allowed: true, Limit: 3, Remaining: 0}},
		// The fourth in the window: rejected until the request at 0 leaves it at 60.
		{30, 3, Decision{Limit: 3, RetryAfter: 30 * time.Second, ResetAt: sec(60)}},
		{30.2, 3, Decision{Limit: 3, RetryAfter: 30 * time.Second, ResetAt: sec(60)}}, // 29.8 s rounds up
		{59.999, 3, Decision{Limit: 3, RetryAfter: time.Second, ResetAt: sec(60)}},    // at least 1 s
		// At 60 only the request at 0 has left: one slot, not a fresh window of three.
		{60, 3, Decision{Allowed: true, Limit: 3, Remaining: 0}},
		{60, 3, Decision{Limit: 3, RetryAfter: 10 * time.Second, ResetAt: sec(70)}},
		{70, 3, Decision{Allowed: true, Limit: 3, Remaining: 0}},
		// Accepted at 20, 60 and 70; at 125 only 70 is in the window.
		{125, 3, Decision{Allowed: true, Limit: 3, Remaining: 1}},
	})
}

// TestPerKeyLimit: each call carries its key's limit, and a limit lowered while the window
// holds more than the new limit rejects until enough requests have left it; the same for
// both limiters.
func TestPerKeyLimit(t *testing.T) {
	for name, newLimiter := range bothLimiters() {
		t.Run(name, func(t *testing.T) {
			clock := newFakeClock()
			l := newLimiter(t, clock)
			run := func(key string, steps []step) {
				for i := range steps {
					if name == "redis" && steps[i].want.Allowed {
						steps[i].want.ResetAt = time.Time{} // not looked up by Redis (Decision.ResetAt)
					}
				}
				runSteps(t, clock, l, key, steps)
			}
			run("a", []step{
				{0, 1, Decision{Allowed: true, Limit: 1, Remaining: 0, ResetAt: sec(60)}},
				{1, 1, Decision{Limit: 1, RetryAfter: 59 * time.Second, ResetAt: sec(60)}},
				{2, 3, Decision{Allowed: true, Limit: 3, Remaining: 1, ResetAt: sec(60)}}, // raised to 3
				{3, 3, Decision{Allowed: true, Limit: 3, Remaining: 0, ResetAt: sec(60)}},
				{4, 2, Decision{Limit: 2, RetryAfter: 58 * time.Second, ResetAt: sec(62)}}, // lowered to 2: 3 held, 2 must leave
				{60, 2, Decision{Limit: 2, RetryAfter: 2 * time.Second, ResetAt: sec(62)}}, // 2 held (at 2 and 3)
				{62, 2, Decision{Allowed: true, Limit: 2, Remaining: 0, ResetAt: sec(63)}},
			})
			// Another key is untouched by all of that.
			run("b", []step{
				{62, 2, Decision{Allowed: true, Limit: 2, Remaining: 1, ResetAt: sec(122)}},
			})
		})
	}
}

// TestLoweredLimitReset checks the time told to wait after a key's limit is lowered below
// what it holds: a request is accepted again once held - limit + 1 of its requests have left
// the window, so the reset is when the (held - limit + 1)-th oldest leaves, not the oldest
// (which told a client with 20 held and a new limit of 4 to come back 16 s too early).
func TestLoweredLimitReset(t *testing.T) {
	for name, newLimiter := range bothLimiters() {
		t.Run(name, func(t *testing.T) {
			clock := newFakeClock()
			l := newLimiter(t, clock)
			for i := range 20 { // one a second at 0..19, at a limit of 60
				clock.at(time.Duration(i) * time.Second)
				if d, err := l.Allow(context.Background(), "k", 60); err != nil || !d.Allowed {
					t.Fatalf("request %d: %+v, %v; want accepted", i+1, d, err)
				}
			}
			runSteps(t, clock, l, "k", []step{
				// Lowered to 4 with 20 held: the requests of 0..16 must leave; the 17th oldest's
				// (at 16) leaves at 76.
				{20, 4, Decision{Limit: 4, RetryAfter: 56 * time.Second, ResetAt: sec(76)}},
				{60.5, 4, Decision{Limit: 4, RetryAfter: 16 * time.Second, ResetAt: sec(76)}}, // whole seconds, rounded up
				{75.5, 4, Decision{Limit: 4, RetryAfter: time.Second, ResetAt: sec(76)}},
			})
			clock.at(76 * time.Second)
			if d, err := l.Allow(context.Background(), "k", 4); err != nil || !d.Allowed || d.Remaining != 0 {
				t.Errorf("at the reset told: %+v, %v; want accepted with 0 remaining", d, err)
			}
			// Peek tells the same: at 77 the requests of 18, 19 and 76 are held; at a limit of 2
			// the one of 19 must leave too.
			clock.at(77 * time.Second)
			if d, err := l.Peek(context.Background(), "k", 2); err != nil || d.Allowed || !d.ResetAt.Equal(sec(79)) {
				t.Errorf("Peek at 77 s with 3 held and a limit of 2: %+v, %v; want refused until 79 s", d, err)
			}
		})
	}
}

func TestRedisExactlyLimitPerWindow(t *testing.T) {
	for _, limit := range []int{1, 60} {
		t.Run(strconv.Itoa(limit), func(t *testing.T) {
			clock := newFakeClock()
			r, _ := newTestRedis(t, clock.now)
			var times []time.Duration
			// Two requests a second for three minutes.
			for ms := 0; ms < 180_000; ms += 500 {
				clock.at(time.Duration(ms) * time.Millisecond)
				d, err := r.Allow(context.Background(), "k", limit)
				if err != nil {
					t.Fatal(err)
				}
				if d.Allowed {
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
			if want := limit * 3; len(times) != want {
				t.Errorf("accepted %d requests in three minutes, want %d", len(times), want)
			}
		})
	}
}

func TestRedisPeekCountsNothing(t *testing.T) {
	clock := newFakeClock()
	r, _ := newTestRedis(t, clock.now)
	ctx := context.Background()
	tests := []struct {
		name string
		do   func() (Decision, error)
		want Decision
	}{
		{"peek unknown", func() (Decision, error) { return r.Peek(ctx, "k", 2) }, Decision{Allowed: true, Limit: 2, Remaining: 2}},
		{"allow", func() (Decision, error) { return r.Allow(ctx, "k", 2) }, Decision{Allowed: true, Limit: 2, Remaining: 1}},
		{"peek after one", func() (Decision, error) { return r.Peek(ctx, "k", 2) }, Decision{Allowed: true, Limit: 2, Remaining: 1, ResetAt: sec(60)}},
		{"allow last", func() (Decision, error) { return r.Allow(ctx, "k", 2) }, Decision{Allowed: true, Limit: 2, Remaining: 0}},
		{"peek full", func() (Decision, error) { return r.Peek(ctx, "k", 2) }, Decision{Limit: 2, RetryAfter: time.Minute, ResetAt: sec(60)}},
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
}

// TestRedisSharedByEdges: two limiters on one Redis are two edges; hammered at once from
// both, each key accepts exactly its limit in total.
func TestRedisSharedByEdges(t *testing.T) {
	a, o := newTestRedis(t, nil)
	b, err := NewRedis(o)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const limit, keys, workers, perWorker = 50, 4, 16, 40
	var accepted [keys]atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		edge := []*Redis{a, b}[w%2]
		wg.Go(func() {
			for i := range perWorker {
				k := (w/2 + i) % keys
				d, err := edge.Allow(context.Background(), "key-"+strconv.Itoa(k), limit)
				if err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					accepted[k].Add(1)
				}
			}
		})
	}
	wg.Wait()
	// 16 × 40 requests over 4 keys is 160 a key, all within a few seconds.
	for k := range keys {
		if got := accepted[k].Load(); got != limit {
			t.Errorf("key-%d: accepted %d across both edges, want exactly %d", k, got, limit)
		}
	}
}

// TestRedisServerClock: without an injected clock the script uses Redis's, and idle logs
// expire with the window.
func TestRedisServerClock(t *testing.T) {
	r, o := newTestRedis(t, nil)
	ctx := context.Background()
	before := time.Now()
	for range 2 {
		if d, err := r.Allow(ctx, "k", 2); err != nil || !d.Allowed {
			t.Fatalf("Allow = %+v, %v; want accepted", d, err)
		}
	}
	d, err := r.Allow(ctx, "k", 2)
	if err != nil || d.Allowed {
		t.Fatalf("third Allow = %+v, %v; want rejected", d, err)
	}
	// Redis runs on this machine: its clock is ours, give or take the test's own duration.
	if d.RetryAfter != time.Minute || d.ResetAt.Before(before.Add(time.Minute-time.Second)) || d.ResetAt.After(time.Now().Add(time.Minute+time.Second)) {
		t.Errorf("rejection = %+v, want RetryAfter 1m and ResetAt a minute from now", d)
	}
	ttl, err := r.client.PTTL(ctx, o.Prefix+"k").Result()
	if err != nil || ttl <= 55*time.Second || ttl > time.Minute {
		t.Errorf("PTTL of the log = %s, %v; want just under a minute", ttl, err)
	}
}

// TestRedisUnreachableFailsFast: a Redis that refuses connections, and one that accepts them
// and never answers, both give an error within about the timeout.
func TestRedisUnreachableFailsFast(t *testing.T) {
	refused := closedPort(t)
	hung, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hung.Close()
	go func() { // accept and hold every connection, answering nothing
		var held []net.Conn
		for {
			c, err := hung.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	for name, addr := range map[string]string{"refused": refused, "hung": hung.Addr().String()} {
		t.Run(name, func(t *testing.T) {
			r, err := NewRedis(RedisOptions{URL: "redis://" + addr + "/0", Timeout: 30 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for i := range 3 {
				start := time.Now()
				_, err := r.Allow(context.Background(), "k", 5)
				// 30ms, and room for a machine busy with other tests.
				if took := time.Since(start); err == nil || took > time.Second {
					t.Errorf("call %d: Allow took %s with error %v; want an error within about 30ms", i, took, err)
				}
			}
		})
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestRedisPassword: a password in the URL wins; without one, RedisOptions.Password is used.
func TestRedisPassword(t *testing.T) {
	srv := redistest.Start(t)
	admin := redis.NewClient(mustParseURL(t, srv.URL))
	if err := admin.ConfigSet(context.Background(), "requirepass", "s3cret").Err(); err != nil {
		t.Fatal(err)
	}
	admin.Close()
	withPassword := "redis://:s3cret@" + srv.URL[len("redis://"):]
	wrong := "redis://:wrong@" + srv.URL[len("redis://"):]
	tests := []struct {
		name, url, password string
		ok                  bool
	}{
		{"none", srv.URL, "", false},
		{"from options", srv.URL, "s3cret", true},
		{"in the URL", withPassword, "", true},
		{"the URL's wins", wrong, "s3cret", false},
	}
	for _, tt := range tests {
		r, err := NewRedis(RedisOptions{URL: tt.url, Password: tt.password, Timeout: time.Second})
		if err != nil {
			t.Fatalf("%s: NewRedis: %v", tt.name, err)
		}
		_, err = r.Allow(context.Background(), "k", 1)
		r.Close()
		if ok := err == nil; ok != tt.ok {
			t.Errorf("%s: Allow error = %v, want success %v", tt.name, err, tt.ok)
		}
	}
}

func mustParseURL(t *testing.T, u string) *redis.Options {
	t.Helper()
	o, err := redis.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestNewRedisBadURL(t *testing.T) {
	for _, u := range []string{"", "http://127.0.0.1:6379", "redis://127.0.0.1:6379/x", "redis://h/0?bogus=1"} {
		if _, err := NewRedis(RedisOptions{URL: u}); err == nil {
			t.Errorf("NewRedis(%q) succeeded, want an error", u)
		}
	}
	r, err := NewRedis(RedisOptions{URL: "redis://127.0.0.1:1/0"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Allow(context.Background(), "k", 0); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Allow with limit 0 = %v, want a refusal before any call", err)
	}
}
