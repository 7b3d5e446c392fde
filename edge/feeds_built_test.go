package edge_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder"
	"github.com/trainingco/catalogue/edge"
	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// builtItem is a feed item as a partner keeps it: its state and data ("" when deleted).
type builtItem struct {
	State string
	Data  string
}

// feedIDs are the course and class ids the test reads singly: openAPISeed's and the one
// it inserts.
var feedIDs = map[string][]int64{"course": {1, 2, 3, 4, 5}, "class": {10, 11, 20, 21, 30, 40, 50, 60}}

// feedStarts are the first pages of both feeds, by feed.
var feedStarts = map[string]string{"courses": "/api/v2/public/feeds/courses", "classes": "/api/v2/public/feeds/classes"}

// TestFeedsOfBuiltCatalogue walks both feeds of a catalogue the builder published (D35-D37):
// from the start they hold every course and class the single reads serve, once, updated,
// with data byte for byte the single read's body; after an insert, an update, a hidden
// class, a deleted one, a renamed room and a registration are published, a walk from the
// previous walk's last next holds exactly the documents whose single read changed: the
// ones served with their new body, the others deleted.
// It runs on both stores, as the edge's snapshot tests do: the second snapshot may load as a
// delta from either.
func TestFeedsOfBuiltCatalogue(t *testing.T) {
	for name := range testkit.Stores(t) {
		t.Run(name, func(t *testing.T) { testFeedsOfBuiltCatalogue(t, name) })
	}
}

// feedChanges is the batch of changes TestFeedsOfBuiltCatalogue publishes: an insert, an
// update, a hidden class, a deleted one, a renamed room and a registration.
const feedChanges = `
INSERT INTO classes (id, course_id, room_id, start_date, end_date, schedule, cost, seat_limit, down_payment, is_public)
  VALUES (60, 3, NULL, '2027-08-01', '2027-08-02', NULL, 250, 5, NULL, true);
UPDATE classes SET cost = 460 WHERE id = 11;
UPDATE classes SET is_public = false WHERE id = 21;
DELETE FROM registrations WHERE class_id = 30;
DELETE FROM classes WHERE id = 30;
UPDATE rooms SET name = 'Room 102' WHERE id = 1;
INSERT INTO registrations (class_id) VALUES (10);
`

func testFeedsOfBuiltCatalogue(t *testing.T, storeName string) {
	b, f := startFeedEdge(t, storeName)
	before := f.reads()
	got, last := f.walk(feedStarts)
	if diff := cmp.Diff(before, got); diff != "" {
		t.Fatalf("walk from the start against the single reads (-reads +feeds):\n%s", diff)
	}
	first := f.snapshot()

	testkit.Exec(t, b.cfg.Database.URL, feedChanges)
	f.build(b)
	f.waitPast(first)
	after := f.reads()
	want := changedReads(before, after)
	if len(want) < 5 {
		t.Fatalf("the changes changed only %d single reads: %v", len(want), want)
	}
	got, _ = f.walk(last)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("walk from the last next after the changes against the changed single reads (-reads +feeds):\n%s", diff)
	}
}

// changedReads is what a walk of the feeds announces when the single reads go from before
// to after: the reads that changed or appeared, updated, and the ones gone, deleted.
func changedReads(before, after map[string]builtItem) map[string]builtItem {
	want := map[string]builtItem{}
	for key, it := range after {
		if before[key] != it {
			want[key] = it
		}
	}
	for key := range before {
		if _, ok := after[key]; !ok {
			want[key] = builtItem{State: "deleted"}
		}
	}
	return want
}

// feedEdge reads the single reads and the feeds of an edge serving a built catalogue.
type feedEdge struct {
	t     *testing.T
	s     *edge.Server
	token string
}

// startFeedEdge builds openAPISeed's catalogue into a store of storeName's kind and starts
// an edge over it that polls the store every 50 ms, with a rate limit no test reaches.
func startFeedEdge(t *testing.T, storeName string) (built, *feedEdge) {
	t.Helper()
	b := buildCatalogue(t, openAPISeed, "feeds test", openAPINow)
	f := &feedEdge{t: t, token: b.token}
	if storeName == "s3" { // buildCatalogue published into a local store
		b.cfg.Store = testkit.NewS3Store(t)
		f.build(b)
	}
	b.cfg.Edge.PollInterval = 50 * time.Millisecond
	b.cfg.Edge.RateLimit = 1000 // the rollback test reads and walks more than 60 times a minute
	s, err := edge.New(edge.Options{Config: b.cfg, Store: openTestStore(t, b.cfg.Store), Replica: b.pool,
		Templates: templates.MustDefault(), Logger: quiet, Now: func() time.Time { return openAPINow }})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s.Start(runCtx)
	f.s = s
	return b, f
}

// build runs the builder over b's database and store.
func (f *feedEdge) build(b built) {
	f.t.Helper()
	if _, err := builder.Run(context.Background(), b.cfg, builder.RunOptions{Now: func() time.Time { return openAPINow }, Logger: quiet}); err != nil {
		f.t.Fatalf("build a snapshot: %v", err)
	}
}

func (f *feedEdge) get(target string) (int, string, http.Header) {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("Authorization", "Bearer "+f.token)
	rec := httptest.NewRecorder()
	f.s.Handler().ServeHTTP(rec, req)
	return rec.Code, rec.Body.String(), rec.Header()
}

// snapshot is the id of the snapshot the edge serves.
func (f *feedEdge) snapshot() string {
	_, _, h := f.get(feedStarts["courses"])
	return h.Get("X-Catalogue-Snapshot")
}

// waitPast waits until the edge serves a snapshot other than id.
func (f *feedEdge) waitPast(id string) {
	f.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); f.snapshot() == id; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			f.t.Fatalf("the edge still serves snapshot %s after 10 s", id)
		}
	}
}

// reads returns the single reads of feedIDs that are served, by kind and id.
func (f *feedEdge) reads() map[string]builtItem {
	f.t.Helper()
	m := map[string]builtItem{}
	for kind, ids := range feedIDs {
		for _, id := range ids {
			status, body, _ := f.get("/api/v2/public/" + kind + "/" + strconv.FormatInt(id, 10))
			switch status {
			case http.StatusOK:
				m[kind+" "+strconv.FormatInt(id, 10)] = builtItem{State: "updated", Data: body}
			case http.StatusNotFound:
			default:
				f.t.Fatalf("%s %d: status %d", kind, id, status)
			}
		}
	}
	return m
}

// walk follows next from each feed's target to the empty page and returns the items by
// kind and id and the last next by feed. It fails on an item seen twice and on a change
// number not above the one before it, the target's afterChangeNumber first (D35, D39).
func (f *feedEdge) walk(targets map[string]string) (map[string]builtItem, map[string]string) {
	t := f.t
	t.Helper()
	got, last := map[string]builtItem{}, map[string]string{}
	for feed, target := range targets {
		after := afterChangeNumber(t, target)
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatalf("%s: no empty page after 10", feed)
			}
			status, body, _ := f.get(target)
			if status != http.StatusOK {
				t.Fatalf("%s: status %d %s", target, status, body)
			}
			var page struct {
				Next  string
				Items []struct {
					State, Kind  string
					ID, Modified int64
					Data         json.RawMessage
				}
			}
			if err := json.Unmarshal([]byte(body), &page); err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(page.Next)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Items) == 0 {
				last[feed] = u.RequestURI()
				break
			}
			for _, it := range page.Items {
				key := strings.ToLower(it.Kind) + " " + strconv.FormatInt(it.ID, 10) // "Course", "Class" (D35)
				if _, seen := got[key]; seen {
					t.Errorf("%s twice in one walk", key)
				}
				if it.Modified <= after {
					t.Errorf("%s: change number %d after %d", key, it.Modified, after)
				}
				after = it.Modified
				got[key] = builtItem{State: it.State, Data: string(it.Data)}
			}
			target = u.RequestURI()
		}
	}
	return got, last
}

// afterChangeNumber is target's afterChangeNumber, 0 when it has none.
func afterChangeNumber(t *testing.T, target string) int64 {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	v := u.Query().Get("afterChangeNumber")
	if v == "" {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", target, err)
	}
	return n
}
