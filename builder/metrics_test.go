package builder

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
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

// TestMetricsSurviveTheWebhooksDatabase: a webhook queue whose pool is closed (a start that
// failed, a database gone) leaves its depth out of /metrics, and every other metric is
// still served: the default answered 500 for all of them. After a failed start the closed
// pool is not read at all.
func TestMetricsSurviveTheWebhooksDatabase(t *testing.T) {
	pool, err := pgxpool.New(context.Background(), "postgres://nobody@127.0.0.1:1/none?connect_timeout=1")
	if err != nil {
		t.Fatal(err)
	}
	pool.Close()
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	m.webhooks(pool)
	m.published.SetToCurrentTime()
	h := MetricsHandler(reg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	scrape := func() *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		return rec
	}
	if rec := scrape(); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "catalogue_builder_last_published") {
		t.Errorf("with the queue's pool closed: %d, want 200 with the other metrics\n%s", rec.Code, rec.Body)
	}
	m.webhooksOff()
	if _, err := reg.Gather(); err != nil {
		t.Errorf("after the webhooks went off: %v, want the closed pool no longer read", err)
	}
}
