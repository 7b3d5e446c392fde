package edge

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// cacheKeys lists every file in the cache folder, as store keys.
func cacheKeys(t *testing.T, dir string) []string {
	t.Helper()
	keys, err := store.NewLocal(dir).List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// layoutOf is the cache layout of f, written out from the snapshot format: the pointer, the
// manifest of f, and one object per distinct body.
func layoutOf(f fixture) []string {
	keys := []string{snapshot.PointerKey, snapshot.ManifestKey(f.id)}
	for k := range objectKeys(slicesOf(f.docs)...) {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestCacheDir(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig()
	cfg.Edge.CacheDir = dir
	st := watch(openStore(t, testkit.NewLocalStore(t)))
	publish(t, st, fixtureA())
	course1 := response{200, map[string]string{"X-Catalogue-Snapshot": "snap-a"}, `{"id":1,"snapshot":"snap-a"}`}

	// A first edge loads A from the store and saves it.
	newTestServer(t, st, cfg)
	if diff := cmp.Diff(layoutOf(fixtureA()), cacheKeys(t, dir)); diff != "" {
		t.Errorf("cache after loading A mismatch (-want +got):\n%s", diff)
	}

	// With the store down, a second edge serves A from the cache.
	st.down.Store(true)
	ts := newTestServer(t, st, cfg)
	if diff := cmp.Diff(course1, ts.get("GET", "/api/v2/public/course/1", nil, "X-Catalogue-Snapshot")); diff != "" {
		t.Errorf("GET course/1 from the cache mismatch (-want +got):\n%s", diff)
	}
	if got := ts.get("GET", "/readyz", nil).Status; got != 200 {
		t.Errorf("GET /readyz from the cache: status %d, want 200", got)
	}

	// So does an edge whose store is reachable but has no snapshot (a new, empty bucket).
	ts = newTestServer(t, openStore(t, testkit.NewLocalStore(t)), cfg)
	if diff := cmp.Diff(course1, ts.get("GET", "/api/v2/public/course/1", nil, "X-Catalogue-Snapshot")); diff != "" {
		t.Errorf("GET course/1 from the cache with an empty store mismatch (-want +got):\n%s", diff)
	}

	// The store is back with B: a third edge fetches only what changed since A, which the
	// cache holds, and the cache then holds B alone.
	st.down.Store(false)
	publish(t, st, fixtureB())
	st.takeGets()
	ts = newTestServer(t, st, cfg)
	want := objectKeys(`{"course_id":1,"changed":true}`, `{"course_id":1,"new":true}`)
	want["current.json"], want["snapshots/snap-b.json"] = 1, 1
	if diff := cmp.Diff(want, st.takeGets()); diff != "" {
		t.Errorf("Gets of a start with A cached mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(layoutOf(fixtureB()), cacheKeys(t, dir)); diff != "" {
		t.Errorf("cache after loading B mismatch (-want +got):\n%s", diff)
	}
	if got := ts.get("GET", "/api/v2/public/class/8", nil, "X-Catalogue-Snapshot").Headers["X-Catalogue-Snapshot"]; got != "snap-b" {
		t.Errorf("X-Catalogue-Snapshot = %q, want snap-b", got)
	}
}

// TestCacheDirCorrupt: a cache with one bad document is not used at all, and the next save
// writes every document again, so that the cache is good after it.
func TestCacheDirCorrupt(t *testing.T) {
	objectOf := func(dir, body string) string {
		return filepath.Join(dir, filepath.FromSlash(snapshot.ObjectKey(snapshot.Hash([]byte(body)))))
	}
	for _, tt := range []struct {
		name  string
		wreck func(t *testing.T, dir string)
	}{
		{"document altered", func(t *testing.T, dir string) {
			if err := os.WriteFile(objectOf(dir, `{"id":1,"snapshot":"snap-a"}`), []byte(`{"id":1,"snapshot":"snap-x"}`), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"document truncated", func(t *testing.T, dir string) {
			if err := os.Truncate(objectOf(dir, coursesA), 10); err != nil {
				t.Fatal(err)
			}
		}},
		{"document missing", func(t *testing.T, dir string) {
			if err := os.Remove(objectOf(dir, `{"course_id":1,"snapshot":"snap-a"}`)); err != nil {
				t.Fatal(err)
			}
		}},
		{"manifest garbled", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "snapshots", "snap-a.json"), []byte(`{"snapshot":"snap-a","documents":`), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := testConfig()
			cfg.Edge.CacheDir = dir
			st := watch(openStore(t, testkit.NewLocalStore(t)))
			publish(t, st, fixtureA())
			newTestServer(t, st, cfg)
			tt.wreck(t, dir)

			st.down.Store(true)
			ts := newTestServer(t, st, cfg)
			for _, target := range []string{"/readyz", "/api/v2/public/course/1"} {
				if got := ts.get("GET", target, nil).Status; got != 503 {
					t.Errorf("GET %s with a bad cache and the store down: status %d, want 503", target, got)
				}
			}

			st.down.Store(false)
			refresh(t, ts.Server) // loads A from the store and rewrites the whole cache
			st.down.Store(true)
			ts = newTestServer(t, st, cfg)
			want := response{200, map[string]string{"X-Catalogue-Snapshot": "snap-a"}, `{"id":1,"snapshot":"snap-a"}`}
			if diff := cmp.Diff(want, ts.get("GET", "/api/v2/public/course/1", nil, "X-Catalogue-Snapshot")); diff != "" {
				t.Errorf("GET course/1 from the rewritten cache mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
