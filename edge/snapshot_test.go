package edge

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/edge/docstore"
	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// objectKeys are the keys of the objects holding bodies, as the snapshot layout names them.
func objectKeys(bodies ...string) map[string]int {
	keys := map[string]int{}
	for _, b := range bodies {
		keys[snapshot.ObjectKey(snapshot.Hash([]byte(b)))] = 1
	}
	return keys
}

// fixtureB is A after a build in which class 7 changed, class 8 appeared, course 42 went
// private, and the Online list became identical to the whole list.
func fixtureB() fixture {
	f := fixture{id: "snap-b", docs: maps.Clone(fixtureA().docs)}
	f.docs["/public/class/7"] = `{"course_id":1,"changed":true}`
	f.docs["/public/class/8"] = `{"course_id":1,"new":true}`
	delete(f.docs, "/public/course/42")
	f.docs["/public/courses?type=Online"] = coursesA
	return f
}

func TestSwapFetchesOnlyChangedDocuments(t *testing.T) {
	for name, cfg := range testkit.Stores(t) {
		t.Run(name, func(t *testing.T) {
			st := watch(openStore(t, cfg))
			a := fixtureA()
			publish(t, st, a)
			ts := newTestServer(t, st, testConfig())

			want := objectKeys(slicesOf(a.docs)...)
			want["current.json"], want["snapshots/snap-a.json"] = 1, 1
			if diff := cmp.Diff(want, st.takeGets()); diff != "" {
				t.Errorf("Gets of the first load mismatch (-want +got):\n%s", diff)
			}

			publish(t, st, fixtureB())
			refresh(t, ts.Server)
			want = objectKeys(`{"course_id":1,"changed":true}`, `{"course_id":1,"new":true}`)
			want["current.json"], want["snapshots/snap-b.json"] = 1, 1
			if diff := cmp.Diff(want, st.takeGets()); diff != "" {
				t.Errorf("Gets of the swap mismatch (-want +got):\n%s", diff)
			}

			refresh(t, ts.Server)
			if diff := cmp.Diff(map[string]int{"current.json": 1}, st.takeGets()); diff != "" {
				t.Errorf("Gets of a poll without change mismatch (-want +got):\n%s", diff)
			}

			for _, tt := range []struct {
				target string
				want   response
			}{
				{"/api/v2/public/class/7", response{200, snapB, `{"course_id":1,"changed":true}`}},
				{"/api/v2/public/class/8", response{200, snapB, `{"course_id":1,"new":true}`}},
				{"/api/v2/public/course/1", response{200, snapB, `{"id":1,"snapshot":"snap-a"}`}},
				{"/api/v2/public/courses?type=Online", response{200, snapB, coursesA}},
				{"/api/v2/public/course/42", response{404, map[string]string{}, `{"message":"Course not found."}` + "\n"}},
			} {
				got := ts.get("GET", tt.target, nil, "X-Catalogue-Snapshot")
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("GET %s mismatch (-want +got):\n%s", tt.target, diff)
				}
			}
		})
	}
}

var snapB = map[string]string{"X-Catalogue-Snapshot": "snap-b"}

func slicesOf(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// TestStoreTroubleKeepsServing: whatever goes wrong with the store or with what it holds,
// the snapshot being served stays, whole.
func TestStoreTroubleKeepsServing(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		wreck func(t *testing.T, st *watchedStore)
		error string
	}{
		{"store unreachable", func(t *testing.T, st *watchedStore) {
			publish(t, st, fixtureB())
			st.down.Store(true)
		}, "connection refused"},
		{"document missing", func(t *testing.T, st *watchedStore) {
			publish(t, st, fixtureB())
			if err := st.Delete(ctx, snapshot.ObjectKey(snapshot.Hash([]byte(`{"course_id":1,"new":true}`)))); err != nil {
				t.Fatal(err)
			}
		}, "object not found"},
		{"document corrupt", func(t *testing.T, st *watchedStore) {
			publish(t, st, fixtureB())
			key := snapshot.ObjectKey(snapshot.Hash([]byte(`{"course_id":1,"new":true}`)))
			if err := st.Put(ctx, key, []byte(`{"course_id":1,"new":false}`)); err != nil {
				t.Fatal(err)
			}
		}, "content does not match its hash"},
		{"manifest missing", func(t *testing.T, st *watchedStore) {
			putJSON(t, st, snapshot.PointerKey, snapshot.Pointer{ID: "snap-gone"})
		}, "read manifest snap-gone"},
		{"pointer malformed", func(t *testing.T, st *watchedStore) {
			if err := st.Put(ctx, snapshot.PointerKey, []byte(`{"snapshot":`)); err != nil {
				t.Fatal(err)
			}
		}, "malformed current.json"},
		{"hash malformed", func(t *testing.T, st *watchedStore) {
			putJSON(t, st, snapshot.ManifestKey("snap-bad"), snapshot.Manifest{ID: "snap-bad",
				Documents: map[string]snapshot.Entry{"/public/popular": {Hash: "../../etc/passwd", Size: 1}}})
			putJSON(t, st, snapshot.PointerKey, snapshot.Pointer{ID: "snap-bad"})
		}, `malformed hash "../../etc/passwd"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := watch(openStore(t, testkit.NewLocalStore(t)))
			publish(t, st, fixtureA())
			ts := newTestServer(t, st, testConfig())
			tt.wreck(t, st)
			err := ts.docs.Refresh(ctx)
			if err == nil || !strings.Contains(err.Error(), tt.error) {
				t.Errorf("refresh() = %v, want an error containing %q", err, tt.error)
			}
			for target, want := range map[string]response{
				"/readyz":                 {200, map[string]string{}, `{"snapshot":"snap-a","status":"ok"}` + "\n"},
				"/api/v2/public/class/7":  {200, map[string]string{"X-Catalogue-Snapshot": "snap-a"}, `{"course_id":1,"snapshot":"snap-a"}`},
				"/api/v2/public/course/1": {200, map[string]string{"X-Catalogue-Snapshot": "snap-a"}, `{"id":1,"snapshot":"snap-a"}`},
			} {
				if diff := cmp.Diff(want, ts.get("GET", target, nil, "X-Catalogue-Snapshot")); diff != "" {
					t.Errorf("GET %s mismatch (-want +got):\n%s", target, diff)
				}
			}
		})
	}
}

// TestStoreDownAtStart: without a cache, an edge whose store is down serves nothing until
// the store is back, then serves its snapshot.
func TestStoreDownAtStart(t *testing.T) {
	st := watch(openStore(t, testkit.NewLocalStore(t)))
	publish(t, st, fixtureA())
	st.down.Store(true)
	ts := newTestServer(t, st, testConfig())
	if got := ts.get("GET", "/api/v2/public/course/1", nil).Status; got != 503 {
		t.Errorf("GET course/1 with the store down: status %d, want 503", got)
	}
	st.down.Store(false)
	refresh(t, ts.Server)
	want := response{200, map[string]string{"X-Catalogue-Snapshot": "snap-a"}, `{"id":1,"snapshot":"snap-a"}`}
	if diff := cmp.Diff(want, ts.get("GET", "/api/v2/public/course/1", nil, "X-Catalogue-Snapshot")); diff != "" {
		t.Errorf("GET course/1 after the store came back mismatch (-want +got):\n%s", diff)
	}
}

// TestStartCutShortGoesOn: a first load that start's deadline cuts short goes on at once in
// the background, so that the edge serves the snapshot long before its first poll (an hour
// away here), without anyone calling refresh.
func TestStartCutShortGoesOn(t *testing.T) {
	st := watch(openStore(t, testkit.NewLocalStore(t)))
	publish(t, st, fixtureA())
	var slow sync.Once
	st.before = func(key string) error {
		failed := false
		slow.Do(func() { // the first Get outlasts start's deadline and fails
			time.Sleep(300 * time.Millisecond)
			failed = true
		})
		if failed {
			return errors.New("read: i/o timeout")
		}
		return nil
	}
	replica, token := newReplica(t)
	s, err := New(Options{Config: testConfig(), Store: st, Replica: replica, Templates: templates.MustDefault(),
		Logger: slog.New(slog.DiscardHandler), RequestLog: io.Discard})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	o := s.docsOptions()
	o.StartTimeout = 100 * time.Millisecond
	s.docs = docstore.New(o)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s.Start(ctx)
	if cur := s.docs.Current(); cur != nil {
		t.Fatalf("Start served %s: its load was not cut short", cur.ID())
	}
	waitFor(t, "the load to go on", func() bool { return s.docs.Current() != nil })
	ts := testServer{Server: s, token: token}
	want := response{200, map[string]string{"X-Catalogue-Snapshot": "snap-a"}, `{"id":1,"snapshot":"snap-a"}`}
	if diff := cmp.Diff(want, ts.get("GET", "/api/v2/public/course/1", nil, "X-Catalogue-Snapshot")); diff != "" {
		t.Errorf("GET course/1 mismatch (-want +got):\n%s", diff)
	}
}

// TestPoller: the background poller picks up a new snapshot by itself. The ticker is real,
// so the test waits for the swap, with a deadline, instead of triggering it.
func TestPoller(t *testing.T) {
	st := openStore(t, testkit.NewLocalStore(t))
	publish(t, st, fixtureA())
	cfg := testConfig()
	cfg.Edge.PollInterval = 20 * time.Millisecond
	ts := newTestServer(t, st, cfg)
	publish(t, st, fixtureB())
	deadline := time.Now().Add(10 * time.Second)
	for ts.docs.Current().ID() != "snap-b" {
		if time.Now().After(deadline) {
			t.Fatalf("still serving %s 10 s after snap-b was published", ts.docs.Current().ID())
		}
		time.Sleep(5 * time.Millisecond)
	}
	want := response{200, snapB, `{"course_id":1,"new":true}`}
	if diff := cmp.Diff(want, ts.get("GET", "/api/v2/public/class/8", nil, "X-Catalogue-Snapshot")); diff != "" {
		t.Errorf("GET class/8 after the poll mismatch (-want +got):\n%s", diff)
	}
}

// TestRetryFetchesOnlyTheRest: a load that fails part way keeps what it fetched, so that
// the retry fetches only the documents it lacks.
func TestRetryFetchesOnlyTheRest(t *testing.T) {
	st := watch(openStore(t, testkit.NewLocalStore(t)))
	publish(t, st, fixtureA())
	ts := newTestServer(t, st, testConfig())
	publish(t, st, fixtureB())
	changed := snapshot.ObjectKey(snapshot.Hash([]byte(`{"course_id":1,"changed":true}`)))
	added := snapshot.ObjectKey(snapshot.Hash([]byte(`{"course_id":1,"new":true}`)))
	fetchedChanged := make(chan struct{})
	st.mu.Lock()
	st.before = func(key string) error {
		if key == added {
			<-fetchedChanged // fail only once the other document is in
			return errors.New("read: connection reset by peer")
		}
		return nil
	}
	st.after = func(key string) {
		if key == changed {
			close(fetchedChanged)
		}
	}
	st.mu.Unlock()
	st.takeGets()
	if err := ts.docs.Refresh(context.Background()); err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("refresh() = %v, want the connection reset", err)
	}
	want := map[string]int{"current.json": 1, "snapshots/snap-b.json": 1, changed: 1, added: 1}
	if diff := cmp.Diff(want, st.takeGets()); diff != "" {
		t.Errorf("Gets of the failed load mismatch (-want +got):\n%s", diff)
	}

	st.mu.Lock()
	st.before, st.after = nil, nil
	st.mu.Unlock()
	refresh(t, ts.Server)
	want = map[string]int{"current.json": 1, "snapshots/snap-b.json": 1, added: 1}
	if diff := cmp.Diff(want, st.takeGets()); diff != "" {
		t.Errorf("Gets of the retry mismatch (-want +got):\n%s", diff)
	}
	wantRes := response{200, snapB, `{"course_id":1,"changed":true}`}
	if diff := cmp.Diff(wantRes, ts.get("GET", "/api/v2/public/class/7", nil, "X-Catalogue-Snapshot")); diff != "" {
		t.Errorf("GET class/7 after the retry mismatch (-want +got):\n%s", diff)
	}
}
