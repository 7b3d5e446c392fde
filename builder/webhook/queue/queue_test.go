package queue_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/trainingco/catalogue/builder/webhook"
	"github.com/trainingco/catalogue/builder/webhook/queue"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// fastConfig is webhooks.* with waits short enough for tests, and loopback allowed.
func fastConfig() config.Webhooks {
	return config.Webhooks{AllowHTTP: true, AllowPrivate: true, Timeout: 300 * time.Millisecond,
		RetryBase: 100 * time.Millisecond, RetryMax: 200 * time.Millisecond, RetryFor: time.Hour,
		DisableAfter: time.Hour, EdgeWait: 5 * time.Second, StuckAfter: 5 * time.Second, Workers: 10}
}

// newDatabase returns a migrated database and a pool on it.
func newDatabase(t *testing.T) (string, *pgxpool.Pool) {
	t.Helper()
	dbURL := testkit.NewDatabase(t)
	ctx := context.Background()
	if err := queue.Migrate(ctx, dbURL); err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return dbURL, pool
}

// startQueue starts a delivering queue (one builder's) that stops with the test.
func startQueue(t *testing.T, pool *pgxpool.Pool, cfg config.Webhooks, served queue.Served) *queue.Queue {
	t.Helper()
	q, err := queue.New(queue.Options{Pool: pool, Config: cfg, Edge: config.Default().Edge, Served: served}, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = q.Stop(ctx)
	})
	return q
}

// addEndpoint registers url and returns its id and secret.
func addEndpoint(t *testing.T, dbURL, url string) (int64, string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	id, secret, err := webhook.Add(ctx, conn, webhook.Rules{AllowHTTP: true, AllowPrivate: true}, url, "")
	if err != nil {
		t.Fatal(err)
	}
	return id, secret
}

// receiver is a partner's endpoint: it verifies each delivery with the Standard Webhooks
// reference library (never the catalogue's code), records it, and answers with answer.
type receiver struct {
	t      *testing.T
	secret string
	answer func(n int, w http.ResponseWriter, r *http.Request) // n counts requests from 0; nil: 200
	mu     sync.Mutex
	got    []delivered
	// inFlight and maxInFlight count requests being answered at once.
	inFlight, maxInFlight int
	delay                 time.Duration
}

type delivered struct {
	id, timestamp string
	body          []byte
	verifyErr     error
	at            time.Time
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	wh, err := standardwebhooks.NewWebhook(rc.secret)
	if err == nil {
		err = wh.Verify(body, r.Header)
	}
	rc.mu.Lock()
	n := len(rc.got)
	rc.got = append(rc.got, delivered{id: r.Header.Get("webhook-id"), timestamp: r.Header.Get("webhook-timestamp"), body: body, verifyErr: err, at: time.Now()})
	rc.inFlight++
	rc.maxInFlight = max(rc.maxInFlight, rc.inFlight)
	rc.mu.Unlock()
	defer func() { rc.mu.Lock(); rc.inFlight--; rc.mu.Unlock() }()
	time.Sleep(rc.delay)
	if rc.answer != nil {
		rc.answer(n, w, r)
	}
}

func (rc *receiver) deliveries() []delivered {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// changedBody is catalogue.changed as a partner decodes it (D41).
type changedBody struct {
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Data      struct {
		Snapshot  string   `json:"snapshot"`
		Courses   *[]int64 `json:"courses"`
		Classes   *[]int64 `json:"classes"`
		Truncated bool     `json:"truncated"`
		Feeds     struct {
			Courses, Classes string
		} `json:"feeds"`
	} `json:"data"`
}

func decode(t *testing.T, b []byte) changedBody {
	t.Helper()
	var c changedBody
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("body %s: %v", b, err)
	}
	return c
}

// TestDeliversInOrder: every enabled endpoint gets every change, in order, each verified by
// the reference library; a slow endpoint delays no other, and is sent one at a time.
func TestDeliversInOrder(t *testing.T) {
	dbURL, pool := newDatabase(t)
	fast := &receiver{t: t}
	slow := &receiver{t: t, delay: 150 * time.Millisecond}
	fastSrv, slowSrv := httptest.NewServer(fast), httptest.NewServer(slow)
	defer fastSrv.Close()
	defer slowSrv.Close()
	_, fast.secret = addEndpoint(t, dbURL, fastSrv.URL)
	_, slow.secret = addEndpoint(t, dbURL, slowSrv.URL)
	q := startQueue(t, pool, fastConfig(), nil)

	ctx := context.Background()
	var ids []string
	for i := range 5 {
		id, err := q.Enqueue(ctx, queue.Change{Snapshot: "snap-" + string(rune('a'+i)), Courses: []int64{int64(i + 1)}, Classes: []int64{100 + int64(i)}, After: 1000 + int64(i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	testkit.WaitFor(t, 10*time.Second, "five deliveries to each endpoint", func() bool {
		return len(fast.deliveries()) >= 5 && len(slow.deliveries()) >= 5
	})
	for name, rc := range map[string]*receiver{"fast": fast, "slow": slow} {
		got := rc.deliveries()
		var gotIDs []string
		for i, d := range got {
			gotIDs = append(gotIDs, d.id)
			if d.verifyErr != nil {
				t.Errorf("%s: delivery %d does not verify with the reference library: %v", name, i, d.verifyErr)
			}
			c := decode(t, d.body)
			if c.Type != webhook.TypeChanged || c.Data.Snapshot != "snap-"+string(rune('a'+i)) || c.Data.Courses == nil ||
				!slices.Equal(*c.Data.Courses, []int64{int64(i + 1)}) || !slices.Equal(*c.Data.Classes, []int64{100 + int64(i)}) {
				t.Errorf("%s: delivery %d = %s", name, i, d.body)
			}
			if want := fmt.Sprintf("/api/v2/public/feeds/classes?afterChangeNumber=%d", 1000+i); c.Data.Feeds.Classes != want {
				t.Errorf("%s: feeds.classes = %q, want %q: the position before the change", name, c.Data.Feeds.Classes, want)
			}
			if _, err := time.Parse(time.RFC3339, c.Timestamp); err != nil {
				t.Errorf("%s: timestamp %q is not RFC 3339", name, c.Timestamp)
			}
		}
		if !slices.Equal(gotIDs, ids) {
			t.Errorf("%s received webhook-ids %v, want %v in snapshot order, once each", name, gotIDs, ids)
		}
		if rc.maxInFlight != 1 {
			t.Errorf("%s had %d deliveries in flight at once, want 1", name, rc.maxInFlight)
		}
	}
	// The fast endpoint did not wait for the slow one: it had all five before the slow one's third.
	if f, s := fast.deliveries()[4].at, slow.deliveries()[2].at; f.After(s) {
		t.Errorf("the fast endpoint's last delivery came at %v, after the slow one's third at %v", f, s)
	}
}

// TestRetriesKeepTheID: an endpoint answering 500, then too slowly, then 200 gets the same
// webhook-id and body three times, each signed afresh, and the record shows the success.
func TestRetriesKeepTheID(t *testing.T) {
	dbURL, pool := newDatabase(t)
	rc := &receiver{t: t, answer: func(n int, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 0:
			w.WriteHeader(http.StatusInternalServerError)
		case 1:
			select { // past webhooks.timeout (300ms)
			case <-r.Context().Done():
			case <-time.After(time.Second):
			}
		}
	}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	_, rc.secret = addEndpoint(t, dbURL, srv.URL)
	q := startQueue(t, pool, fastConfig(), nil)
	id, err := q.Enqueue(context.Background(), queue.Change{Snapshot: "s1", Classes: []int64{7}})
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 10*time.Second, "three attempts", func() bool { return len(rc.deliveries()) >= 3 })
	time.Sleep(500 * time.Millisecond) // a fourth attempt would come within this
	got := rc.deliveries()
	if len(got) != 3 {
		t.Fatalf("%d attempts, want 3 (500, timeout, 200)", len(got))
	}
	for i, d := range got {
		if d.id != id || string(d.body) != string(got[0].body) || d.verifyErr != nil {
			t.Errorf("attempt %d: webhook-id %s (want %s), same body %t, verified: %v", i, d.id, id, string(d.body) == string(got[0].body), d.verifyErr)
		}
	}
	var attempts, failures int
	var delivered, lastFailure *time.Time
	var reason *string
	err = pool.QueryRow(context.Background(), `SELECT d.attempts, d.delivered_at, e.consecutive_failures, e.last_failure_at, e.last_failure_reason
		FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id`).Scan(&attempts, &delivered, &failures, &lastFailure, &reason)
	if err != nil {
		t.Fatal(err)
	}
	if attempts != 3 || delivered == nil || failures != 0 || lastFailure == nil || reason == nil || *reason == "" {
		t.Errorf("record: %d attempts, delivered %v, %d failures in a row, last failure %v (%v); want 3, delivered, 0, a failure with its reason",
			attempts, delivered, failures, lastFailure, reason)
	}
}

func TestBackoff(t *testing.T) {
	base, limit := 5*time.Second, time.Hour
	for _, tc := range []struct {
		attempt int
		max     time.Duration
	}{{1, 5 * time.Second}, {2, 10 * time.Second}, {3, 20 * time.Second}, {10, 2560 * time.Second}, {11, time.Hour}, {40, time.Hour}} {
		for range 20 {
			d := queue.Backoff(base, limit, tc.attempt)
			if d > tc.max || d < tc.max*4/5 {
				t.Fatalf("queue.Backoff(attempt %d) = %v, want within [%v, %v]", tc.attempt, d, tc.max*4/5, tc.max)
			}
		}
	}
	// At the defaults a message is retried for at least 24 h in 35 attempts or so.
	var total time.Duration
	n := 0
	for total < 24*time.Hour {
		n++
		total += queue.Backoff(base, limit, n)
	}
	if n < 25 || n > 45 {
		t.Errorf("24 h of retries take %d attempts", n)
	}
}

// TestBackoffJitter (D42: "exponential backoff and jitter"): the waits after the same
// attempt vary, over the documented range (less up to a fifth of the wait, at random), so
// that endpoints failing together are not retried together. With the jitter uniform, 1,000
// draws all in one half of the range have a chance of 2^-999: the test does not flake.
func TestBackoffJitter(t *testing.T) {
	base, limit := 5*time.Second, time.Hour
	for _, tc := range []struct {
		attempt int
		max     time.Duration
	}{{1, 5 * time.Second}, {3, 20 * time.Second}, {11, time.Hour}} {
		mid := tc.max * 9 / 10
		var lower, upper int
		for range 1000 {
			switch d := queue.Backoff(base, limit, tc.attempt); {
			case d < tc.max*4/5 || d > tc.max:
				t.Fatalf("queue.Backoff(attempt %d) = %v, want within [%v, %v]", tc.attempt, d, tc.max*4/5, tc.max)
			case d < mid:
				lower++
			default:
				upper++
			}
		}
		if lower == 0 || upper == 0 {
			t.Errorf("queue.Backoff(attempt %d): %d of 1,000 waits below %v and %d from it, want both: no jitter over [%v, %v]",
				tc.attempt, lower, mid, upper, tc.max*4/5, tc.max)
		}
	}
}

// TestRetriedForRetryFor: a message that keeps failing is retried for at least
// webhooks.retry_for (D42: "for at least 24 hours") and given up at the first failure after
// it, whatever the jitter, at the defaults: its last attempt comes 24 h or more after its
// first, and less than one longest backoff later.
func TestRetriedForRetryFor(t *testing.T) {
	cfg := config.Default().Webhooks
	first := time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)
	for range 50 {
		now := first
		for attempt := 1; ; attempt++ {
			wait := queue.Backoff(cfg.RetryBase, cfg.RetryMax, attempt)
			if queue.GivesUp(first, now, cfg.RetryFor) {
				break
			}
			now = now.Add(wait)
		}
		if last := now.Sub(first); last < cfg.RetryFor || last >= cfg.RetryFor+cfg.RetryMax {
			t.Fatalf("the last attempt came %v after the first, want within [%v, %v)", last, cfg.RetryFor, cfg.RetryFor+cfg.RetryMax)
		}
	}
}

// need returns the environment variable naming a service, skipping or failing without it.
func need(t *testing.T, env string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		if os.Getenv("CATALOGUE_TEST_REQUIRE") != "" {
			t.Fatalf("%s is not set: make test starts the services and sets it", env)
		}
		t.Skipf("%s is not set", env)
	}
	return v
}
