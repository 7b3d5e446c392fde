// Package telemetry is what the edge tells its operators: the Prometheus collectors, the
// request ids, and the log line written for every request.
package telemetry

import (
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds the edge's Prometheus collectors; the server's front middleware counts
// every request here.
type Metrics struct {
	reg *prometheus.Registry

	requests        *prometheus.CounterVec   // by route pattern and status
	latency         *prometheus.HistogramVec // by route pattern
	rateLimited     *prometheus.CounterVec   // by scope: token or address
	limitedToken    prometheus.Counter
	limitedAddr     prometheus.Counter
	unauthenticated prometheus.Counter
	search          prometheus.Histogram
	snapshot        *prometheus.GaugeVec // 1 for the id of the snapshot being served
	snapshotBuilt   prometheus.Gauge
	pointerToServed prometheus.Histogram
	snapshotDay     prometheus.Gauge // the day the snapshot was built for, as Unix time
	daysBehind      prometheus.Gauge // the edge's today minus that day, in days
	refused         prometheus.Counter
	storeErrors     prometheus.Counter
	storeAnswered   prometheus.Gauge // Unix time of the store's last answer
	snapshotMu      sync.Mutex       // makes the reset and set of snapshot one step

	// routes caches the children of requests and latency per (route, status), so that the
	// request path does no label lookup. Copied on write: readers never lock, and a new
	// pair appears only a handful of times in a process's life.
	routes   atomic.Pointer[map[routeStatus]routeObservers]
	routesMu sync.Mutex      // serialises writers of routes
	patterns map[string]bool // the route patterns (SetRoutes); guarded by routesMu
}

type routeStatus struct {
	route  string
	status int
}

type routeObservers struct {
	label   string // the route label: the pattern, or "unmatched"
	count   prometheus.Counter
	latency prometheus.Observer
}

// Latency buckets in seconds. Static reads come from memory in well under a millisecond;
// the search goes to PostgreSQL and is bounded by edge.search_timeout.
var (
	requestBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}
	searchBuckets  = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}
)

// NewMetrics creates the collectors and registers them, with the Go runtime and process
// collectors, on reg.
func NewMetrics(reg *prometheus.Registry) *Metrics {
	m := &Metrics{reg: reg}
	m.requests = Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "catalogue_edge_requests_total",
		Help: "HTTP requests answered, by route pattern (unmatched for unknown paths) and status.",
	}, []string{"route", "status"}))
	m.latency = Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "catalogue_edge_request_duration_seconds",
		Help:    "Time to answer an HTTP request, by route pattern.",
		Buckets: requestBuckets,
	}, []string{"route"}))
	m.rateLimited = Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "catalogue_edge_rate_limited_total",
		Help: "Requests answered 429: scope token is a token over its limit, address an address over its allowance of failed authentications.",
	}, []string{"scope"}))
	m.limitedToken = m.rateLimited.WithLabelValues("token")
	m.limitedAddr = m.rateLimited.WithLabelValues("address")
	m.unauthenticated = Register(reg, prometheus.NewCounter(prometheus.CounterOpts{
		Name: "catalogue_edge_unauthenticated_total",
		Help: "Requests answered 401: missing, malformed, unknown or revoked token.",
	}))
	m.search = Register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "catalogue_edge_search_duration_seconds",
		Help:    "Time the live class search spent in the replica.",
		Buckets: searchBuckets,
	}))
	m.snapshot = Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "catalogue_edge_snapshot_info",
		Help: "1 for the id of the catalogue snapshot being served.",
	}, []string{"snapshot"}))
	m.snapshotBuilt = Register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "catalogue_edge_snapshot_built_timestamp_seconds",
		Help: "Unix time the snapshot being served was built; its age is time() minus this.",
	}))
	m.pointerToServed = Register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "catalogue_edge_pointer_to_served_seconds",
		Help:    "Time from the builder writing a snapshot's pointer to this edge serving the snapshot (the two machines' clocks apart).",
		Buckets: []float64{0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300},
	}))
	m.snapshotDay = Register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "catalogue_edge_snapshot_day_timestamp_seconds",
		Help: "The day the snapshot being served was rendered for (its upcoming_class and can_register), as the Unix time of that date's midnight UTC.",
	}))
	m.daysBehind = Register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "catalogue_edge_snapshot_days_behind",
		Help: "Days between the edge's today (timezone) and the day the snapshot being served was rendered for: above 0, builds are failing or refused and static documents describe an earlier day than the search.",
	}))
	m.storeErrors = Register(reg, prometheus.NewCounter(prometheus.CounterOpts{
		Name: "catalogue_edge_store_errors_total",
		Help: "Reads of the store's pointer or of a snapshot that failed (the store down, refusing, or timing out); the snapshot being served stays.",
	}))
	m.storeAnswered = Register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "catalogue_edge_store_last_success_timestamp_seconds",
		Help: "Unix time of the store's last answer to the edge's poll (unchanged pointer included); 0 before the first.",
	}))
	m.refused = Register(reg, prometheus.NewCounter(prometheus.CounterOpts{
		Name: "catalogue_edge_snapshot_refused_total",
		Help: "Snapshots refused because their manifest does not describe a whole snapshot (its documents do not match its counts, or a route every snapshot has is missing); the snapshot served before stays, and so does edge.cache_dir.",
	}))
	Register(reg, collectors.NewGoCollector())
	Register(reg, collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.routes.Store(&map[routeStatus]routeObservers{})
	return m
}

// Register registers c on reg, or returns the equal collector already registered, so that
// a registry shared with the caller (which may have registered the Go collector itself)
// does not make New panic.
func Register[C prometheus.Collector](reg *prometheus.Registry, c C) C {
	err := reg.Register(c)
	if err == nil {
		return c
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	panic(err) // two different collectors under one name: a bug in the caller
}

// Handler serves the registry to Prometheus (D26).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// SnapshotLoaded records the snapshot now being served; the server calls it on every
// swap. publishedAt is when its pointer was written, zero when unknown (a snapshot from
// edge.cache_dir); it gives the pointer-to-served lag, measured now.
func (m *Metrics) SnapshotLoaded(id string, builtAt, publishedAt time.Time) {
	m.snapshotMu.Lock()
	defer m.snapshotMu.Unlock()
	m.snapshot.Reset()
	m.snapshot.WithLabelValues(id).Set(1)
	m.snapshotBuilt.Set(float64(builtAt.UnixNano()) / 1e9)
	if !publishedAt.IsZero() {
		m.pointerToServed.Observe(max(time.Since(publishedAt), 0).Seconds())
	}
}

// StoreResult records whether the store answered one of the edge's polls or loads.
func (m *Metrics) StoreResult(failed bool) {
	if failed {
		m.storeErrors.Inc()
		return
	}
	m.storeAnswered.SetToCurrentTime()
}

// SnapshotRefused counts a snapshot refused for an invalid manifest.
func (m *Metrics) SnapshotRefused() { m.refused.Inc() }

// SnapshotDay records the day the snapshot being served was rendered for, and how many
// days the edge's own today is past it.
func (m *Metrics) SnapshotDay(day time.Time, behind int) {
	m.snapshotDay.Set(float64(day.Unix()))
	m.daysBehind.Set(float64(behind))
}

// TokenSetAge exports age, the age of the token set in force (-1 before the first load),
// read at every scrape.
func (m *Metrics) TokenSetAge(age func() time.Duration) {
	Register(m.reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "catalogue_edge_token_set_age_seconds",
		Help: "Seconds since the API token hashes in force were loaded (-1 before the first load); past edge.token_refresh the replica cannot be read, and revoked tokens keep working until it can.",
	}, func() float64 { return age().Seconds() }))
}

// ObserveSearch records the time one live search took.
func (m *Metrics) ObserveSearch(d time.Duration) { m.search.Observe(d.Seconds()) }

// Limited counts a 429 of scope "token" or "address".
func (m *Metrics) Limited(scope string) {
	if scope == "token" {
		m.limitedToken.Inc()
		return
	}
	m.limitedAddr.Inc()
}

// Unauthenticated counts a 401.
func (m *Metrics) Unauthenticated() { m.unauthenticated.Inc() }

// SharedLimiter is a rate limiter kept in Redis (ratelimit.Shared), which counts in memory
// while Redis cannot answer.
type SharedLimiter interface {
	Mode() bool       // true while counting in Redis
	Failures() uint64 // calls Redis failed, each decided in memory
	Outages() uint64  // times the limiter fell back to memory
}

// WatchLimiter exports the state of a shared limiter, read when /metrics is scraped.
func (m *Metrics) WatchLimiter(l SharedLimiter) {
	Register(m.reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "catalogue_edge_ratelimit_shared",
		Help: "1 while rate limits are counted in Redis (edge.redis_url), shared by every edge; 0 while this edge counts in memory because Redis does not answer.",
	}, func() float64 {
		if l.Mode() {
			return 1
		}
		return 0
	}))
	Register(m.reg, prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "catalogue_edge_ratelimit_redis_failures_total",
		Help: "Rate-limit decisions Redis failed to give (down, past edge.redis_timeout, or an error), each decided in memory instead.",
	}, func() float64 { return float64(l.Failures()) }))
	Register(m.reg, prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "catalogue_edge_ratelimit_redis_outages_total",
		Help: "Times this edge stopped asking Redis and counted in memory until Redis answered again.",
	}, func() float64 { return float64(l.Outages()) }))
}

// SetRoutes names the route patterns of the server, once they are registered: a request
// is counted under its pattern when it is one of these, and as unmatched otherwise.
func (m *Metrics) SetRoutes(patterns []string) {
	m.routesMu.Lock()
	defer m.routesMu.Unlock()
	m.patterns = map[string]bool{}
	for _, p := range patterns {
		m.patterns[p] = true
	}
}

// Observe counts one answered request and returns its route label. route is the router's
// pattern, never the raw path, so that the number of series stays that of the routes.
func (m *Metrics) Observe(route string, status int, d time.Duration) string {
	k := routeStatus{route, status}
	o, ok := (*m.routes.Load())[k]
	if !ok {
		o = m.addRoute(k)
	}
	o.count.Inc()
	o.latency.Observe(d.Seconds())
	return o.label
}

// addRoute creates the observers of k. A pattern that names no route (the empty pattern
// of a path no route matched, or a router node's own prefix) is labelled "unmatched".
func (m *Metrics) addRoute(k routeStatus) routeObservers {
	m.routesMu.Lock()
	defer m.routesMu.Unlock()
	old := *m.routes.Load()
	if o, ok := old[k]; ok {
		return o
	}
	label := "unmatched"
	if k.route != "" && m.patterns[k.route] {
		label = k.route
	}
	o := routeObservers{
		label:   label,
		count:   m.requests.WithLabelValues(label, strconv.Itoa(k.status)),
		latency: m.latency.WithLabelValues(label),
	}
	next := make(map[routeStatus]routeObservers, len(old)+1)
	for kk, v := range old {
		next[kk] = v
	}
	next[k] = o
	m.routes.Store(&next)
	return o
}
