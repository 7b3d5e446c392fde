package builder

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestListeningGauge: of two builder serves on one catalogue, the one holding the listener
// lease reports catalogue_builder_listening 1 and the other 0; when the listener stops, the
// other takes over and reports 1. Summed over the builders, 0 is the alert: changes then
// wait for builder.schedule.
func TestListeningGauge(t *testing.T) {
	cfg := freshCfg(t, testkit.NewLocalStore(t))
	ma, mb := NewMetrics(nil), NewMetrics(nil)
	a := startServeWith(t, cfg, ServeOptions{Metrics: ma})
	a.next(t) // the build at start: a listens
	b := startServeWith(t, cfg, ServeOptions{Metrics: mb})
	testkit.WaitFor(t, 5*time.Second, "b to find the lease held", func() bool {
		return countLogs(b.logs, "another builder serve listens for changes; this one builds on the schedule and takes over if it stops") == 1
	})
	if got, other := testutil.ToFloat64(ma.listening), testutil.ToFloat64(mb.listening); got != 1 || other != 0 {
		t.Fatalf("listening: the leaseholder %v, the other %v; want 1 and 0", got, other)
	}
	a.stop()
	if got := testutil.ToFloat64(ma.listening); got != 0 {
		t.Errorf("listening of the builder stopped: %v, want 0 (its connection ended)", got)
	}
	testkit.WaitFor(t, 10*time.Second, "b to take the lease over", func() bool { return testutil.ToFloat64(mb.listening) == 1 })
}
