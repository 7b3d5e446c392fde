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

func testFeedsOfBuiltCatalogue(t *testing.T, storeName string) {
	ctx := context.Background()
	b := buildCatalogue(t, openAPISeed, "feeds test", openAPINow)
	if storeName == "s3" { // buildCatalogue published into a local store
		b.cfg.Store = testkit.NewS3Store(t)
		if _, err := builder.Run(ctx, b.cfg, builder.RunOptions{Now: func() time.Time { return openAPINow }, Logger: quiet}); err != nil {
			t.Fatalf("build the snapshot: %v", err)
		}
	}
	b.cfg.Edge.PollInterval = 50 * time.Millisecond
	s, err := edge.New(edge.Options{Config: b.cfg, Store: openTestStore(t, b.cfg.Store), Replica: b.pool,
		Templates: templates.MustDefault(), Logger: quiet, Now: func() time.Time { return openAPINow }})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	s.Start(runCtx)
	get := func(target string) (int, string, http.Header) {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.Header.Set("Authorization", "Bearer "+b.token)
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		return rec.Code, rec.Body.String(), rec.Header()
	}
	reads := func() map[string]builtItem {
		m := map[string]builtItem{}
		for kind, ids := range feedIDs {
			for _, id := range ids {
				status, body, _ := get("/api/v2/public/" + kind + "/" + strconv.FormatInt(id, 10))
				switch status {
				case http.StatusOK:
					m[kind+" "+strconv.FormatInt(id, 10)] = builtItem{State: "updated", Data: body}
				case http.StatusNotFound:
				default:
					t.Fatalf("%s %d: status %d", kind, id, status)
				}
			}
		}
		return m
	}
	// walk follows next from target to the empty page and returns the items by kind and
	// id (failing on one seen twice) and the last next.
	walk := func(targets map[string]string) (map[string]builtItem, map[string]string) {
		got, last := map[string]builtItem{}, map[string]string{}
		for feed, target := range targets {
			for pages := 0; ; pages++ {
				if pages > 10 {
					t.Fatalf("%s: no empty page after 10", feed)
				}
				status, body, _ := get(target)
				if status != http.StatusOK {
					t.Fatalf("%s: status %d %s", target, status, body)
				}
				var page struct {
					Next  string
					Items []struct {
						State, Kind string
						ID          int64
						Data        json.RawMessage
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
					got[key] = builtItem{State: it.State, Data: string(it.Data)}
				}
				target = u.RequestURI()
			}
		}
		return got, last
	}

	before := reads()
	got, last := walk(map[string]string{"courses": "/api/v2/public/feeds/courses", "classes": "/api/v2/public/feeds/classes"})
	if diff := cmp.Diff(before, got); diff != "" {
		t.Fatalf("walk from the start against the single reads (-reads +feeds):\n%s", diff)
	}
	_, _, h := get("/api/v2/public/feeds/courses")
	first := h.Get("X-Catalogue-Snapshot")

	testkit.Exec(t, b.cfg.Database.URL, `
INSERT INTO classes (id, course_id, room_id, start_date, end_date, schedule, cost, seat_limit, down_payment, is_public)
  VALUES (60, 3, NULL, '2027-08-01', '2027-08-02', NULL, 250, 5, NULL, true);
UPDATE classes SET cost = 460 WHERE id = 11;
UPDATE classes SET is_public = false WHERE id = 21;
DELETE FROM registrations WHERE class_id = 30;
DELETE FROM classes WHERE id = 30;
UPDATE rooms SET name = 'Room 102' WHERE id = 1;
INSERT INTO registrations (class_id) VALUES (10);
`)
	if _, err := builder.Run(ctx, b.cfg, builder.RunOptions{Now: func() time.Time { return openAPINow }, Logger: quiet}); err != nil {
		t.Fatalf("build the second snapshot: %v", err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, _, h := get("/api/v2/public/feeds/courses"); h.Get("X-Catalogue-Snapshot") != first {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the edge did not load the second snapshot in 10 s")
		}
	}
	after := reads()
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
	if len(want) < 5 {
		t.Fatalf("the changes changed only %d single reads: %v", len(want), want)
	}
	got, _ = walk(last)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("walk from the last next after the changes against the changed single reads (-reads +feeds):\n%s", diff)
	}
}
