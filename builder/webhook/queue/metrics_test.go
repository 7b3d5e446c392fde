package queue_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/trainingco/catalogue/builder/webhook/queue"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestMetrics: deliveries by outcome, the commit-to-delivered latency, the queue's depth and
// its oldest message, read from the database at each scrape; and the feeds' absolute URLs
// with edge.public_url.
func TestMetrics(t *testing.T) {
	dbURL, pool := newDatabase(t)
	rc := &receiver{t: t, answer: func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			w.WriteHeader(http.StatusBadGateway)
		}
	}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	_, rc.secret = addEndpoint(t, dbURL, srv.URL)
	reg := prometheus.NewRegistry()
	edge := config.Default().Edge
	edge.PublicURL = "https://catalogue.example.com"
	q, err := queue.New(queue.Options{Pool: pool, Config: fastConfig(), Edge: edge, Metrics: queue.NewMetrics(reg, pool)}, true)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	noticed := time.Now().Add(-2 * time.Second) // the commit was noticed 2 s ago
	if _, err := q.Enqueue(ctx, queue.Change{Snapshot: "s", Classes: []int64{5}, After: 77, Noticed: noticed}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	depth := `
# HELP catalogue_builder_webhook_queue_depth Webhook deliveries not yet made to enabled endpoints.
# TYPE catalogue_builder_webhook_queue_depth gauge
catalogue_builder_webhook_queue_depth %d
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(strings.Replace(depth, "%d", "1", 1)), "catalogue_builder_webhook_queue_depth"); err != nil {
		t.Error(err)
	}
	// Its age is counted from its queueing (100 ms ago), not from the commit's notice (2 s).
	if age := gauge(t, reg, "catalogue_builder_webhook_oldest_pending_seconds"); age < 0.1 || age >= 1.5 {
		t.Errorf("oldest pending %v s, want the message's age since it was queued", age)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = q.Stop(context.Background()) }()
	testkit.WaitFor(t, 10*time.Second, "the retry's success", func() bool { return len(rc.deliveries()) == 2 })
	time.Sleep(100 * time.Millisecond)
	outcomes := `
# HELP catalogue_builder_webhook_deliveries_total Webhook delivery attempts by outcome: delivered (a 2xx) or failed (anything else); given_up counts the failed messages retried for webhooks.retry_for and dropped.
# TYPE catalogue_builder_webhook_deliveries_total counter
catalogue_builder_webhook_deliveries_total{outcome="delivered"} 1
catalogue_builder_webhook_deliveries_total{outcome="failed"} 1
catalogue_builder_webhook_deliveries_total{outcome="given_up"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(outcomes+strings.Replace(depth, "%d", "0", 1)),
		"catalogue_builder_webhook_deliveries_total", "catalogue_builder_webhook_queue_depth"); err != nil {
		t.Error(err)
	}
	if n, err := testutil.GatherAndCount(reg, "catalogue_builder_webhook_commit_to_delivered_seconds"); err != nil || n != 1 {
		t.Errorf("commit_to_delivered: %d series (%v)", n, err)
	}
	c := decode(t, rc.deliveries()[1].body)
	if c.Data.Feeds.Classes != "https://catalogue.example.com/api/v2/public/feeds/classes?afterChangeNumber=77" ||
		c.Data.Feeds.Courses != "https://catalogue.example.com/api/v2/public/feeds/courses?afterChangeNumber=77" {
		t.Errorf("feeds = %+v, want edge.public_url, the base path and afterChangeNumber=77", c.Data.Feeds)
	}
}

// gauge is the value of the gauge name in reg; the test fails when reg does not have it.
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s among the metrics", name)
	return 0
}
