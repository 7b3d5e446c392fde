package publish

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// The catalogue of most tests: three routes, two of which share their content.
var base = docsOf(
	"/public/courses", `{"data":[{"id":1,"name":"Go"}]}`,
	"/public/course/1", `{"id":1,"name":"Go","type":"Online","description":"<p>Go</p>"}`,
	"/public/courses?type=Online", `{"data":[{"id":1,"name":"Go"}]}`,
)

func TestPublishWritesObjectsThenManifestThenPointer(t *testing.T) {
	forEachStore(t, func(t *testing.T, r *recorder) {
		p := newPublisher(r, 10)
		res := mustPublish(t, p, base)

		// Two distinct bodies: two objects, in any order, then the manifest, then the pointer.
		wantObjects := objectKeys(`{"data":[{"id":1,"name":"Go"}]}`, `{"id":1,"name":"Go","type":"Online","description":"<p>Go</p>"}`)
		want := []string{"objects", "objects", snapshot.ManifestKey(res.SnapshotID), snapshot.PointerKey}
		var got []string
		for _, k := range r.puts {
			if strings.HasPrefix(k, "objects/") {
				k = "objects"
			}
			got = append(got, k)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Put order mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(wantObjects, listKeys(t, r, "objects/")); diff != "" {
			t.Errorf("List(objects/) mismatch (-want +got):\n%s", diff)
		}
		m, err := snapshot.ReadCurrent(context.Background(), r)
		if err != nil {
			t.Fatalf("ReadCurrent: %v", err)
		}
		// The first publication announces course 1, new to the feed (D36), after position 0.
		wantRes := Result{SnapshotID: res.SnapshotID, Documents: 3, ObjectsStored: 2, BytesStored: 31 + 62, Manifest: m,
			Feed: FeedChanges{After: 0, Courses: []int64{1}}}
		if diff := cmp.Diff(wantRes, res, ignoreDuration); diff != "" {
			t.Errorf("Publish result mismatch (-want +got):\n%s", diff)
		}
		wantCounts := snapshot.Counts{Courses: 1, Classes: 1, Documents: 3}
		if diff := cmp.Diff(wantCounts, m.Counts); diff != "" {
			t.Errorf("manifest counts mismatch (-want +got):\n%s", diff)
		}
		for route, body := range base {
			got, err := snapshot.ReadDocument(context.Background(), r, m.Documents[route])
			if err != nil || string(got) != string(body) {
				t.Errorf("document %s = %q, %v; want %q", route, got, err, body)
			}
		}
	})
}

var ignoreDuration = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Duration" }, cmp.Ignore())

func TestPublishFailureLeavesCurrentSnapshot(t *testing.T) {
	changed := docsOf(
		"/public/courses", `{"data":[{"id":1,"name":"Go 2"}]}`,
		"/public/course/1", `{"id":1,"name":"Go 2","type":"Online","description":"<p>Go</p>"}`,
		"/public/course/2", `{"id":2,"name":"Rust","type":"Online","description":""}`,
	)
	// changed has three new bodies: Puts 1-3 are objects, 4 the manifest, 5 the pointer.
	tests := []struct {
		name   string
		failAt int
	}{
		{"first object", 1},
		{"third object", 3},
		{"manifest", 4},
		{"pointer", 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forEachStore(t, func(t *testing.T, r *recorder) {
				p := newPublisher(r, 10)
				first := mustPublish(t, p, base)
				r.reset()
				r.onPut = func(n int, key string) error {
					if n == tt.failAt {
						return errInjected
					}
					return nil
				}
				_, err := p.Publish(context.Background(), changed, meta(2, 1), false)
				if !errors.Is(err, errInjected) {
					t.Fatalf("Publish error = %v, want the injected failure", err)
				}
				if got := currentID(t, r); got != first.SnapshotID {
					t.Errorf("current snapshot = %s, want the first one %s", got, first.SnapshotID)
				}
				assertServable(t, r, base)
			})
		})
	}
}

// assertServable checks that the current snapshot serves exactly docs.
func assertServable(t *testing.T, r *recorder, docs map[string][]byte) {
	t.Helper()
	ctx := context.Background()
	m, err := snapshot.ReadCurrent(ctx, r)
	if err != nil {
		t.Fatalf("ReadCurrent: %v", err)
	}
	got := make(map[string]string)
	for route, e := range m.Documents {
		b, err := snapshot.ReadDocument(ctx, r, e)
		if err != nil {
			t.Fatalf("ReadDocument(%s): %v", route, err)
		}
		got[route] = string(b)
	}
	want := make(map[string]string)
	for route, b := range docs {
		want[route] = string(b)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("current snapshot's documents mismatch (-want +got):\n%s", diff)
	}
}

func TestPublishCancelledMidUploadPublishesNothing(t *testing.T) {
	forEachStore(t, func(t *testing.T, r *recorder) {
		p := newPublisher(r, 10)
		first := mustPublish(t, p, base)
		r.reset()
		many := make(map[string][]byte)
		for i := range 500 {
			many[snapshot.ClassRoute(int64(i))] = []byte(`{"class":` + strings.Repeat("1", i+1) + `}`)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r.onPut = func(n int, key string) error {
			if n == 100 {
				cancel() // as SIGTERM would, half-way through the uploads
			}
			return nil
		}
		_, err := p.Publish(ctx, many, meta(1, 1), true)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Publish error = %v, want context.Canceled", err)
		}
		if got := currentID(t, r); got != first.SnapshotID {
			t.Errorf("current snapshot = %s, want the first one %s", got, first.SnapshotID)
		}
		if diff := cmp.Diff([]string{snapshot.ManifestKey(first.SnapshotID)}, listKeys(t, r, snapshot.ManifestPrefix)); diff != "" {
			t.Errorf("manifests mismatch (-want +got):\n%s", diff)
		}
		assertServable(t, r, base)
	})
}

func TestPublishStoresOnlyChangedDocuments(t *testing.T) {
	oneChanged := docsOf(
		"/public/courses", `{"data":[{"id":1,"name":"Go"}]}`,
		"/public/course/1", `{"id":1,"name":"Go","type":"Online","description":"<p>Go, updated</p>"}`,
		"/public/courses?type=Online", `{"data":[{"id":1,"name":"Go"}]}`,
	)
	forEachStore(t, func(t *testing.T, r *recorder) {
		p := newPublisher(r, 10)
		first := mustPublish(t, p, base)

		r.reset()
		same := mustPublish(t, p, base)
		if same.ObjectsStored != 0 || r.objectPuts() != 0 {
			t.Errorf("unchanged publish stored %d objects (%d object Puts), want 0", same.ObjectsStored, r.objectPuts())
		}
		wantPuts := []string{snapshot.ManifestKey(same.SnapshotID), snapshot.PointerKey}
		if diff := cmp.Diff(wantPuts, r.puts); diff != "" {
			t.Errorf("unchanged publish Puts mismatch (-want +got):\n%s", diff)
		}
		if same.SnapshotID == first.SnapshotID {
			t.Errorf("unchanged publish reused snapshot id %s", same.SnapshotID)
		}

		r.reset()
		one := mustPublish(t, p, oneChanged)
		if one.ObjectsStored != 1 || r.objectPuts() != 1 {
			t.Errorf("one-document change stored %d objects (%d object Puts), want 1", one.ObjectsStored, r.objectPuts())
		}
		assertServable(t, r, oneChanged)
	})
}

func TestPublishGuard(t *testing.T) {
	tests := []struct {
		name             string
		courses, classes int
		force            bool
		wantErr          string // "" means published
	}{
		{"same size", 10, 100, false, ""},
		{"half the courses is allowed", 5, 100, false, ""},
		{"courses fall by 60%", 4, 100, false, "public courses would fall from 10 to 4"},
		{"classes fall by 51%", 10, 49, false, "public classes would fall from 100 to 49"},
		{"empty catalogue", 0, 0, false, "public courses would fall from 10 to 0"},
		{"forced", 0, 0, true, ""},
		{"growth", 20, 300, false, ""},
	}
	forEachStore(t, func(t *testing.T, r *recorder) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := newPublisher(r, 10)
				if _, err := p.Publish(context.Background(), base, meta(10, 100), true); err != nil {
					t.Fatalf("Publish of the baseline: %v", err)
				}
				before := currentID(t, r)
				res, err := p.Publish(context.Background(), base, meta(tt.courses, tt.classes), tt.force)
				if tt.wantErr == "" {
					if err != nil {
						t.Fatalf("Publish(%d courses, %d classes) = %v, want success", tt.courses, tt.classes, err)
					}
					if got := currentID(t, r); got != res.SnapshotID {
						t.Errorf("current = %s, want %s", got, res.SnapshotID)
					}
					return
				}
				if !errors.Is(err, ErrShrink) || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "--force") {
					t.Fatalf("Publish(%d courses, %d classes) = %v, want ErrShrink naming %q and --force", tt.courses, tt.classes, err, tt.wantErr)
				}
				if got := currentID(t, r); got != before {
					t.Errorf("refused publish moved the pointer to %s", got)
				}
			})
		}
	})
}
