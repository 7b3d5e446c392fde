package docstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/edge/docstore/docstoretest"
)

// publish writes docs as snapshot id, as a build does: objects, the delta over base for the
// routes touched when base is not "", the manifest, the pointer. Unlike put, touched may
// name routes rendered again without a change, as a change build's delta does.
func publish(t *testing.T, st store.Store, id, base string, docs map[string]string, touched []string) {
	t.Helper()
	ctx := context.Background()
	whole(docs)
	m := &snapshot.Manifest{ID: id, Header: snapshot.Header{BuiltAt: published, Today: "2027-03-01", Timezone: "UTC",
		Build: &snapshot.Build{Trigger: snapshot.TriggerChange, Incremental: base != "", Base: base}},
		Documents: map[string]snapshot.Entry{}}
	for route, body := range docs {
		h := snapshot.Hash([]byte(body))
		m.Documents[route] = snapshot.Entry{Hash: h, Size: int64(len(body))}
		if _, err := st.Get(ctx, snapshot.ObjectKey(h)); err == nil {
			continue // content-addressed: an earlier build wrote it
		}
		if err := st.Put(ctx, snapshot.ObjectKey(h), []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	m.Counts = snapshot.CountsOf(m.Documents)
	numberFeeds(t, st, base, m)
	if base != "" {
		putJSON(t, st, snapshot.DeltaKey(id), snapshot.NewDelta(m, base, touched))
	}
	putJSON(t, st, snapshot.ManifestKey(id), m)
	putJSON(t, st, snapshot.PointerKey, snapshot.Pointer{ID: id, PublishedAt: published, Previous: []string{}, Base: base})
}

// feedNumber is the last change number numberFeeds gave.
var feedNumber int64

// numberFeeds gives the course and class documents of m change numbers over base's
// manifest as the builder does: a document keeps its number while its content is the same
// and gets a new one when it changes or appears; one base has and m has not becomes a
// tombstone, which stays until its route is served again.
func numberFeeds(t *testing.T, st store.Store, base string, m *snapshot.Manifest) {
	t.Helper()
	prev := &snapshot.Manifest{Feed: &snapshot.Feed{}}
	if base != "" {
		var err error
		if prev, err = snapshot.ReadManifest(context.Background(), st, base); err != nil {
			t.Fatal(err)
		}
	}
	m.Feed = &snapshot.Feed{}
	for _, ts := range prev.Feed.Tombstones {
		if _, back := m.Documents[ts.Route]; !back {
			m.Feed.Tombstones = append(m.Feed.Tombstones, ts)
		}
	}
	for _, route := range slices.Sorted(maps.Keys(m.Documents)) {
		e := m.Documents[route]
		if _, _, ok := snapshot.FeedRoute(route); !ok {
			continue
		}
		if old, ok := prev.Documents[route]; ok && old.Hash == e.Hash {
			e.Modified = old.Modified
		} else {
			feedNumber++
			e.Modified = feedNumber
		}
		m.Documents[route] = e
	}
	for _, route := range slices.Sorted(maps.Keys(prev.Documents)) {
		if _, _, ok := snapshot.FeedRoute(route); ok && m.Documents[route].Hash == "" {
			feedNumber++
			m.Feed.Tombstones = append(m.Feed.Tombstones, snapshot.Tombstone{Route: route, Modified: feedNumber, At: published})
		}
	}
	m.Feed.Last = feedNumber
}

// fullLoad loads snapshot id from its manifest alone, as an edge that starts does.
func fullLoad(t *testing.T, st store.Store, id string) *Snapshot {
	t.Helper()
	m, err := snapshot.ReadManifest(context.Background(), st, id)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load(context.Background(), st, m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// serve returns the document of route as the edge's handlers find it.
func serve(s *Snapshot, route string) *Document {
	switch kind, id := routeKind(route); kind {
	case courseRoute:
		return s.Course(id)
	case classRoute:
		return s.Class(id)
	}
	return s.Route(route)
}

// checkSnapshot checks that s is snapshot id serving exactly docs, route -> body, each
// document with its gzip body and hash, and nothing at the other routes of probe; and that
// it is what a load of the same manifest gives (full), down to its metadata.
func checkSnapshot(t *testing.T, s, full *Snapshot, id string, docs map[string]string, probe []string) {
	t.Helper()
	if s.ID() != id {
		t.Fatalf("serving %s, want %s", s.ID(), id)
	}
	if diff := cmp.Diff(full.head, s.head); diff != "" {
		t.Errorf("%s: metadata mismatch with a full load (-full +patched):\n%s", id, diff)
	}
	if diff := cmp.Diff(full.manifest(), s.manifest()); diff != "" {
		t.Errorf("%s: manifest mismatch with a full load (-full +patched):\n%s", id, diff)
	}
	if diff := cmp.Diff(full.feeds, s.feeds, cmp.AllowUnexported(feedItem{})); diff != "" {
		t.Errorf("%s: feeds mismatch with a full load (-full +patched):\n%s", id, diff)
	}
	checkFeeds(t, s, docs)
	if s.routeCount() != len(docs) {
		t.Errorf("%s: %d routes, want %d", id, s.routeCount(), len(docs))
	}
	for _, route := range probe {
		body, ok := docs[route]
		d := serve(s, route)
		switch {
		case !ok && d != nil:
			t.Errorf("%s serves %s, which it does not have", id, route)
		case ok && d == nil:
			t.Errorf("%s does not serve %s", id, route)
		case ok && (string(d.Body()) != body || docstoretest.Gunzip(t, d.GzipBody()) != body || d.Hash() != sha256.Sum256([]byte(body))):
			t.Errorf("%s serves %s as %.60q (gzip %d bytes), want %.60q", id, route, d.Body(), len(d.GzipBody()), body)
		}
	}
}

// checkFeeds checks that the feeds of s hold every course and class document of docs once,
// with its document, and otherwise only deleted items, in order of change number.
func checkFeeds(t *testing.T, s *Snapshot, docs map[string]string) {
	t.Helper()
	seen := map[string]bool{}
	for _, f := range []struct {
		feed  *Feed
		route func(int64) string
	}{{s.Courses(), snapshot.CourseRoute}, {s.Classes(), snapshot.ClassRoute}} {
		items := f.feed.Page(nil, -1, f.feed.Len())
		for i, it := range items {
			route := f.route(it.ID)
			if i > 0 && it.Modified <= items[i-1].Modified {
				t.Fatalf("%s: feed out of order at %s", s.ID(), route)
			}
			body, served := docs[route]
			switch {
			case seen[route]:
				t.Errorf("%s: %s twice in its feed", s.ID(), route)
			case served && (it.Doc == nil || string(it.Doc.Body()) != body):
				t.Errorf("%s: %s in its feed without its document", s.ID(), route)
			case !served && it.Doc != nil:
				t.Errorf("%s: %s, not served, in its feed with a document", s.ID(), route)
			}
			seen[route] = true
		}
	}
	for route := range docs {
		if _, _, ok := snapshot.FeedRoute(route); ok && !seen[route] {
			t.Errorf("%s: %s is not in its feed", s.ID(), route)
		}
	}
}

// catalogue is a catalogue under test's changes: route -> body.
type catalogue map[string]string

var listRoutes = []string{snapshot.RouteCourses, snapshot.RoutePopular,
	snapshot.CoursesRoute([]string{"Online"}), snapshot.CoursesRoute([]string{"Blended"}),
	snapshot.CoursesRoute([]string{"Blended", "Online"}), snapshot.CoursesRoute([]string{"Brick and Mortar", "Online"})}

// sparseIDs are class ids far above the number of classes, which an idIndex keeps in its
// map; 700 falls into its pages once there are about 320 classes.
var sparseIDs = []int64{700, 5000, 1 << 40, 1<<62 + 3}

// probeRoutes are every route the test's catalogues may have, and ids around them.
func probeRoutes() []string {
	r := slices.Clone(listRoutes)
	for id := int64(0); id <= 1000; id++ {
		r = append(r, snapshot.ClassRoute(id), snapshot.CourseRoute(id))
	}
	for _, id := range sparseIDs {
		r = append(r, snapshot.ClassRoute(id-1), snapshot.ClassRoute(id), snapshot.ClassRoute(id+1))
	}
	return r
}

// change makes one random change to route in c and returns whether it touched the route
// (rendered or removed it): a new body, a removal, the same body rendered again, or the
// body of another route (two routes sharing a document).
func (c catalogue) change(r *rand.Rand, route, tag string) bool {
	_, had := c[route]
	switch n := r.IntN(10); {
	case !had && n < 7:
		c[route] = fmt.Sprintf(`{"route":%q,"v":%q}`, route, tag)
	case !had:
		return false
	case n < 5:
		c[route] = fmt.Sprintf(`{"route":%q,"v":%q}`, route, tag)
	case n < 7 && slices.Contains(snapshot.RequiredRoutes(), route): // never removed by a build
		c[route] = fmt.Sprintf(`{"route":%q,"v":%q}`, route, tag)
	case n < 7:
		delete(c, route)
	case n < 9: // rendered again, the same
	default:
		routes := slices.Sorted(maps.Keys(c))
		c[route] = c[routes[r.IntN(len(routes))]]
	}
	return true
}

// TestPatchEqualsFullLoad: a snapshot loaded from its delta over the one served equals a
// load of its manifest, through 30 change builds in a row, each over the last: classes
// changed, removed, added (in the pages, past them, far above them in the map, and into
// the pages from the map as the classes grow), rendered again unchanged or given another
// route's document, courses changed, removed and added, course lists changed (a build never
// removes one), and rounds that remove most classes and add them back. Each is loaded from its delta (the
// manifest is never read), and leaves the snapshot it was made from as it was.
func TestPatchEqualsFullLoad(t *testing.T) {
	st := &countingStore{Store: store.NewLocal(t.TempDir()).Unsynced()} // a test's: syncs would take most of its time
	c := catalogue{}
	for _, route := range listRoutes[:4] {
		c[route] = `{"list":` + fmt.Sprint(len(route)) + `}`
	}
	for id := int64(1); id <= 300; id++ {
		c[snapshot.ClassRoute(id)] = fmt.Sprintf(`{"class":%d}`, id)
		if id <= 20 {
			c[snapshot.CourseRoute(id)] = fmt.Sprintf(`{"course":%d}`, id)
		}
	}
	c[snapshot.ClassRoute(sparseIDs[1])] = `{"class":"sparse"}`
	publish(t, st, "patch-0", "", c, nil)
	h := New(Options{Store: st, PollInterval: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	mustRefresh(t, h)
	probe := probeRoutes()
	r := rand.New(rand.NewPCG(11, 12))
	for round := 1; round <= 30; round++ {
		prev, prevDocs := h.Current(), maps.Clone(c)
		base, id := prev.ID(), fmt.Sprintf("patch-%d", round)
		touched := c.round(r, round)
		publish(t, st, id, base, c, touched)
		st.take()
		mustRefresh(t, h)
		for _, read := range st.take() {
			if strings.HasPrefix(read, "get "+snapshot.ManifestPrefix) {
				t.Errorf("%s: %s; want it loaded from its delta", id, read)
			}
		}
		checkSnapshot(t, h.Current(), fullLoad(t, st, id), id, c, probe)
		checkHeld(t, h.Current())
		// Requests still being answered from the previous snapshot see it unchanged.
		checkSnapshot(t, prev, prev, base, prevDocs, probe)
		checkHeld(t, prev)
	}
}

// round makes the changes of one change build to c and returns the routes it touched.
func (c catalogue) round(r *rand.Rand, round int) []string {
	tag := fmt.Sprint(round)
	var touched []string
	touch := func(route string) {
		if c.change(r, route, tag) {
			touched = append(touched, route)
		}
	}
	switch round {
	case 10: // most classes go
		for id := int64(1); id <= 1000; id++ {
			if _, ok := c[snapshot.ClassRoute(id)]; ok && r.IntN(10) > 0 {
				delete(c, snapshot.ClassRoute(id))
				touched = append(touched, snapshot.ClassRoute(id))
			}
		}
	case 11, 12: // and come back, with more: 700 moves from the map into the pages
		for id := int64(1); id <= 400; id++ {
			c[snapshot.ClassRoute(id)] = fmt.Sprintf(`{"class":%d,"v":%d}`, id, round)
			touched = append(touched, snapshot.ClassRoute(id))
		}
	}
	for range 1 + r.IntN(40) {
		touch(snapshot.ClassRoute(1 + r.Int64N(450)))
	}
	touch(snapshot.ClassRoute(sparseIDs[r.IntN(len(sparseIDs))]))
	touch(snapshot.CourseRoute(1 + r.Int64N(25)))
	touch(listRoutes[r.IntN(len(listRoutes))])
	return touched
}

// TestDeltaNotUsable: a change build's snapshot whose delta does not describe it over the
// snapshot served is loaded from its manifest, and served whole and right; a delta whose
// document is missing from the store fails the refresh as the manifest would, and the
// snapshot served stays.
func TestDeltaNotUsable(t *testing.T) {
	a := catalogue{snapshot.RouteCourses: `{"courses":"a"}`, snapshot.ClassRoute(1): `{"v":"1a"}`,
		snapshot.ClassRoute(2): `{"v":"2a"}`, snapshot.CourseRoute(1): `{"course":1}`}
	b := maps.Clone(a) // the snapshot published over a
	b[snapshot.ClassRoute(1)], b[snapshot.ClassRoute(3)] = `{"v":"1b"}`, `{"v":"3b"}`
	delete(b, snapshot.ClassRoute(2))
	changed := []string{snapshot.ClassRoute(1), snapshot.ClassRoute(2), snapshot.ClassRoute(3)}
	tests := []struct {
		name     string
		delta    func(d *snapshot.Delta) any // what is stored as the delta: JSON of it, bytes, nil for none
		manifest bool                        // whether the manifest must be read
	}{
		{"usable", func(d *snapshot.Delta) any { return d }, false},
		{"no delta", func(*snapshot.Delta) any { return nil }, true},
		{"not JSON", func(*snapshot.Delta) any { return []byte(`{"snapshot":`) }, true},
		// As right, but over another snapshot: applied to a, it would serve class 2.
		{"over another snapshot", func(d *snapshot.Delta) any {
			d.Base, d.Removed = "snap-x", nil // a's count still: only the base tells
			d.Documents[snapshot.ClassRoute(2)] = entry(a[snapshot.ClassRoute(2)])
			delete(d.Documents, snapshot.ClassRoute(3))
			return d
		}, true},
		{"malformed hash", func(d *snapshot.Delta) any {
			d.Documents[snapshot.ClassRoute(3)] = snapshot.Entry{Hash: strings.ToUpper(d.Documents[snapshot.ClassRoute(3)].Hash), Size: 10}
			return d
		}, true},
		// A removal left out: applied, it would serve class 2 still.
		{"documents miscounted", func(d *snapshot.Delta) any { d.Removed = nil; return d }, true},
		// Applied, these would leave a snapshot that is not whole (snapshot.Manifest.Check).
		{"a route every snapshot has removed", func(d *snapshot.Delta) any {
			d.Removed = append(d.Removed, snapshot.RoutePopular)
			d.Counts.Documents--
			return d
		}, true},
		{"classes miscounted", func(d *snapshot.Delta) any { d.Counts.Classes++; return d }, true},
		{"courses miscounted", func(d *snapshot.Delta) any { d.Counts.Courses--; return d }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &countingStore{Store: store.NewLocal(t.TempDir()).Unsynced()}
			publish(t, st, "snap-a", "", a, nil)
			h := New(Options{Store: st, PollInterval: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			mustRefresh(t, h)
			// b as a change build publishes it, and its delta as tt has it.
			publish(t, st, "snap-b", "snap-a", b, changed)
			ctx := context.Background()
			d, err := snapshot.ReadDelta(ctx, st, "snap-b")
			if err != nil {
				t.Fatal(err)
			}
			switch v := tt.delta(d).(type) {
			case []byte:
				err = st.Put(ctx, snapshot.DeltaKey("snap-b"), v)
			case nil:
				err = st.Delete(ctx, snapshot.DeltaKey("snap-b"))
			default:
				putJSON(t, st, snapshot.DeltaKey("snap-b"), v)
			}
			if err != nil {
				t.Fatal(err)
			}
			st.take()
			mustRefresh(t, h)
			if reads := st.take(); slices.Contains(reads, "get "+snapshot.ManifestKey("snap-b")) != tt.manifest {
				t.Errorf("reads %q: want the manifest read %t", reads, tt.manifest)
			}
			checkSnapshot(t, h.Current(), fullLoad(t, st, "snap-b"), "snap-b", b, slices.Collect(maps.Keys(a)))
		})
	}
	t.Run("document missing", func(t *testing.T) {
		st := store.NewLocal(t.TempDir()).Unsynced()
		publish(t, st, "snap-a", "", a, nil)
		h := New(Options{Store: st, PollInterval: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		mustRefresh(t, h)
		publish(t, st, "snap-b", "snap-a", b, changed)
		if err := st.Delete(context.Background(), objectKey(b[snapshot.ClassRoute(3)])); err != nil {
			t.Fatal(err)
		}
		if err := h.Refresh(context.Background()); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Refresh = %v, want the document not found", err)
		}
		checkSnapshot(t, h.Current(), h.Current(), "snap-a", a, slices.Collect(maps.Keys(b)))
	})
}

func entry(body string) snapshot.Entry {
	return snapshot.Entry{Hash: snapshot.Hash([]byte(body)), Size: int64(len(body))}
}

// TestCacheFollowsDeltas: after each swap to a snapshot loaded from its delta, edge.cache_dir
// holds that snapshot exactly (its manifest, each of its documents, no other document)
// and serves it whole to an edge that starts without the store: a document a change
// dropped goes unless another route still has it, and a document a change brought is
// written although another route had it already. A cache that does not hold the snapshot
// the delta is over (the holder was given another one) is compared with the snapshot
// whole.
func TestCacheFollowsDeltas(t *testing.T) {
	ctx := context.Background()
	st := store.NewLocal(t.TempDir()).Unsynced()
	cacheDir := t.TempDir()
	h := New(Options{Store: st, CacheDir: cacheDir, PollInterval: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	c := catalogue{snapshot.RouteCourses: `{"courses":0}`, snapshot.CourseRoute(1): `{"course":1}`}
	for id := int64(1); id <= 6; id++ {
		c[snapshot.ClassRoute(id)] = fmt.Sprintf(`{"class":%d}`, id)
	}
	c[snapshot.ClassRoute(6)] = c[snapshot.ClassRoute(5)]
	publish(t, st, "cache-0", "", c, nil)
	mustRefresh(t, h)
	first := h.Current()
	steps := []struct {
		base   string // "": the snapshot served
		change func(c catalogue) []string
	}{
		{"", func(c catalogue) []string {
			c[snapshot.ClassRoute(1)] = `{"class":"1b"}`
			delete(c, snapshot.ClassRoute(2))
			delete(c, snapshot.ClassRoute(5))                     // its document is class 6's too
			c[snapshot.ClassRoute(3)] = c[snapshot.ClassRoute(4)] // a document the cache has
			c[snapshot.RouteCourses] = `{"courses":1}`
			return []string{snapshot.ClassRoute(1), snapshot.ClassRoute(2), snapshot.ClassRoute(3), snapshot.ClassRoute(4), snapshot.ClassRoute(5), snapshot.RouteCourses}
		}},
		{"", func(c catalogue) []string {
			delete(c, snapshot.ClassRoute(6)) // the last route with that document
			c[snapshot.ClassRoute(7)] = `{"class":7}`
			return []string{snapshot.ClassRoute(6), snapshot.ClassRoute(7)}
		}},
		{"cache-0", func(c catalogue) []string {
			c[snapshot.ClassRoute(8)] = `{"class":8}`
			return []string{snapshot.ClassRoute(8)}
		}},
	}
	for i, step := range steps {
		id := fmt.Sprintf("cache-%d", i+1)
		base := h.Current().ID()
		if step.base != "" {
			// Over a snapshot the cache does not hold: the holder serves it again, as a
			// rollback does, and the change build is over it.
			c = catalogue(maps.Clone(docsOf(t, first)))
			h.Swap(first)
			base = step.base
		}
		touched := step.change(c)
		publish(t, st, id, base, c, touched)
		mustRefresh(t, h)
		full := fullLoad(t, st, id)
		checkSnapshot(t, h.Current(), full, id, c, slices.Collect(maps.Keys(c)))
		checkCache(t, ctx, cacheDir, full, c)
	}
}

// docsOf returns the documents of s, route -> body.
func docsOf(t *testing.T, s *Snapshot) map[string]string {
	docs := map[string]string{}
	s.each(func(route string, d *Document) { docs[route] = string(d.Body()) })
	return docs
}

// checkCache checks that the cache in dir holds full, which serves docs, and nothing else.
func checkCache(t *testing.T, ctx context.Context, dir string, full *Snapshot, docs map[string]string) {
	t.Helper()
	dc := newDiskCache(dir)
	have, err := dc.objects(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, body := range docs {
		want[objectKey(body)] = true
	}
	got := map[string]bool{}
	for _, key := range have {
		got[key] = true
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: documents in the cache mismatch (-want +got):\n%s", full.ID(), diff)
	}
	cached, err := dc.load(ctx)
	if err != nil || cached == nil {
		t.Fatalf("%s: load the cache: %v, %v", full.ID(), cached, err)
	}
	checkSnapshot(t, cached, full, full.ID(), docs, slices.Collect(maps.Keys(docs)))
}

// TestPatchCompacts: a snapshot loaded from a delta that changes few documents keeps the
// others where they are, in the chunks of the snapshot it was made from; one whose changes
// leave those chunks holding too much copies every document into chunks of its own, so
// that the old ones can go. Either way every document is whole, and what the snapshot
// counts of its chunks (held) is what they hold.
func TestPatchCompacts(t *testing.T) {
	dir := t.TempDir()
	gen := docstoretest.NewCatalogue(6000, 20) // about 2.5 MB with the gzip bodies: three chunks
	gen.Publish(t, dir, "compact-0")
	h := New(Options{Store: store.NewLocal(dir), PollInterval: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	mustRefresh(t, h)
	s0 := h.Current()

	gen.ChangeClasses(t, dir, []int{7}, "compact-1", "compact-0")
	mustRefresh(t, h)
	s1 := h.Current()
	checkBodies(t, s1, gen)
	checkHeld(t, s1)
	if got, want := sharedChunks(s0, s1), chunksOf(s0); got != want {
		t.Errorf("after 1 class changed: %d chunks of the previous snapshot still used, want all %d", got, want)
	}

	var most []int
	for id := 1; id <= 4800; id++ {
		most = append(most, id)
	}
	gen.ChangeClasses(t, dir, most, "compact-2", "compact-1")
	mustRefresh(t, h)
	s2 := h.Current()
	if s2.ID() != "compact-2" {
		t.Fatalf("serving %s, want compact-2", s2.ID())
	}
	checkBodies(t, s2, gen)
	checkHeld(t, s2)
	if got := sharedChunks(s1, s2); got != 0 {
		t.Errorf("after 80%% changed: %d chunks of the previous snapshots still used, want 0", got)
	}
}

// checkHeld checks what s counts of its chunks against a count of its documents.
func checkHeld(t *testing.T, s *Snapshot) {
	t.Helper()
	want := holding{refs: map[*chunk]int32{}}
	s.eachDoc(want.add)
	if diff := cmp.Diff(want, s.held, cmp.AllowUnexported(holding{})); diff != "" {
		t.Errorf("%s: held mismatch (-counted +kept):\n%s", s.ID(), diff)
	}
}
