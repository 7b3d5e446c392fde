package edge

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestPartialManifestRefused: a pointer to a manifest that lists no documents, or fewer
// than it counts, or lacks a route every snapshot has, is refused (issue 23, defect 1): the
// snapshot being served stays, whole, and ready; the refusal is counted and logged once,
// however many polls see it; edge.cache_dir keeps the last good snapshot, so that an edge
// restarted while the store is down serves it.
func TestPartialManifestRefused(t *testing.T) {
	b := fixtureB()
	bEntries := map[string]snapshot.Entry{}
	for r, body := range b.docs {
		bEntries[r] = snapshot.Entry{Hash: snapshot.Hash([]byte(body)), Size: int64(len(body))}
	}
	bCounts := snapshot.CountsOf(bEntries)
	for _, tt := range []struct {
		name   string
		docs   map[string]snapshot.Entry
		counts snapshot.Counts
	}{
		{"no documents", map[string]snapshot.Entry{}, bCounts},
		{"no counts, no documents", nil, snapshot.Counts{}},
		{"the non-class routes only", maps.Collect(func(yield func(string, snapshot.Entry) bool) {
			for r, e := range bEntries {
				if !snapshot.IsClassRoute(r) && !yield(r, e) {
					return
				}
			}
		}), bCounts},
		{"no course list, counts agreeing", func() map[string]snapshot.Entry {
			d := maps.Clone(bEntries)
			delete(d, "/public/courses")
			return d
		}(), snapshot.Counts{Courses: bCounts.Courses, Classes: bCounts.Classes, Documents: bCounts.Documents - 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			cfg := testConfig()
			cfg.Edge.CacheDir = dir
			st := watch(openStore(t, testkit.NewLocalStore(t)))
			publish(t, st, fixtureA())
			var logs lockedBuffer
			ts := newLoggedServer(t, st, cfg, &logs)
			publish(t, st, b) // every object of B, then its manifest replaced by a partial one
			putJSON(t, st, snapshot.ManifestKey(b.id), snapshot.Manifest{ID: b.id,
				Header: snapshot.Header{Today: "2027-03-01", Timezone: "UTC", Counts: tt.counts}, Documents: tt.docs})

			for range 2 { // two polls see the same pointer
				if err := ts.docs.Refresh(ctx); !errors.Is(err, snapshot.ErrInvalidManifest) {
					t.Errorf("refresh() = %v, want ErrInvalidManifest", err)
				}
			}
			for target, want := range map[string]response{
				"/readyz":                {200, map[string]string{}, `{"snapshot":"snap-a","status":"ok"}` + "\n"},
				"/api/v2/public/courses": {200, map[string]string{"X-Catalogue-Snapshot": "snap-a"}, coursesA},
				"/api/v2/public/class/7": {200, map[string]string{"X-Catalogue-Snapshot": "snap-a"}, `{"course_id":1,"snapshot":"snap-a"}`},
			} {
				if diff := cmp.Diff(want, ts.get("GET", target, nil, "X-Catalogue-Snapshot")); diff != "" {
					t.Errorf("GET %s mismatch (-want +got):\n%s", target, diff)
				}
			}
			if got := scrapeHandler(t, ts.MetricsHandler())["catalogue_edge_snapshot_refused_total{}"]; got != 1 {
				t.Errorf("catalogue_edge_snapshot_refused_total = %v, want 1", got)
			}
			if n := strings.Count(logs.String(), `"msg":"snapshot refused`); n != 1 {
				t.Errorf("%d log lines say the snapshot was refused, want 1:\n%s", n, logs.String())
			}
			if diff := cmp.Diff(layoutOf(fixtureA()), cacheKeys(t, dir)); diff != "" {
				t.Errorf("edge.cache_dir after the refusal mismatch (-want +got):\n%s", diff)
			}

			st.down.Store(true) // a restart while the store is unreachable serves A from the cache
			ts = newTestServer(t, st, cfg)
			want := response{200, map[string]string{"X-Catalogue-Snapshot": "snap-a"}, `{"course_id":1,"snapshot":"snap-a"}`}
			if diff := cmp.Diff(want, ts.get("GET", "/api/v2/public/class/7", nil, "X-Catalogue-Snapshot")); diff != "" {
				t.Errorf("GET class/7 after a restart with the store down mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// scrapeHandler fetches /metrics from h (a MetricsHandler) and flattens the catalogue_edge_ series.
func scrapeHandler(t *testing.T, h http.Handler) map[string]float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(rec.Body.Bytes()))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return flatten(fams, "catalogue_edge_")
}
