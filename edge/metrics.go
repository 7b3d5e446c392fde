package edge

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics holds the edge's Prometheus collectors and the request ids; the front middleware
// (requestlog.go) counts every request here.
type metrics struct {
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
	snapshotMu      sync.Mutex // makes the reset and set of snapshot one step

	// routes caches the children of requests and latency per (route, status), so that the
	// request path does no label lookup. Copied on write: readers never lock, and a new
	// pair appears only a handful of times in a process's life.
	routes   atomic.Pointer[map[routeStatus]routeObservers]
	routesMu sync.Mutex // serialises writers of routes

	ids *requestIDs
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

// newMetrics creates the collectors and registers them, with the Go runtime and process
// collectors, on reg.
func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{reg: reg, ids: newRequestIDs()}
	m.requests = register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "catalogue_edge_requests_total",
		Help: "HTTP requests answered, by route pattern (unmatched for unknown paths) and status.",
	}, []string{"route", "status"}))
	m.latency = register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "catalogue_edge_request_duration_seconds",
		Help:    "Time to answer an HTTP request, by route pattern.",
		Buckets: requestBuckets,
	}, []string{"route"}))
	m.rateLimited = register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "catalogue_edge_rate_limited_total",
		Help: "Requests answered 429: scope token is a token over its limit, address an address over its allowance of failed authentications.",
	}, []string{"scope"}))
	m.limitedToken = m.rateLimited.WithLabelValues("token")
	m.limitedAddr = m.rateLimited.WithLabelValues("address")
	m.unauthenticated = register(reg, prometheus.NewCounter(prometheus.CounterOpts{
		Name: "catalogue_edge_unauthenticated_total",
		Help: "Requests answered 401: missing, malformed, unknown or revoked token.",
	}))
	m.search = register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "catalogue_edge_search_duration_seconds",
		Help:    "Time the live class search spent in the replica.",
		Buckets: searchBuckets,
	}))
	m.snapshot = register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "catalogue_edge_snapshot_info",
		Help: "1 for the id of the catalogue snapshot being served.",
	}, []string{"snapshot"}))
	m.snapshotBuilt = register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "catalogue_edge_snapshot_built_timestamp_seconds",
		Help: "Unix time the snapshot being served was built; its age is time() minus this.",
	}))
	register(reg, collectors.NewGoCollector())
	register(reg, collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.routes.Store(&map[routeStatus]routeObservers{})
	return m
}

// register registers c on reg, or returns the equal collector already registered, so that
// a registry shared with the caller (which may have registered the Go collector itself)
// does not make New panic.
func register[C prometheus.Collector](reg *prometheus.Registry, c C) C {
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
	panic(err) // two different collectors under one name: a bug in this file
}

// handler serves the registry to Prometheus (D26).
func (m *metrics) handler() echo.HandlerFunc {
	return echo.WrapHandler(promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg}))
}

// snapshotLoaded records the snapshot now being served; the static loader calls it on
// every swap.
func (m *metrics) snapshotLoaded(id string, builtAt time.Time) {
	m.snapshotMu.Lock()
	defer m.snapshotMu.Unlock()
	m.snapshot.Reset()
	m.snapshot.WithLabelValues(id).Set(1)
	m.snapshotBuilt.Set(float64(builtAt.UnixNano()) / 1e9)
}

// observeSearch records the time one live search took.
func (m *metrics) observeSearch(d time.Duration) { m.search.Observe(d.Seconds()) }

// limited counts a 429 of scope "token" or "address".
func (m *metrics) limited(scope string) {
	if scope == "token" {
		m.limitedToken.Inc()
		return
	}
	m.limitedAddr.Inc()
}

// observe counts one answered request and returns its route label. route is the Echo
// route pattern, never the raw path, so that the number of series stays that of the routes.
func (m *metrics) observe(e *echo.Echo, route string, status int, d time.Duration) string {
	k := routeStatus{route, status}
	o, ok := (*m.routes.Load())[k]
	if !ok {
		o = m.addRoute(e, k)
	}
	o.count.Inc()
	o.latency.Observe(d.Seconds())
	return o.label
}

// addRoute creates the observers of k. A pattern that names no route (the empty pattern
// of a path no route matched, or a router node's own prefix) is labelled "unmatched".
func (m *metrics) addRoute(e *echo.Echo, k routeStatus) routeObservers {
	m.routesMu.Lock()
	defer m.routesMu.Unlock()
	old := *m.routes.Load()
	if o, ok := old[k]; ok {
		return o
	}
	label := "unmatched"
	for _, r := range e.Routes() {
		if r.Path == k.route && k.route != "" {
			label = k.route
			break
		}
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
