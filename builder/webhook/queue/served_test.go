package queue_test

import (
	"context"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/webhook/edges"
	"github.com/trainingco/catalogue/builder/webhook/queue"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// movableClock is the time plus an offset a test moves on; it counts its reads.
type movableClock struct {
	offset, reads atomic.Int64
}

func (c *movableClock) Now() time.Time {
	c.reads.Add(1)
	return time.Now().Add(time.Duration(c.offset.Load()))
}

// TestWaitsForThePollBound (D42, with one edge and no shared Redis): a delivery waits
// until edge.poll_interval and edges.Settle have passed since its snapshot was published,
// the time an edge may take to see the new pointer and swap to it, and is sent once they
// have. The clock is moved past the bound rather than waited out.
func TestWaitsForThePollBound(t *testing.T) {
	dbURL, pool := newDatabase(t)
	rc := &receiver{t: t}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	_, rc.secret = addEndpoint(t, dbURL, srv.URL)
	clock := &movableClock{}
	poll := time.Minute // not reached by the real time this test takes
	q := startQueue(t, pool, fastConfig(), edges.Served{Poll: poll, Now: clock.Now})
	if _, err := q.Enqueue(context.Background(), queue.Change{Snapshot: "20261126T100500.000Z-bbbbbbbb", Classes: []int64{1}}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 10*time.Second, "the worker asking the edges thrice, or a delivery", func() bool {
		return clock.reads.Load() >= 3 || len(rc.deliveries()) > 0
	})
	if n := len(rc.deliveries()); n != 0 {
		t.Fatalf("delivered before edge.poll_interval + %v had passed since publication, with no Redis", edges.Settle)
	}
	clock.offset.Store(int64(poll + edges.Settle + time.Second))
	testkit.WaitFor(t, 5*time.Second, "the delivery once the poll bound has passed", func() bool { return len(rc.deliveries()) == 1 })
}
