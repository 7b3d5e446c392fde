package queue_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/webhook/queue"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// laggingEdges is an edge that never serves the snapshot while Redis is open; closed, Serves
// falls back as edges.Served does without Redis: to the time bound, here passed at once.
type laggingEdges struct {
	calls  atomic.Int64
	closed atomic.Bool
}

func (e *laggingEdges) Serves(context.Context, string, time.Time) (bool, error) {
	e.calls.Add(1)
	if e.closed.Load() {
		return true, errors.New("redis: client is closed")
	}
	return false, nil
}

// TestStopLeavesNoJobRunning: past its context Stop cancels the jobs still running and
// returns once they have, so that builder serve closes Redis and the pool under none: a job
// left waiting for a lagging edge lost its Redis, fell back to the time bound and sent its
// message before the edge served the snapshot (D42). Found by a read-only concurrency review.
func TestStopLeavesNoJobRunning(t *testing.T) {
	dbURL, pool := newDatabase(t)
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { sent.Add(1) }))
	defer srv.Close()
	addEndpoint(t, dbURL, srv.URL)
	cfg := fastConfig()
	cfg.StuckAfter = 20 * time.Second // one run waits up to 10 s for the edges
	edges := &laggingEdges{}
	q, err := queue.New(queue.Options{Pool: pool, Config: cfg, Served: edges}, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Enqueue(context.Background(), queue.Change{Snapshot: "s1", Classes: []int64{1}}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 5*time.Second, "the job waiting for the edges", func() bool { return edges.calls.Load() > 0 })
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout+time.Second) // as builder serve stops
	_ = q.Stop(ctx)
	cancel()
	edges.closed.Store(true) // builder serve closes Redis next
	before := edges.calls.Load()
	time.Sleep(time.Second)
	if after := edges.calls.Load(); after != before || sent.Load() != 0 {
		t.Errorf("after Stop returned: the edges asked %d more times and %d deliveries sent, want no job running and none sent",
			after-before, sent.Load())
	}
}
