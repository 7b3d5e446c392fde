package queue

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/trainingco/catalogue/builder/webhook"
	"github.com/trainingco/catalogue/templates"
)

// Metrics are the deliveries' Prometheus collectors.
type Metrics struct {
	deliveries       *prometheus.CounterVec
	latency          prometheus.Histogram
	disabled         prometheus.Counter
	edgeWaitTimeouts prometheus.Counter
	pool             atomic.Pointer[pgxpool.Pool] // where the queue's depth is read
}

// NewMetrics returns the collectors, registered on reg when it is not nil, with the queue's
// depth and oldest message read from pool on each scrape (when pool is not nil; UsePool
// changes it).
func NewMetrics(reg prometheus.Registerer, pool *pgxpool.Pool) *Metrics {
	m := &Metrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "catalogue_builder_webhook_deliveries_total",
			Help: "Webhook delivery attempts by outcome: delivered (a 2xx) or failed (anything else); given_up counts the failed messages retried for webhooks.retry_for and dropped.",
		}, []string{"outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "catalogue_builder_webhook_commit_to_delivered_seconds",
			Help:    "Time from the commit a catalogue.changed announces (its notification's arrival; the queuing for scheduled builds) to its 2xx.",
			Buckets: []float64{0.25, 0.5, 1, 2, 3, 5, 10, 30, 60, 300, 3600},
		}),
		disabled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "catalogue_builder_webhook_endpoints_disabled_total",
			Help: "Webhook endpoints disabled after failing for webhooks.disable_after.",
		}),
		edgeWaitTimeouts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "catalogue_builder_webhook_edge_wait_timeouts_total",
			Help: "Messages that waited past webhooks.edge_wait for the edges to serve their snapshot (they wait on: D42).",
		}),
	}
	for _, o := range []string{"delivered", "failed", "given_up"} {
		m.deliveries.WithLabelValues(o)
	}
	m.pool.Store(pool)
	if reg != nil {
		reg.MustRegister(m.deliveries, m.latency, m.disabled, m.edgeWaitTimeouts, queueCollector{m})
	}
	return m
}

// UsePool makes the scrapes read the queue's depth from pool: builder serve's webhooks get a
// new pool each time they start again, and the collectors are registered once.
func (m *Metrics) UsePool(pool *pgxpool.Pool) { m.pool.Store(pool) }

func (m *Metrics) delivered(d delivery) {
	m.deliveries.WithLabelValues("delivered").Inc()
	from := d.created
	if d.noticed != nil {
		from = *d.noticed
	}
	m.latency.Observe(time.Since(from).Seconds())
}

func (m *Metrics) failed(givenUp bool) {
	m.deliveries.WithLabelValues("failed").Inc()
	if givenUp {
		m.deliveries.WithLabelValues("given_up").Inc()
	}
}

// queueCollector reads the queue's depth and its oldest message at each scrape, from the
// pool of m, and says nothing while it has none.
type queueCollector struct{ m *Metrics }

var (
	depthDesc  = prometheus.NewDesc("catalogue_builder_webhook_queue_depth", "Webhook deliveries not yet made to enabled endpoints.", nil, nil)
	oldestDesc = prometheus.NewDesc("catalogue_builder_webhook_oldest_pending_seconds", "Age of the oldest webhook delivery not yet made to an enabled endpoint; 0 when none.", nil, nil)
)

func (c queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- depthDesc; ch <- oldestDesc }

func (c queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	pool := c.m.pool.Load()
	if pool == nil {
		return
	}
	var depth int64
	var oldest *time.Time
	if err := pool.QueryRow(ctx, webhook.SQL(templates.WebhookQueue)).Scan(&depth, &oldest); err != nil {
		ch <- prometheus.NewInvalidMetric(depthDesc, err)
		return
	}
	age := 0.0
	if oldest != nil {
		age = time.Since(*oldest).Seconds()
	}
	ch <- prometheus.MustNewConstMetric(depthDesc, prometheus.GaugeValue, float64(depth))
	ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, age)
}
