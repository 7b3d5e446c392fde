package publish

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
)

// feedDocs is a catalogue of two courses and three classes, with its lists.
func feedDocs() map[string][]byte {
	return docsOf(
		"/public/courses", `{"data":[1,2]}`,
		"/public/course/1", `{"id":1}`,
		"/public/course/2", `{"id":2}`,
		"/public/class/10", `{"course_id":1,"cost":10}`,
		"/public/class/11", `{"course_id":1,"cost":11}`,
		"/public/class/12", `{"course_id":2,"cost":12}`,
	)
}

// feedOrder is m's feed as a partner reads it: every course and class document and every
// tombstone, ordered by change number, as "updated ROUTE" or "deleted ROUTE". It checks
// that the numbers are distinct, positive, at most Feed.Last and at most 2^53-1, and that
// no other route has one.
func feedOrder(t *testing.T, m *snapshot.Manifest) []string {
	t.Helper()
	type item struct {
		n    int64
		what string
	}
	var items []item
	for r, e := range m.Documents {
		if _, _, ok := snapshot.FeedRoute(r); !ok {
			if e.Modified != 0 {
				t.Errorf("%s is no course or class but has change number %d", r, e.Modified)
			}
			continue
		}
		items = append(items, item{e.Modified, "updated " + r})
	}
	for _, ts := range m.Feed.Tombstones {
		items = append(items, item{ts.Modified, "deleted " + ts.Route})
	}
	slices.SortFunc(items, func(a, b item) int { return cmp.Compare(a.n, b.n) })
	var out []string
	for i, it := range items {
		if it.n <= 0 || it.n > m.Feed.Last || it.n > snapshot.MaxChangeNumber || i > 0 && it.n == items[i-1].n {
			t.Errorf("%s: change number %d (last %d): not positive, past the last, or given twice", it.what, it.n, m.Feed.Last)
		}
		out = append(out, it.what)
	}
	return out
}

// TestFeedNumbersFollowContent: a document gets a change number when it first appears and
// a new one, above every earlier one, only when its content changes; a removed one becomes
// a tombstone with a number of its own until it comes back or feeds.retention passes; a
// full build of the same documents announces nothing; the result lists what changed and
// the position before it (D36, D39).
func TestFeedNumbersFollowContent(t *testing.T) {
	forEachStore(t, func(t *testing.T, r *recorder) {
		ctx := context.Background()
		clk := newClock()
		p := newPublisher(r, 10)
		p.Now, p.Retention = clk.Now, 48*time.Hour
		docs := feedDocs()
		first := mustPublish(t, p, docs)
		if diff := gocmp.Diff(FeedChanges{Courses: []int64{1, 2}, Classes: []int64{10, 11, 12}}, first.Feed); diff != "" {
			t.Errorf("first publication's feed changes (-want +got):\n%s", diff)
		}
		want := []string{"updated /public/class/10", "updated /public/class/11", "updated /public/class/12", "updated /public/course/1", "updated /public/course/2"}
		if diff := gocmp.Diff(want, feedOrder(t, first.Manifest)); diff != "" {
			t.Errorf("first feed (-want +got):\n%s", diff)
		}

		same := mustPublish(t, p, feedDocs())
		if !same.Feed.Empty() || same.Feed.After != first.Manifest.Feed.Last {
			t.Errorf("a full build of the same documents announces %+v, want nothing after %d", same.Feed, first.Manifest.Feed.Last)
		}
		if diff := gocmp.Diff(first.Manifest.Feed, same.Manifest.Feed); diff != "" {
			t.Errorf("feed after an unchanged build (-before +after):\n%s", diff)
		}
		for route, e := range first.Manifest.Documents {
			if got := same.Manifest.Documents[route].Modified; got != e.Modified {
				t.Errorf("%s: change number %d after an unchanged build, was %d", route, got, e.Modified)
			}
		}

		// Class 11 changed, class 12 removed, class 13 added.
		docs["/public/class/11"] = []byte(`{"course_id":1,"cost":1100}`)
		delete(docs, "/public/class/12")
		docs["/public/class/13"] = []byte(`{"course_id":2,"cost":13}`)
		changed := mustPublish(t, p, docs)
		last := first.Manifest.Feed.Last
		if diff := gocmp.Diff(FeedChanges{After: last, Classes: []int64{11, 12, 13}}, changed.Feed); diff != "" {
			t.Errorf("changes' feed changes (-want +got):\n%s", diff)
		}
		want = []string{"updated /public/class/10", "updated /public/course/1", "updated /public/course/2",
			"updated /public/class/11", "deleted /public/class/12", "updated /public/class/13"}
		if diff := gocmp.Diff(want, feedOrder(t, changed.Manifest)); diff != "" {
			t.Errorf("feed after the changes (-want +got):\n%s", diff)
		}
		for _, route := range []string{"/public/class/11", "/public/class/13"} {
			if n := changed.Manifest.Documents[route].Modified; n <= last {
				t.Errorf("%s: change number %d, not above the last before it, %d", route, n, last)
			}
		}

		// Class 12 back, through an incremental build that also rendered class 10 again.
		back := docsOf("/public/class/12", `{"course_id":2,"cost":12}`, "/public/class/10", `{"course_id":1,"cost":10}`)
		res, err := p.PublishChanges(ctx, changed.Manifest, back, nil, meta(2, 4), false)
		if err != nil {
			t.Fatalf("PublishChanges: %v", err)
		}
		if diff := gocmp.Diff(FeedChanges{After: changed.Manifest.Feed.Last, Classes: []int64{12}}, res.Feed); diff != "" {
			t.Errorf("class back: feed changes (-want +got):\n%s", diff)
		}
		want = []string{"updated /public/class/10", "updated /public/course/1", "updated /public/course/2",
			"updated /public/class/11", "updated /public/class/13", "updated /public/class/12"}
		if diff := gocmp.Diff(want, feedOrder(t, res.Manifest)); diff != "" {
			t.Errorf("feed after class 12 came back (-want +got):\n%s", diff)
		}

		// Course 2 removed; its tombstone stays for feeds.retention, then goes.
		res, err = p.PublishChanges(ctx, res.Manifest, nil, []string{"/public/course/2"}, meta(1, 4), true)
		if err != nil {
			t.Fatalf("PublishChanges: %v", err)
		}
		clk.advance(47 * time.Hour)
		kept := mustPublishForced(t, p, res.Manifest, docsWithout(docs, back, "/public/course/2"))
		if n := len(kept.Manifest.Feed.Tombstones); n != 1 {
			t.Errorf("tombstones 47 h after the deletion: %d, want 1", n)
		}
		clk.advance(2 * time.Hour)
		gone := mustPublishForced(t, p, kept.Manifest, docsWithout(docs, back, "/public/course/2"))
		if n := len(gone.Manifest.Feed.Tombstones); n != 0 || !gone.Feed.Empty() || gone.Manifest.Feed.Last != res.Manifest.Feed.Last {
			t.Errorf("49 h after the deletion: %d tombstones, changes %+v, last %d; want none, none, %d (a dropped tombstone's number is not given again)",
				n, gone.Feed, gone.Manifest.Feed.Last, res.Manifest.Feed.Last)
		}
		stored, err := snapshot.ReadCurrent(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if diff := gocmp.Diff(gone.Manifest, stored); diff != "" {
			t.Errorf("stored manifest (-published +stored):\n%s", diff)
		}
	})
}

// TestFeedNumbersOfRollback: a rollback announces every course and class whose document it
// changes, with numbers above every one given out before: those it serves again with their
// old content as updated, those the target lacks as deleted; the others keep their numbers.
// A build after it numbers above it in turn (D39).
func TestFeedNumbersOfRollback(t *testing.T) {
	forEachStore(t, func(t *testing.T, r *recorder) {
		p := newPublisher(r, 10)
		a := mustPublish(t, p, feedDocs())
		docs := feedDocs() // class 11 changed, class 12 removed, class 13 added
		docs["/public/class/11"] = []byte(`{"course_id":1,"cost":1100}`)
		delete(docs, "/public/class/12")
		docs["/public/class/13"] = []byte(`{"course_id":2,"cost":13}`)
		b := mustPublish(t, p, docs)

		res, err := p.Rollback(context.Background(), a.SnapshotID)
		if err != nil {
			t.Fatalf("Rollback: %v", err)
		}
		last := b.Manifest.Feed.Last
		if diff := gocmp.Diff(FeedChanges{After: last, Classes: []int64{11, 12, 13}}, res.Feed); diff != "" {
			t.Errorf("rollback's feed changes (-want +got):\n%s", diff)
		}
		want := []string{"updated /public/class/10", "updated /public/course/1", "updated /public/course/2",
			"updated /public/class/11", "updated /public/class/12", "deleted /public/class/13"}
		if diff := gocmp.Diff(want, feedOrder(t, res.Manifest)); diff != "" {
			t.Errorf("feed after the rollback (-want +got):\n%s", diff)
		}
		for route, e := range res.Manifest.Documents {
			if e.Hash != a.Manifest.Documents[route].Hash {
				t.Errorf("%s after the rollback is not A's document", route)
			}
			if before := b.Manifest.Documents[route]; before.Hash == e.Hash && before.Modified != e.Modified {
				t.Errorf("%s: unchanged by the rollback, but its change number went from %d to %d", route, before.Modified, e.Modified)
			}
			if _, _, ok := snapshot.FeedRoute(route); ok && b.Manifest.Documents[route].Hash != e.Hash && e.Modified <= last {
				t.Errorf("%s: changed by the rollback, change number %d not above %d", route, e.Modified, last)
			}
		}
		if len(res.Manifest.Documents) != len(a.Manifest.Documents) {
			t.Errorf("the rollback serves %d documents, A %d", len(res.Manifest.Documents), len(a.Manifest.Documents))
		}
		for _, ts := range res.Manifest.Feed.Tombstones {
			if ts.Route == "/public/class/13" && ts.Modified <= last {
				t.Errorf("class 13's tombstone has change number %d, not above %d", ts.Modified, last)
			}
		}

		again := mustPublish(t, p, docs)
		if diff := gocmp.Diff(FeedChanges{After: res.Manifest.Feed.Last, Classes: []int64{11, 12, 13}}, again.Feed); diff != "" {
			t.Errorf("the build after the rollback: feed changes (-want +got):\n%s", diff)
		}
		for _, route := range []string{"/public/class/11", "/public/class/13"} {
			if n := again.Manifest.Documents[route].Modified; n <= res.Manifest.Feed.Last {
				t.Errorf("%s: change number %d after the rollback, not above its last %d", route, n, res.Manifest.Feed.Last)
			}
		}
	})
}

func docsWithout(docs, extra map[string][]byte, drop string) map[string][]byte {
	d := maps.Clone(docs)
	maps.Copy(d, extra)
	delete(d, drop)
	return d
}

func mustPublishForced(t *testing.T, p *Publisher, cur *snapshot.Manifest, docs map[string][]byte) Result {
	t.Helper()
	res, err := p.PublishOver(context.Background(), cur, docs, meta(1, 4), true)
	if err != nil {
		t.Fatalf("PublishOver: %v", err)
	}
	return res
}

// TestFeedNumbersAboveAnEmptiedStore: a catalogue published again into an empty store (the
// store lost or rebuilt) gets change numbers above every number the old store gave out, so
// a partner following the feeds reads everything again rather than nothing (D39).
func TestFeedNumbersAboveAnEmptiedStore(t *testing.T) {
	ctx := context.Background()
	open := func() store.Store {
		s, err := store.Open(ctx, store.Options{URL: "file://" + t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	old := mustPublish(t, newPublisher(open(), 10), feedDocs())
	again := mustPublish(t, newPublisher(open(), 10), feedDocs())
	if again.Feed.After != 0 {
		t.Errorf("an empty store's first publication is after %d, want 0 (from the start)", again.Feed.After)
	}
	for route, e := range again.Manifest.Documents {
		if _, _, ok := snapshot.FeedRoute(route); ok && e.Modified <= old.Manifest.Feed.Last {
			t.Errorf("%s: change number %d in the new store, not above the old store's last %d", route, e.Modified, old.Manifest.Feed.Last)
		}
	}
}

// TestFeedFullAndIncrementalAgree publishes the same random sequence of catalogues twice:
// once by full builds, once by incremental builds that render the changed documents and
// some unchanged ones. After every step both announce the same courses and classes, hold
// the same feed order and the same documents (the property).
func TestFeedFullAndIncrementalAgree(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			open := func() *Publisher {
				s, err := store.Open(ctx, store.Options{URL: "file://" + t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				p := newPublisher(s, 3)
				p.MaxShrink = 1
				return p
			}
			full, incr := open(), open()
			docs := map[string][]byte{"/public/courses": []byte(`[]`)}
			var curI *snapshot.Manifest
			for step := range 12 {
				next, rendered, removed := mutate(rng, docs)
				resF, err := full.Publish(ctx, next, meta(1, 1), true)
				if err != nil {
					t.Fatal(err)
				}
				var resI Result
				if curI == nil {
					resI, err = incr.Publish(ctx, next, meta(1, 1), true)
				} else {
					resI, err = incr.PublishChanges(ctx, curI, rendered, removed, meta(1, 1), true)
				}
				if err != nil {
					t.Fatal(err)
				}
				curI, docs = resI.Manifest, next
				resF.Feed.After, resI.Feed.After = 0, 0 // numbers differ between the stores
				if diff := gocmp.Diff(resF.Feed, resI.Feed); diff != "" {
					t.Fatalf("step %d: changes announced (-full +incremental):\n%s", step, diff)
				}
				if diff := gocmp.Diff(feedOrder(t, resF.Manifest), feedOrder(t, resI.Manifest)); diff != "" {
					t.Fatalf("step %d: feed order (-full +incremental):\n%s", step, diff)
				}
				if !maps.EqualFunc(resF.Manifest.Documents, resI.Manifest.Documents, func(a, b snapshot.Entry) bool { return a.Hash == b.Hash }) {
					t.Fatalf("step %d: documents differ", step)
				}
			}
		})
	}
}

// mutate returns the next catalogue after docs: some documents of 4 courses and 12 classes
// changed, added or removed. rendered holds the changed and added ones with some unchanged
// ones, as an incremental build renders them; removed the routes dropped.
func mutate(rng *rand.Rand, docs map[string][]byte) (next, rendered map[string][]byte, removed []string) {
	next, rendered = maps.Clone(docs), map[string][]byte{}
	for range 1 + rng.IntN(5) {
		route := snapshot.ClassRoute(int64(1 + rng.IntN(12)))
		if rng.IntN(3) == 0 {
			route = snapshot.CourseRoute(int64(1 + rng.IntN(4)))
		}
		switch rng.IntN(4) {
		case 0:
			if _, ok := next[route]; ok {
				delete(next, route)
				delete(rendered, route)
				removed = append(removed, route)
			}
		case 1: // rendered again, the same
			if b, ok := next[route]; ok {
				rendered[route] = b
			}
		default:
			next[route] = fmt.Appendf(nil, `{"v":%d}`, rng.IntN(3))
			rendered[route] = next[route]
			removed = slices.DeleteFunc(removed, func(r string) bool { return r == route })
		}
	}
	return next, rendered, removed
}
