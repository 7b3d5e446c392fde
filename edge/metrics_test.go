package edge

import (
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/trainingco/catalogue/config"
)

// TestMetrics: after a few requests /metrics exposes every collector with the route
// pattern (never the raw path) and status as labels.
func TestMetrics(t *testing.T) {
	testStart := time.Now()
	env := newAuthEnv(t, func(c *config.Config) { c.Edge.RateLimit = 3 })
	for _, r := range []req{
		{target: course1, auth: env.bearer()},                     // 200
		{target: course1 + "?x=1", auth: env.bearer()},            // 200
		{target: "/api/v2/public/course/999", auth: env.bearer()}, // 404 after authentication
		{target: course1, auth: env.bearer()},                     // 429: the fourth in the minute
		{target: course1},                                         // 401
		{target: "/nope"},                                         // 404, no route
		{target: "/healthz"},
	} {
		env.send(r)
	}
	env.s.metrics.ObserveSearch(150 * time.Millisecond)

	const course = `/api/v2/public/course/:id`
	want := map[string]float64{
		`catalogue_edge_requests_total{route="` + course + `",status="200"}`:    2,
		`catalogue_edge_requests_total{route="` + course + `",status="404"}`:    1,
		`catalogue_edge_requests_total{route="` + course + `",status="429"}`:    1,
		`catalogue_edge_requests_total{route="` + course + `",status="401"}`:    1,
		`catalogue_edge_requests_total{route="unmatched",status="404"}`:         1,
		`catalogue_edge_requests_total{route="/healthz",status="200"}`:          1,
		`catalogue_edge_request_duration_seconds_count{route="` + course + `"}`: 5,
		`catalogue_edge_request_duration_seconds_count{route="unmatched"}`:      1,
		`catalogue_edge_request_duration_seconds_count{route="/healthz"}`:       1,
		`catalogue_edge_rate_limited_total{scope="token"}`:                      1,
		`catalogue_edge_rate_limited_total{scope="address"}`:                    0,
		`catalogue_edge_unauthenticated_total{}`:                                1,
		`catalogue_edge_search_cache_requests_total{result="hit"}`:              0,
		`catalogue_edge_search_cache_requests_total{result="miss"}`:             0,
		`catalogue_edge_search_cache_requests_total{result="refresh"}`:          0,
		`catalogue_edge_search_cache_requests_total{result="shared"}`:           0,
		`catalogue_edge_search_cache_waiting{}`:                                 0,
		`catalogue_edge_search_duration_seconds_count{}`:                        1,
		`catalogue_edge_search_duration_seconds_sum{}`:                          0.15,
		`catalogue_edge_search_index_loads_total{result="ok"}`:                  1, // in Start
		`catalogue_edge_search_index_loads_total{result="error"}`:               0,
		`catalogue_edge_search_index_searches_total{result="used"}`:             0,
		`catalogue_edge_search_index_searches_total{result="outdated"}`:         0,
		`catalogue_edge_search_index_searches_total{result="bypassed"}`:         0,
		`catalogue_edge_search_index_searches_total{result="absent"}`:           0,
		`catalogue_edge_snapshot_info{snapshot="snap-auth"}`:                    1,
		`catalogue_edge_snapshot_refused_total{}`:                               0,
		`catalogue_edge_store_errors_total{}`:                                   0,
		`catalogue_edge_snapshot_built_timestamp_seconds{}`:                     1803902400, // 2027-03-01T12:00:00Z
		// The snapshot was loaded from the store, through its pointer.
		`catalogue_edge_pointer_to_served_seconds_count{}`: 1,
		`catalogue_edge_snapshot_day_timestamp_seconds{}`:  1803859200, // rendered for 2027-03-01
		`catalogue_edge_snapshot_days_behind{}`:            1037,       // the clock says 2030-01-01
		`catalogue_edge_token_set_age_seconds{}`:           0,          // loaded at the clock's time
	}
	fams := scrape(t, env)
	got := flatten(fams, "catalogue_edge_")
	// The store's last answer is the wall clock's, not the test's: in the test's lifetime.
	const answered = `catalogue_edge_store_last_success_timestamp_seconds{}`
	if at := got[answered]; at < float64(testStart.Unix()) || at > float64(time.Now().Unix()+1) {
		t.Errorf("%s = %v, want the time of the store's last answer, during this test", answered, at)
	}
	delete(got, answered)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GET /metrics mismatch (-want +got):\n%s", diff)
	}
	for _, name := range []string{"go_goroutines", "process_start_time_seconds"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("GET /metrics has no %s", name)
		}
	}

	// A new snapshot replaces the old one's series rather than adding to them.
	// Its pointer's time gives the pointer-to-served lag: one more observation.
	env.s.metrics.SnapshotLoaded("snap-b", time.Date(2027, 3, 2, 0, 0, 0, 0, time.UTC), time.Date(2027, 3, 2, 0, 0, 1, 0, time.UTC))
	got = flatten(scrape(t, env), "catalogue_edge_snapshot_")
	for k, v := range flatten(scrape(t, env), "catalogue_edge_pointer_to_served_seconds") {
		got[k] = v
	}
	want = map[string]float64{
		`catalogue_edge_snapshot_info{snapshot="snap-b"}`:   1,
		`catalogue_edge_snapshot_built_timestamp_seconds{}`: 1803945600, // 2027-03-02T00:00:00Z
		`catalogue_edge_pointer_to_served_seconds_count{}`:  2,
		`catalogue_edge_snapshot_day_timestamp_seconds{}`:   1803859200, // set by the swap, not by SnapshotLoaded
		`catalogue_edge_snapshot_days_behind{}`:             1037,
		`catalogue_edge_snapshot_refused_total{}`:           0,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("snapshot metrics after snapshotLoaded(snap-b) mismatch (-want +got):\n%s", diff)
	}
}

// scrape fetches /metrics through the server and parses it.
func scrape(t *testing.T, env *authEnv) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	env.s.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("GET /metrics: status %d\n%s", rec.Code, rec.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// flatten turns the families whose names start with prefix into `name{labels}` -> value;
// a histogram gives its _count and _sum.
func flatten(fams map[string]*dto.MetricFamily, prefix string) map[string]float64 {
	out := map[string]float64{}
	for name, f := range fams {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		for _, m := range f.Metric {
			var labels []string
			for _, l := range m.Label {
				labels = append(labels, l.GetName()+`="`+l.GetValue()+`"`)
			}
			sort.Strings(labels)
			ls := "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.Counter != nil:
				out[name+ls] = m.Counter.GetValue()
			case m.Gauge != nil:
				out[name+ls] = m.Gauge.GetValue()
			case m.Histogram != nil:
				out[name+"_count"+ls] = float64(m.Histogram.GetSampleCount())
				if name == "catalogue_edge_search_duration_seconds" {
					out[name+"_sum"+ls] = m.Histogram.GetSampleSum()
				}
			}
		}
	}
	return out
}

// TestMetricsNotOnThePublicHandler: /metrics is not a route of the public handler, which
// answers it like any unknown path (D24, D26): 404 to GET and HEAD, whatever the caller
// holds (a token's answer with its X-RateLimit headers, D23); the metrics are on
// MetricsHandler, which cmd/edge serves on edge.metrics_listen.
func TestMetricsNotOnThePublicHandler(t *testing.T) {
	env := newAuthEnv(t, nil)
	notFound := response{Status: 404, Body: `{"message":"Not Found."}` + "\n",
		Headers: map[string]string{"Content-Type": jsonContentType}}
	toToken := response{Status: 404, Body: notFound.Body, Headers: map[string]string{"Content-Type": jsonContentType,
		"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "59"}}
	for r, want := range map[*req]response{{target: "/metrics"}: notFound, {target: "/metrics", auth: env.bearer()}: toToken} {
		if diff := cmp.Diff(want, env.send(*r)); diff != "" {
			t.Errorf("GET /metrics on the public handler (auth %q) mismatch (-want +got):\n%s", r.auth, diff)
		}
	}
	if got := env.send(req{method: http.MethodHead, target: "/metrics"}); got.Status != 404 {
		t.Errorf("HEAD /metrics on the public handler: status %d, want 404", got.Status)
	}
	if fams := scrape(t, env); fams["catalogue_edge_requests_total"] == nil {
		t.Error("MetricsHandler lacks catalogue_edge_requests_total")
	}
}
