package builder

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestWebhookMetricsRegisteredOnce: serve starts its webhooks again after a start that
// failed once their collectors were registered (the queue's Start, on a database that went
// away); registering them a second time panicked and took serve down.
func TestWebhookMetricsRegisteredOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	first := m.webhooks(nil)
	second := m.webhooks(nil)
	if first != second {
		t.Error("a second start made new webhook collectors, want the registered ones")
	}
	if _, err := reg.Gather(); err != nil {
		t.Errorf("gather: %v", err)
	}
}
