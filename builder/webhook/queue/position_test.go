package queue_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/webhook/queue"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestMessageCoversAChangeNeverQueued: a message names the feeds from the position after the
// last message's changes, so that a change whose message was never queued (builder serve
// stopped between publishing and queueing, or the queueing failed) is read by a receiver
// following the message. Each message named the feeds just before its own change, past the
// lost one (a partner's review). A position more than 48 hours old is not reached back to.
func TestMessageCoversAChangeNeverQueued(t *testing.T) {
	dbURL, pool := newDatabase(t)
	addEndpoint(t, dbURL, "http://127.0.0.1:9/hook")
	q, err := queue.New(queue.Options{Pool: pool, Config: fastConfig(), Edge: config.Default().Edge}, false)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMicro() // change numbers are at least the clock in microseconds
	old := time.Now().Add(-49 * time.Hour).UnixMicro()
	for _, step := range []struct {
		name        string
		after, last int64
		want        int64 // the afterChangeNumber of its message
	}{
		{"the first message", now - 5000, now - 4000, now - 5000},
		// The change from now-4000 to now-3000 is published, its message never queued.
		{"the message after a lost one", now - 3000, now - 2000, now - 4000},
		{"the next", now - 2000, now - 1000, now - 2000},
		{"one before the position (a rollback's)", now - 1500, now - 500, now - 1500},
		{"one at 49 hours ago (clocks aside, it becomes the last position)", old, old + 1, old},
		{"one whose last position is 49 hours old", now, now + 1, now},
	} {
		if _, err := q.Enqueue(context.Background(), queue.Change{Snapshot: "s", Classes: []int64{1}, After: step.after, Last: step.last}); err != nil {
			t.Fatal(err)
		}
		if got := lastMessageAfter(t, dbURL); got != step.want {
			t.Errorf("%s (after %d): afterChangeNumber=%d, want %d", step.name, step.after, got, step.want)
		}
	}
}

// lastMessageAfter returns the afterChangeNumber of the classes feed URL in the last message
// queued.
func lastMessageAfter(t *testing.T, dbURL string) int64 {
	t.Helper()
	var body string
	if err := testkit.Connect(t, dbURL).QueryRow(context.Background(), "SELECT body FROM webhook_deliveries ORDER BY id DESC LIMIT 1").Scan(&body); err != nil {
		t.Fatal(err)
	}
	var m struct {
		Data struct {
			Feeds struct{ Classes string } `json:"feeds"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(m.Data.Feeds.Classes)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(u.Query().Get("afterChangeNumber"), 10, 64)
	if err != nil {
		t.Fatalf("the classes feed URL %q: %v", m.Data.Feeds.Classes, err)
	}
	return n
}
