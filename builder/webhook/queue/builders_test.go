package queue_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/webhook/edges"
	"github.com/trainingco/catalogue/builder/webhook/queue"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestTwoBuildersNeverDeliverTogether: two builders' queues share the work on one database;
// no endpoint ever has two deliveries in flight, and each gets every message once, in order.
func TestTwoBuildersNeverDeliverTogether(t *testing.T) {
	dbURL, pool := newDatabase(t)
	var rcs []*receiver
	for range 4 {
		rc := &receiver{t: t, delay: 30 * time.Millisecond}
		srv := httptest.NewServer(rc)
		defer srv.Close()
		_, rc.secret = addEndpoint(t, dbURL, srv.URL)
		rcs = append(rcs, rc)
	}
	a := startQueue(t, pool, fastConfig(), nil)
	b := startQueue(t, pool, fastConfig(), nil)
	var ids []string
	for i := range 12 {
		q := a
		if i%2 == 1 {
			q = b
		}
		id, err := q.Enqueue(context.Background(), queue.Change{Snapshot: "s", Classes: []int64{int64(i)}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	testkit.WaitFor(t, 20*time.Second, "every message at every endpoint", func() bool {
		for _, rc := range rcs {
			if len(rc.deliveries()) < len(ids) {
				return false
			}
		}
		return true
	})
	time.Sleep(200 * time.Millisecond) // a duplicate would come within this
	for i, rc := range rcs {
		var got []string
		for _, d := range rc.deliveries() {
			got = append(got, d.id)
		}
		if !slices.Equal(got, ids) || rc.maxInFlight != 1 {
			t.Errorf("endpoint %d: %d deliveries (%d at once at most), in order %t; want each of %d once, one at a time, in order",
				i, len(got), rc.maxInFlight, slices.Equal(got, ids), len(ids))
		}
	}
}

// TestGivesUpThenDisables: a message retried for webhooks.retry_for is given up and the
// next one tried; an endpoint failing for webhooks.disable_after is disabled, its messages
// given up, and the others are not held back.
func TestGivesUpThenDisables(t *testing.T) {
	dbURL, pool := newDatabase(t)
	down := &receiver{t: t, answer: func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }}
	up := &receiver{t: t}
	downSrv, upSrv := httptest.NewServer(down), httptest.NewServer(up)
	defer downSrv.Close()
	defer upSrv.Close()
	_, down.secret = addEndpoint(t, dbURL, downSrv.URL)
	_, up.secret = addEndpoint(t, dbURL, upSrv.URL)
	cfg := fastConfig()
	// Three messages given up (three attempts each, about 0.3 s) well within DisableAfter.
	cfg.RetryFor, cfg.DisableAfter = 250*time.Millisecond, 3*time.Second
	q := startQueue(t, pool, cfg, nil)
	var ids []string
	for range 3 {
		id, err := q.Enqueue(context.Background(), queue.Change{Snapshot: "s", Classes: []int64{1}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	testkit.WaitFor(t, 10*time.Second, "the three messages given up", func() bool {
		var n int
		_ = pool.QueryRow(context.Background(), "SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = 1 AND given_up_at IS NOT NULL").Scan(&n)
		return n == 3
	})
	// The next failure past webhooks.disable_after since the first disables the endpoint.
	time.Sleep(cfg.DisableAfter)
	id, err := q.Enqueue(context.Background(), queue.Change{Snapshot: "s", Classes: []int64{1}})
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, id)
	testkit.WaitFor(t, 15*time.Second, "the failing endpoint disabled", func() bool {
		var disabled bool
		_ = pool.QueryRow(context.Background(), "SELECT disabled_at IS NOT NULL FROM webhook_endpoints WHERE id = 1").Scan(&disabled)
		return disabled
	})
	seen := map[string]bool{}
	for _, d := range down.deliveries() {
		seen[d.id] = true
	}
	if !seen[ids[0]] || !seen[ids[1]] || !seen[ids[2]] || !seen[ids[3]] {
		t.Errorf("the failing endpoint got %v: after giving the first message up the next ones must be tried", seen)
	}
	var pending int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = 1 AND delivered_at IS NULL AND given_up_at IS NULL").Scan(&pending); err != nil || pending != 0 {
		t.Errorf("a disabled endpoint keeps %d deliveries pending (%v)", pending, err)
	}
	testkit.WaitFor(t, 15*time.Second, "the healthy endpoint's four", func() bool { return len(up.deliveries()) == 4 })
	// A disabled endpoint gets no new messages.
	before := len(down.deliveries())
	if _, err := q.Enqueue(context.Background(), queue.Change{Snapshot: "s2", Classes: []int64{2}}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 15*time.Second, "the healthy endpoint's fifth", func() bool { return len(up.deliveries()) == 5 })
	if after := len(down.deliveries()); after != before {
		t.Errorf("a disabled endpoint got %d more deliveries", after-before)
	}
}

// TestWaitsForEveryEdge (D42): a delivery waits until every edge reporting in Redis serves
// its snapshot or a later one; an edge whose report expired (one that went away) holds
// nothing back: edge c, still reporting an older snapshot, holds the delivery until its
// report expires.
func TestWaitsForEveryEdge(t *testing.T) {
	rdb, prefix := edgeReports(t)
	ctx := context.Background()
	t.Cleanup(func() { rdb.Del(context.Background(), prefix+"a", prefix+"b", prefix+"c") })
	for _, edge := range []string{"a", "b", "c"} {
		rdb.Set(ctx, prefix+edge, "20261126T100000.000Z-aaaaaaaa", time.Minute)
	}

	dbURL, pool := newDatabase(t)
	rc := &receiver{t: t}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	_, rc.secret = addEndpoint(t, dbURL, srv.URL)
	reports := edges.Served{Redis: rdb, Prefix: prefix, Poll: time.Second}
	q := startQueue(t, pool, fastConfig(), reports)
	next := "20261126T100500.000Z-bbbbbbbb"
	if _, err := q.Enqueue(ctx, queue.Change{Snapshot: next, Classes: []int64{1}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if n := len(rc.deliveries()); n != 0 {
		t.Fatalf("delivered while no edge served the snapshot")
	}
	rdb.Set(ctx, prefix+"a", next, time.Minute)
	time.Sleep(500 * time.Millisecond)
	if n := len(rc.deliveries()); n != 0 {
		t.Fatalf("delivered while one edge of three served the snapshot")
	}
	rdb.Set(ctx, prefix+"b", "20261126T101000.000Z-cccccccc", time.Minute) // a later one serves too
	time.Sleep(500 * time.Millisecond)
	if n := len(rc.deliveries()); n != 0 {
		t.Fatalf("delivered while edge c, still reporting, served an older snapshot")
	}
	rdb.PExpire(ctx, prefix+"c", 100*time.Millisecond) // c stops reporting: its report expires
	testkit.WaitFor(t, 3*time.Second, "the delivery once c's report has expired", func() bool { return len(rc.deliveries()) == 1 })
}

// TestNeverSentBeforeEveryEdgeServes (D42): an edge still reporting an older snapshot past
// webhooks.edge_wait holds the delivery back, through the job's later runs, until it serves
// the snapshot; the wait is counted once per message, here one to two endpoints whose
// edge_wait ends after the first run of their jobs.
func TestNeverSentBeforeEveryEdgeServes(t *testing.T) {
	rdb, prefix := edgeReports(t)
	ctx := context.Background()
	t.Cleanup(func() { rdb.Del(context.Background(), prefix+"stuck") })
	rdb.Set(ctx, prefix+"stuck", "20261126T100000.000Z-aaaaaaaa", time.Minute)

	dbURL, pool := newDatabase(t)
	rc, rc2 := &receiver{t: t}, &receiver{t: t}
	srv, srv2 := httptest.NewServer(rc), httptest.NewServer(rc2)
	defer srv.Close()
	defer srv2.Close()
	_, rc.secret = addEndpoint(t, dbURL, srv.URL)
	_, rc2.secret = addEndpoint(t, dbURL, srv2.URL)
	cfg := fastConfig()
	cfg.StuckAfter = 1300 * time.Millisecond // a run lasts (1.3 s - 0.3 s) / 2: several runs below
	cfg.EdgeWait = 700 * time.Millisecond    // past the first run
	reg := prometheus.NewRegistry()
	q, err := queue.New(queue.Options{Pool: pool, Config: cfg, Edge: config.Default().Edge,
		Served: edges.Served{Redis: rdb, Prefix: prefix, Poll: time.Second}, Metrics: queue.NewMetrics(reg, nil)}, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = q.Stop(ctx)
	})
	next := "20261126T100500.000Z-bbbbbbbb"
	if _, err := q.Enqueue(ctx, queue.Change{Snapshot: next, Classes: []int64{1}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // 15 times webhooks.edge_wait
	if n := len(rc.deliveries()) + len(rc2.deliveries()); n != 0 {
		t.Fatalf("%d deliveries while an edge served an older snapshot, want none", n)
	}
	const counted = `
# HELP catalogue_builder_webhook_edge_wait_timeouts_total Messages that waited past webhooks.edge_wait for the edges to serve their snapshot (they wait on: D42).
# TYPE catalogue_builder_webhook_edge_wait_timeouts_total counter
catalogue_builder_webhook_edge_wait_timeouts_total 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(counted), "catalogue_builder_webhook_edge_wait_timeouts_total"); err != nil {
		t.Errorf("counted once per message: %v", err)
	}
	rdb.Set(ctx, prefix+"stuck", next, time.Minute)
	testkit.WaitFor(t, 5*time.Second, "the deliveries once the edge serves it", func() bool {
		return len(rc.deliveries()) == 1 && len(rc2.deliveries()) == 1
	})
}

// edgeReports returns a client of the test Redis and the prefix under which this test's
// edges report the snapshot they serve (snapshot.EdgeServedPrefix of a store of its own).
func edgeReports(t *testing.T) (*redis.Client, string) {
	t.Helper()
	opts, err := redis.ParseURL(need(t, "CATALOGUE_TEST_REDIS_URL"))
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb, snapshot.EdgeServedPrefix("file:///"+t.Name(), "")
}
