package builder

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/builder/publish"
	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/webhook"
	"github.com/trainingco/catalogue/builder/webhook/queue"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestRollbackQueuesWebhooks: a rollback that changes served documents is a published
// snapshot that changes them, so it queues its catalogue.changed (D41) as builder serve does
// after a build: naming the classes it changed and the feeds' position before it (D39).
func TestRollbackQueuesWebhooks(t *testing.T) {
	ctx := context.Background()
	cfg, _, _, second := publishedTwice(t)

	res, err := Rollback(ctx, cfg, "", nil)
	if err != nil {
		t.Fatalf("Rollback: %v", err)
	}
	rows, err := queuedMessages(t, cfg.Database.URL)
	if err != nil {
		t.Fatal(err)
	}
	// The two runs queued theirs first (TestRunQueuesWebhooks).
	if len(rows) != 3 || rows[2].snapshot != res.SnapshotID {
		t.Fatalf("webhook messages after two runs and the rollback = %+v, want three, the last for snapshot %s", rows, res.SnapshotID)
	}
	msg := decodeMessage(t, rows[2])
	after := "afterChangeNumber=" + strconv.FormatInt(second.Manifest.Feed.Last, 10)
	if msg.Type != webhook.TypeChanged || !slices.Contains(msg.Data.Classes, 102) || !strings.HasSuffix(msg.Data.Feeds.Classes, after) ||
		!cmp.Equal(msg.Data.Classes, res.Feed.Classes) || !cmp.Equal(msg.Data.Courses, res.Feed.Courses, cmpopts.EquateEmpty()) {
		t.Errorf("the rollback's message = %s; want %s naming class 102, what the rollback announced (%+v) and the feeds %s",
			rows[2].body, webhook.TypeChanged, res.Feed, after)
	}
	if b := res.Manifest.Build; b == nil || b.Trigger != snapshot.TriggerRollback {
		t.Errorf("the rollback's build = %+v, want a rollback", b)
	}
}

// TestRunQueuesWebhooks: a snapshot that builder run publishes is a published snapshot like
// builder serve's, so one that changes served documents queues its catalogue.changed (D41),
// for builder serve to deliver; one that changes nothing queues nothing. Without it, a change
// published by builder run is never announced: serve's next build finds nothing new.
func TestRunQueuesWebhooks(t *testing.T) {
	cfg, now, first, second := publishedTwice(t)
	mustRun(t, cfg, now) // nothing changed

	rows, err := queuedMessages(t, cfg.Database.URL)
	if err != nil {
		t.Fatal(err)
	}
	// The first run published every course and class: it is announced too.
	if len(rows) != 2 || rows[0].snapshot != first.SnapshotID || rows[1].snapshot != second.SnapshotID {
		t.Fatalf("webhook messages = %+v, want one for snapshot %s and one for %s", rows, first.SnapshotID, second.SnapshotID)
	}
	msg := decodeMessage(t, rows[1])
	after := "afterChangeNumber=" + strconv.FormatInt(first.Manifest.Feed.Last, 10)
	if msg.Type != webhook.TypeChanged || !cmp.Equal(msg.Data.Classes, []int64{102}) || len(msg.Data.Courses) != 0 ||
		!strings.HasSuffix(msg.Data.Feeds.Classes, after) {
		t.Errorf("the second run's message = %s; want %s naming class 102 alone and the classes feed at %s",
			rows[1].body, webhook.TypeChanged, after)
	}
}

// TestPopularAloneIsAnnounced: a publication that changes popular alone changes a served
// document, so it queues its catalogue.changed (D41), naming no course or class. Here three
// registrations in a class that is not public make course 1 the most popular: no course or
// class document changes.
func TestPopularAloneIsAnnounced(t *testing.T) {
	cfg := newFixture(t)["local"]
	if err := queue.Migrate(context.Background(), cfg.Database.URL); err != nil {
		t.Fatal(err)
	}
	addEndpoint(t, cfg.Database.URL)
	now := clock()
	mustRun(t, cfg, now)
	testkit.Exec(t, cfg.Database.URL, `INSERT INTO classes (id, course_id, start_date, end_date, cost, is_public)
		VALUES (104, 1, '2027-07-01', '2027-07-02', 100, FALSE);
		INSERT INTO registrations (id, class_id, student_id) VALUES (6, 104, 6), (7, 104, 7), (8, 104, 8)`)
	res := mustRun(t, cfg, now)
	if b := res.Manifest.Build; !res.Feed.Empty() || b == nil || b.Changed != 1 || !slices.Equal(b.Routes, []string{"/public/popular"}) {
		t.Fatalf("the second run changed %+v, feeds %+v; want /public/popular alone", b, res.Feed)
	}
	rows, err := queuedMessages(t, cfg.Database.URL)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[1].snapshot != res.SnapshotID {
		t.Fatalf("webhook messages = %+v, want two, the second for snapshot %s", rows, res.SnapshotID)
	}
	msg := decodeMessage(t, rows[1])
	if msg.Type != webhook.TypeChanged || len(msg.Data.Courses) != 0 || len(msg.Data.Classes) != 0 || !strings.Contains(rows[1].body, `"courses":[]`) {
		t.Errorf("the message = %s; want %s with empty lists", rows[1].body, webhook.TypeChanged)
	}
}

// publishedTwice returns a fixture with the webhook tables and one endpoint, published by
// builder run twice with the clock now: as it is, then after class 102's cost changed.
func publishedTwice(t *testing.T) (cfg config.Config, now func() time.Time, first, second publish.Result) {
	t.Helper()
	cfg = newFixture(t)["local"]
	if err := queue.Migrate(context.Background(), cfg.Database.URL); err != nil {
		t.Fatal(err)
	}
	addEndpoint(t, cfg.Database.URL)
	now = clock()
	first = mustRun(t, cfg, now)
	testkit.Exec(t, cfg.Database.URL, "UPDATE classes SET cost = 2600 WHERE id = 102")
	return cfg, now, first, mustRun(t, cfg, now)
}

// addEndpoint registers one webhook endpoint (on loopback: nothing is delivered here).
func addEndpoint(t *testing.T, dbURL string) {
	t.Helper()
	conn := testkit.Connect(t, dbURL)
	if _, _, err := webhook.Add(context.Background(), conn, webhook.Rules{AllowHTTP: true, AllowPrivate: true}, "http://127.0.0.1:9/hook", ""); err != nil {
		t.Fatal(err)
	}
}

type queuedMessage struct{ snapshot, body string }

// message is the body of a queued catalogue.changed.
type message struct {
	Type string
	Data webhook.Changed
}

// decodeMessage decodes m's body.
func decodeMessage(t *testing.T, m queuedMessage) message {
	t.Helper()
	var msg message
	if err := json.Unmarshal([]byte(m.body), &msg); err != nil {
		t.Fatal(err)
	}
	return msg
}

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

// TestServeStartsWebhooksOnceItCan: builder serve started before the webhook tables exist
// (or while the primary cannot answer) keeps trying, and delivers once they do, without a
// restart: a serve that found no tables at start, or no database, had webhooks off for as
// long as it ran, every partner unannounced.
func TestServeStartsWebhooksOnceItCan(t *testing.T) {
	cfg := freshCfg(t, testkit.NewLocalStore(t))
	// River's table out of the way: the database as before builder migrate made it.
	testkit.Exec(t, cfg.Database.URL, "ALTER TABLE river_job RENAME TO river_job_later")
	s := startServeWith(t, cfg, ServeOptions{webhookRetry: 50 * time.Millisecond})
	s.waitServed(t, cfg, expectedDocs(t, cfg.Database.URL), "the build at start")
	if !strings.Contains(s.logs.String(), `"msg":"webhooks are off: the database has no webhook tables yet; run builder migrate"`) {
		t.Fatalf("serve started without webhook tables and said nothing:\n%s", s.logs.String())
	}
	testkit.Exec(t, cfg.Database.URL, "ALTER TABLE river_job_later RENAME TO river_job")
	addEndpoint(t, cfg.Database.URL)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.logs.String(), `"msg":"webhooks started"`) {
		if time.Now().After(deadline) {
			t.Fatal("webhooks not started within 10 s of their tables")
		}
		time.Sleep(20 * time.Millisecond)
	}
	testkit.Exec(t, cfg.Database.URL, "UPDATE classes SET cost = 2600 WHERE id = 102")
	res := s.waitServed(t, cfg, expectedDocs(t, cfg.Database.URL), "the change")
	for {
		rows, err := queuedMessages(t, cfg.Database.URL)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 1 && rows[0].snapshot == res.SnapshotID {
			break
		}
		if time.Now().After(deadline.Add(10 * time.Second)) {
			t.Fatalf("webhook messages = %+v, want one for the change's snapshot %s", rows, res.SnapshotID)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
