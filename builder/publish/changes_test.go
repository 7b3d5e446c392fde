package publish

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// TestPublishChanges publishes the base catalogue, then a change that replaces one document,
// adds one and removes one: the new snapshot serves the base with those three differences,
// only the two new bodies are stored, and the manifest records an incremental build over
// the first snapshot with what changed.
func TestPublishChanges(t *testing.T) {
	forEachStore(t, func(t *testing.T, r *recorder) {
		p := newPublisher(r, 10)
		first := mustPublish(t, p, base)
		r.reset()
		docs := docsOf(
			"/public/course/1", `{"id":1,"name":"Go","type":"Online","description":"<p>Go, again</p>"}`,
			"/public/course/2", `{"id":2,"name":"Rust","type":"Online","description":null}`,
			"/public/courses", `{"data":[{"id":1,"name":"Go"}]}`, // re-rendered, unchanged
		)
		m := meta(2, 1)
		m.Build = snapshot.Build{Trigger: snapshot.TriggerChange, Notifications: map[string]int{"courses": 2}}
		res, err := p.PublishChanges(context.Background(), first.Manifest, docs, []string{"/public/courses?type=Online", "/public/course/9"}, m, false)
		if err != nil {
			t.Fatalf("PublishChanges: %v", err)
		}
		want := maps.Clone(base)
		maps.Copy(want, docs)
		delete(want, "/public/courses?type=Online")
		assertServable(t, r, want)
		if res.ObjectsStored != 2 || r.objectPuts() != 2 {
			t.Errorf("objects stored = %d (%d puts), want the 2 new bodies", res.ObjectsStored, r.objectPuts())
		}
		wantBuild := &snapshot.Build{
			Trigger: snapshot.TriggerChange, Incremental: true, Base: first.SnapshotID,
			Notifications: map[string]int{"courses": 2},
			Rendered:      3, Changed: 2, Removed: 1,
			Routes: []string{"/public/course/1", "/public/course/2", "/public/courses?type=Online"},
		}
		cur, err := snapshot.ReadCurrent(context.Background(), r)
		if err != nil {
			t.Fatalf("ReadCurrent: %v", err)
		}
		if diff := cmp.Diff(wantBuild, cur.Build); diff != "" {
			t.Errorf("build record mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(snapshot.Counts{Courses: 2, Classes: 1, Documents: 3}, cur.Counts); diff != "" {
			t.Errorf("counts mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(cur, res.Manifest); diff != "" {
			t.Errorf("result's manifest mismatch (-stored +returned):\n%s", diff)
		}
		// Objects, then the delta, then the manifest, then the pointer.
		wantPuts := []string{"objects", "objects", snapshot.DeltaKey(res.SnapshotID), snapshot.ManifestKey(res.SnapshotID), snapshot.PointerKey}
		var puts []string
		for _, k := range r.puts {
			if strings.HasPrefix(k, "objects/") {
				k = "objects"
			}
			puts = append(puts, k)
		}
		if diff := cmp.Diff(wantPuts, puts); diff != "" {
			t.Errorf("Put order mismatch (-want +got):\n%s", diff)
		}
		// The pointer names the snapshot the delta is over; a full build's names none.
		if ptr, err := snapshot.ReadPointer(context.Background(), r); err != nil || ptr.Base != first.SnapshotID {
			t.Errorf("pointer = %+v, %v; want its base %s", ptr, err, first.SnapshotID)
		}
		// The delta over the first snapshot gives the stored manifest.
		d, err := snapshot.ReadDelta(context.Background(), r, res.SnapshotID)
		if err != nil {
			t.Fatalf("ReadDelta: %v", err)
		}
		if diff := cmp.Diff([]string{"/public/course/9", "/public/courses?type=Online"}, sorted(d.Removed)); diff != "" {
			t.Errorf("delta's removed routes mismatch (-want +got):\n%s", diff)
		}
		applied, err := d.Apply(first.Manifest)
		if err != nil {
			t.Fatalf("Apply: %v", err)
		}
		if diff := cmp.Diff(cur, applied); diff != "" {
			t.Errorf("delta applied to the first snapshot mismatch (-stored manifest +applied):\n%s", diff)
		}
		if _, err := d.Apply(cur); err == nil {
			t.Error("Apply over a snapshot that is not its base: no error")
		}
		mustPublish(t, p, base)
		if ptr, err := snapshot.ReadPointer(context.Background(), r); err != nil || ptr.Base != "" {
			t.Errorf("pointer after a full publication = %+v, %v; want no base", ptr, err)
		}
	})
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

// TestPublishChangesFailureLeavesCurrentSnapshot fails the publication of a change at each
// of its writes: the first snapshot stays current and whole.
func TestPublishChangesFailureLeavesCurrentSnapshot(t *testing.T) {
	docs := docsOf("/public/course/1", `{"id":1,"name":"Go 2","type":"Online","description":"<p>Go</p>"}`)
	// One new body: Put 1 is its object, 2 the delta, 3 the manifest, 4 the pointer.
	for _, failAt := range []int{1, 2, 3, 4} {
		forEachStore(t, func(t *testing.T, r *recorder) {
			p := newPublisher(r, 10)
			first := mustPublish(t, p, base)
			r.reset()
			r.onPut = func(n int, key string) error {
				if n == failAt {
					return errInjected
				}
				return nil
			}
			_, err := p.PublishChanges(context.Background(), first.Manifest, docs, nil, meta(1, 1), false)
			if !errors.Is(err, errInjected) {
				t.Fatalf("PublishChanges failing at put %d: error = %v, want the injected failure", failAt, err)
			}
			if got := currentID(t, r); got != first.SnapshotID {
				t.Errorf("current snapshot = %s, want the first one %s", got, first.SnapshotID)
			}
			assertServable(t, r, base)
		})
	}
}

// TestPublishChangesGuard: a change that withdraws most classes is refused like a full
// build that does, and nothing is written.
func TestPublishChangesGuard(t *testing.T) {
	forEachStore(t, func(t *testing.T, r *recorder) {
		p := newPublisher(r, 10)
		res, err := p.Publish(context.Background(), base, meta(1, 10), false)
		if err != nil {
			t.Fatal(err)
		}
		r.reset()
		_, err = p.PublishChanges(context.Background(), res.Manifest, nil, []string{"/public/course/1"}, meta(1, 2), false)
		if !errors.Is(err, ErrShrink) {
			t.Errorf("PublishChanges of a shrink: error = %v, want ErrShrink", err)
		}
		if len(r.puts) != 0 {
			t.Errorf("a refused change wrote %v", r.puts)
		}
		if _, err := p.PublishChanges(context.Background(), nil, nil, nil, meta(1, 1), false); err == nil {
			t.Error("PublishChanges without a current snapshot: no error")
		}
	})
}
