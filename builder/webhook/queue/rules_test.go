package queue_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trainingco/catalogue/builder/webhook/queue"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestDeliveryChecksTheRules (D43: "checked when added and again at every delivery"): with
// webhooks.allow_http and allow_private at their defaults (false), endpoints stored while
// they were on are refused by the queue's own deliveries: an https one on loopback before
// any connection reaches it, an http one before any request. Each attempt is recorded as
// a failure saying which rule refused it. The other queue tests all allow both, so rules
// that the queue no longer passed on to its sender went unseen.
func TestDeliveryChecksTheRules(t *testing.T) {
	dbURL, pool := newDatabase(t)
	var conns atomic.Int64 // connections that reached the https endpoint, TLS or not
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	tlsSrv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	plain := &receiver{t: t}
	plainSrv := httptest.NewServer(plain)
	defer plainSrv.Close()
	private, _ := addEndpoint(t, dbURL, tlsSrv.URL) // https://127.0.0.1:port, added under allow_private
	insecure, _ := addEndpoint(t, dbURL, plainSrv.URL)

	cfg := fastConfig()
	cfg.AllowHTTP, cfg.AllowPrivate = false, false // the defaults
	q := startQueue(t, pool, cfg, nil)
	if _, err := q.Enqueue(context.Background(), queue.Change{Snapshot: "s1", Classes: []int64{1}}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 10*time.Second, "an attempt at each endpoint", func() bool {
		return attempts(t, pool, private) > 0 && attempts(t, pool, insecure) > 0
	})
	if n := conns.Load(); n != 0 {
		t.Errorf("%d connections reached the https endpoint on loopback, want none (allow_private is off)", n)
	}
	if n := len(plain.deliveries()); n != 0 {
		t.Errorf("%d requests reached the http endpoint, want none (allow_http is off)", n)
	}
	for _, tc := range []struct {
		endpoint int64
		want     string
	}{
		{private, "127.0.0.1 is not a public address (webhooks.allow_private permits it)"},
		{insecure, "the URL must be https:// (webhooks.allow_http permits http://)"},
	} {
		delivered, reason := failure(t, pool, tc.endpoint)
		if delivered || !strings.Contains(reason, tc.want) {
			t.Errorf("endpoint %d: delivered %t, last failure %q; want a failure saying %q", tc.endpoint, delivered, reason, tc.want)
		}
	}
}

// attempts is how many attempts endpoint's one message has had.
func attempts(t *testing.T, pool *pgxpool.Pool, endpoint int64) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), "SELECT attempts FROM webhook_deliveries WHERE endpoint_id = $1", endpoint).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// failure says whether endpoint's one message was delivered, and the endpoint's last
// failure reason as webhook list shows it.
func failure(t *testing.T, pool *pgxpool.Pool, endpoint int64) (bool, string) {
	t.Helper()
	var delivered bool
	var reason *string
	err := pool.QueryRow(context.Background(), `SELECT d.delivered_at IS NOT NULL, e.last_failure_reason
		FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE e.id = $1`, endpoint).Scan(&delivered, &reason)
	if err != nil {
		t.Fatal(err)
	}
	if reason == nil {
		return delivered, ""
	}
	return delivered, *reason
}
