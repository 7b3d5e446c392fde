package builder

import (
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/scripts/testkit/services"
)

// TestServeRetriesThroughAStoreOutage stops the store, a MinIO of the test's own, commits
// a change while it is down, and starts it again: the failed builds are retried with
// backoff, so the change is published within retryMax (and the build's time) of the
// store's return, not at the next scheduled build an hour away; the store's errors and its
// last answer are in the metrics meanwhile.
func TestServeRetriesThroughAStoreOutage(t *testing.T) {
	testkit.NewS3Store(t) // only for its check that MinIO is available
	minio := services.ForTest(t, "CATALOGUE_TEST_S3_ENDPOINT", func(dir string) (*services.Server, error) {
		return services.MinIO(dir, os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"))
	})
	cfg := freshCfg(t, config.Store{URL: "s3://outage/catalogue", Endpoint: minio.URL, Region: "us-east-1"})
	m := NewMetrics(prometheus.NewRegistry())
	s := startServeWith(t, cfg, ServeOptions{Metrics: m})
	s.waitServed(t, cfg, expectedDocs(t, cfg.Database.URL), "the build at start")
	if got := value(m.storeErrors); got != 0 {
		t.Errorf("store errors before the outage = %v, want 0", got)
	}

	minio.Stop(t)
	stopped := time.Now()
	testkit.Exec(t, cfg.Database.URL, `UPDATE classes SET cost = 4321 WHERE id = 101`)
	if r := s.next(t); r.err == nil {
		t.Fatalf("a build with the store down published %s", r.res.SnapshotID)
	}
	if got := value(m.storeErrors); got < 1 {
		t.Errorf("store errors during the outage = %v, want at least 1", got)
	}
	if last := value(m.storeAnswered); last <= 0 || last > float64(stopped.Unix()+1) {
		t.Errorf("store's last success during the outage = %v, want a time before it stopped (%d)", last, stopped.Unix())
	}

	minio.Start(t)
	back := time.Now()
	want := expectedDocs(t, cfg.Database.URL)
	deadline := back.Add(retryMax + 20*time.Second) // the longest wait, and the build
	for !cmp.Equal(want, storeDocs(t, cfg)) {
		if time.Now().After(deadline) {
			t.Fatalf("the change is not published %v after the store came back; store (-want +got):\n%s",
				time.Since(back).Round(time.Second), cmp.Diff(want, storeDocs(t, cfg)))
		}
		select {
		case <-s.runs:
		case <-time.After(time.Second):
		}
	}
	t.Logf("published %v after the store came back (down %v)", time.Since(back).Round(10*time.Millisecond), back.Sub(stopped).Round(10*time.Millisecond))
	if last := value(m.storeAnswered); last < float64(back.Unix()) {
		t.Errorf("store's last success after the outage = %v, want at least %d", last, back.Unix())
	}
}

// value is a counter's or a gauge's value.
func value(m prometheus.Metric) float64 {
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		panic(err)
	}
	if d.Counter != nil {
		return d.Counter.GetValue()
	}
	return d.Gauge.GetValue()
}
