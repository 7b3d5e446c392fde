package builder

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/webhook"
	"github.com/trainingco/catalogue/builder/webhook/queue"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestRollbackQueuesWebhooks: a rollback that changes served documents is a published
// snapshot that changes them, so it queues its catalogue.changed (D41) as builder serve does
// after a build: naming the classes it changed and the feeds' position before it (D39).
func TestRollbackQueuesWebhooks(t *testing.T) {
	ctx := context.Background()
	cfg := newFixture(t)["local"]
	if err := queue.Migrate(ctx, cfg.Database.URL); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, cfg.Database.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = webhook.Add(ctx, conn, webhook.Rules{AllowHTTP: true, AllowPrivate: true}, "http://127.0.0.1:9/hook", "")
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	now := clock()
	mustRun(t, cfg, now)
	testkit.Exec(t, cfg.Database.URL, "UPDATE classes SET cost = 2600 WHERE id = 102")
	second := mustRun(t, cfg, now)

	res, err := Rollback(ctx, cfg, "", nil)
	if err != nil {
		t.Fatalf("Rollback: %v", err)
	}
	rows, err := queuedMessages(t, cfg.Database.URL)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].snapshot != res.SnapshotID {
		t.Fatalf("webhook messages after the rollback = %+v, want one for snapshot %s", rows, res.SnapshotID)
	}
	var msg struct {
		Type string
		Data webhook.Changed
	}
	if err := json.Unmarshal([]byte(rows[0].body), &msg); err != nil {
		t.Fatal(err)
	}
	after := "afterChangeNumber=" + strconv.FormatInt(second.Manifest.Feed.Last, 10)
	if msg.Type != webhook.TypeChanged || !slices.Contains(msg.Data.Classes, 102) || !strings.HasSuffix(msg.Data.Feeds.Classes, after) ||
		!cmp.Equal(msg.Data.Classes, res.Feed.Classes) || !cmp.Equal(msg.Data.Courses, res.Feed.Courses, cmpopts.EquateEmpty()) {
		t.Errorf("the rollback's message = %s; want %s naming class 102, what the rollback announced (%+v) and the feeds %s",
			rows[0].body, webhook.TypeChanged, res.Feed, after)
	}
	if b := res.Manifest.Build; b == nil || b.Trigger != snapshot.TriggerRollback {
		t.Errorf("the rollback's build = %+v, want a rollback", b)
	}
}

type queuedMessage struct{ snapshot, body string }

// queuedMessages returns the messages queued for the endpoints, oldest first.
func queuedMessages(t *testing.T, dbURL string) ([]queuedMessage, error) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT snapshot, body FROM webhook_deliveries ORDER BY id")
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (queuedMessage, error) {
		var m queuedMessage
		err := r.Scan(&m.snapshot, &m.body)
		return m, err
	})
}
