package builder

import (
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/trainingco/catalogue/builder/webhook/queue"
)

// Build kinds, as the metrics and the log label them.
const (
	kindFull    = "full"    // every document rendered
	kindChanges = "changes" // only what a change affects rendered, the rest taken from the current snapshot
)

// Metrics are builder serve's Prometheus collectors.
type Metrics struct {
	builds         *prometheus.CounterVec
	duration       *prometheus.HistogramVec
	cpu            *prometheus.HistogramVec
	commitLag      prometheus.Histogram
	replicaWait    prometheus.Histogram
	replicaTimeout prometheus.Counter
	notifications  prometheus.Counter
	connects       prometheus.Counter
	listening      prometheus.Gauge
	published      prometheus.Gauge
	storeErrors    prometheus.Counter
	storeAnswered  prometheus.Gauge
	reg            prometheus.Registerer // where the webhooks' collectors go too; nil: nowhere
	whOnce         sync.Once
	wh             *queue.Metrics // the webhooks' collectors, once registered
}

// lagBuckets span a change published at once to one published by the schedule.
var lagBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300}

// NewMetrics returns the collectors, registered on reg when it is not nil.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		builds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "catalogue_builder_builds_total",
			Help: "Builds by kind (full, or changes: only what a change affects), trigger and result (published, failed).",
		}, []string{"kind", "trigger", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "catalogue_builder_build_duration_seconds",
			Help:    "Time from a build's start (after waiting for the replica) to its pointer, by kind.",
			Buckets: lagBuckets,
		}, []string{"kind"}),
		cpu: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "catalogue_builder_build_cpu_seconds",
			Help:    "CPU time the builder process used for one build, by kind.",
			Buckets: []float64{0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 1, 2, 5, 10},
		}, []string{"kind"}),
		commitLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "catalogue_builder_commit_to_published_seconds",
			Help:    "Time from the arrival of a build's first change notification (right after its commit) to the pointer that publishes it.",
			Buckets: lagBuckets,
		}),
		replicaWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "catalogue_builder_replica_wait_seconds",
			Help:    "Time a build waited for the replica to replay the changes it answers.",
			Buckets: []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30},
		}),
		replicaTimeout: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "catalogue_builder_replica_wait_timeouts_total",
			Help: "Builds that read the replica after builder.replica_wait without it having replayed their changes.",
		}),
		notifications: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "catalogue_builder_notifications_total",
			Help: "Change notifications received from the primary.",
		}),
		connects: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "catalogue_builder_listen_connects_total",
			Help: "Times the builder (re)connected to the primary to listen for changes; each is followed by a full build.",
		}),
		listening: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "catalogue_builder_listening",
			Help: "1 while this builder holds the listener lease and listens for changes on the primary, else 0 (another builder listens, or the connection is down).",
		}),
		published: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "catalogue_builder_last_published_timestamp_seconds",
			Help: "Unix time of the builder's last publication.",
		}),
		storeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "catalogue_builder_store_errors_total",
			Help: "Store operations that failed (the store down, refusing, or timing out); a missing object is no error.",
		}),
		storeAnswered: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "catalogue_builder_store_last_success_timestamp_seconds",
			Help: "Unix time of the last store operation that the store answered; 0 before the first.",
		}),
	}
	m.reg = reg
	if reg != nil {
		reg.MustRegister(m.builds, m.duration, m.cpu, m.commitLag, m.replicaWait, m.replicaTimeout,
			m.notifications, m.connects, m.listening, m.published, m.storeErrors, m.storeAnswered)
	}
	return m
}

// built records one build.
func (m *Metrics) built(kind, trigger string, ok bool, d, cpu time.Duration) {
	result := "published"
	if !ok {
		result = "failed"
	}
	m.builds.WithLabelValues(kind, trigger, result).Inc()
	if ok {
		m.duration.WithLabelValues(kind).Observe(d.Seconds())
		m.cpu.WithLabelValues(kind).Observe(cpu.Seconds())
		m.published.SetToCurrentTime()
	}
}

// storeResult records one store operation's outcome (store.Observe).
func (m *Metrics) storeResult(err error) {
	if err != nil {
		m.storeErrors.Inc()
		return
	}
	m.storeAnswered.SetToCurrentTime()
}

// webhooks returns the webhook queue's collectors, on the same registry, reading the
// queue's depth from pool. They are registered the first time only: serve starts its
// webhooks again (a new pool) after a start that failed past this point, and registering
// them twice panicked.
func (m *Metrics) webhooks(pool *pgxpool.Pool) *queue.Metrics {
	m.whOnce.Do(func() { m.wh = queue.NewMetrics(m.reg, nil) })
	m.wh.UsePool(pool)
	return m.wh
}

// webhooksOff stops reading the queue's depth from a pool the webhooks closed.
func (m *Metrics) webhooksOff() {
	if m.wh != nil {
		m.wh.UsePool(nil)
	}
}

// MetricsHandler serves reg's metrics for builder.metrics_listen. A collector that fails (the
// webhook queue's depth, read from a database that is down) is logged and left out of the
// answer: the default answered 500 for every metric, builds and store errors included, for
// as long as the database was down.
func MetricsHandler(reg *prometheus.Registry, log *slog.Logger) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg, ErrorHandling: promhttp.ContinueOnError,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)})
}
