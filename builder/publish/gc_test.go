package publish

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/snapshot"
)

const shared = `{"data":[{"id":1,"name":"Go"}]}`

// version returns a catalogue whose course document is "v<n>" and whose list never changes.
func version(n int) map[string][]byte {
	return docsOf("/public/courses", shared, "/public/course/1", fmt.Sprintf(`{"v":%d}`, n))
}

func manifestKeys(ids ...string) []string {
	var keys []string
	for _, id := range ids {
		keys = append(keys, snapshot.ManifestKey(id))
	}
	return keys
}

func TestCollectKeepsNewestSnapshotsAndTheirObjects(t *testing.T) {
	forEachStore(t, func(t *testing.T, r *recorder) {
		p := newPublisher(r, 2)
		var ids []string
		for v := 1; v <= 4; v++ {
			ids = append(ids, mustPublish(t, p, version(v)).SnapshotID)
		}
		if diff := cmp.Diff(manifestKeys(ids[2], ids[3]), listKeys(t, r, snapshot.ManifestPrefix)); diff != "" {
			t.Errorf("manifests after 4 publications with keep 2 mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(objectKeys(shared, `{"v":3}`, `{"v":4}`), listKeys(t, r, "objects/")); diff != "" {
			t.Errorf("objects after 4 publications with keep 2 mismatch (-want +got):\n%s", diff)
		}

		// Roll back to v3, then publish v5: v4 and v5 are the newest two, v3 goes.
		got, err := p.Rollback(context.Background(), "")
		if err != nil || got != ids[2] {
			t.Fatalf("Rollback(\"\") = %s, %v; want %s", got, err, ids[2])
		}
		assertServable(t, r, version(3))
		v5 := mustPublish(t, p, version(5)).SnapshotID
		if diff := cmp.Diff(manifestKeys(ids[3], v5), listKeys(t, r, snapshot.ManifestPrefix)); diff != "" {
			t.Errorf("manifests after the rollback and a publication mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(objectKeys(shared, `{"v":4}`, `{"v":5}`), listKeys(t, r, "objects/")); diff != "" {
			t.Errorf("objects after the rollback and a publication mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestPartition(t *testing.T) {
	ids := []string{"a", "b", "c", "d", "e"}
	tests := []struct {
		keep                int
		current             string
		wantKept, wantDrops []string
	}{
		{keep: 2, current: "e", wantKept: []string{"e", "d"}, wantDrops: []string{"c", "b", "a"}},
		{keep: 2, current: "b", wantKept: []string{"e", "d", "b"}, wantDrops: []string{"c", "a"}},
		{keep: 10, current: "e", wantKept: []string{"e", "d", "c", "b", "a"}},
		{keep: 1, current: "", wantKept: []string{"e"}, wantDrops: []string{"d", "c", "b", "a"}},
	}
	for _, tt := range tests {
		kept, dropped := partition(ids, tt.keep, tt.current)
		if diff := cmp.Diff(tt.wantKept, kept); diff != "" {
			t.Errorf("partition(keep %d, current %q) kept mismatch (-want +got):\n%s", tt.keep, tt.current, diff)
		}
		if diff := cmp.Diff(tt.wantDrops, dropped); diff != "" {
			t.Errorf("partition(keep %d, current %q) dropped mismatch (-want +got):\n%s", tt.keep, tt.current, diff)
		}
	}
}

func TestStatus(t *testing.T) {
	forEachStore(t, func(t *testing.T, r *recorder) {
		p := newPublisher(r, 3)
		st, err := p.Status(context.Background())
		if err != nil || st.Current != nil || len(st.Kept) != 0 {
			t.Fatalf("Status of an empty store = %+v, %v; want nothing", st, err)
		}
		var ids []string
		for v := 1; v <= 4; v++ {
			res, err := p.Publish(context.Background(), version(v), meta(v, 10*v), false)
			if err != nil {
				t.Fatalf("Publish: %v", err)
			}
			ids = append(ids, res.SnapshotID)
		}
		st, err = p.Status(context.Background())
		if err != nil {
			t.Fatalf("Status: %v", err)
		}
		type row struct {
			ID      string
			Counts  snapshot.Counts
			Current bool
		}
		want := []row{
			{ids[3], snapshot.Counts{Courses: 4, Classes: 40, Documents: 2}, true},
			{ids[2], snapshot.Counts{Courses: 3, Classes: 30, Documents: 2}, false},
			{ids[1], snapshot.Counts{Courses: 2, Classes: 20, Documents: 2}, false},
		}
		var got []row
		for _, s := range st.Kept {
			got = append(got, row{s.ID, s.Counts, s.Current})
			if s.Today != "2027-03-01" || s.BuiltAt.IsZero() {
				t.Errorf("snapshot %s: today %q, built at %v; want 2027-03-01 and a time", s.ID, s.Today, s.BuiltAt)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Status kept mismatch (-want +got):\n%s", diff)
		}
		if st.Current == nil || st.Current.ID != ids[3] {
			t.Errorf("Status current = %+v, want %s", st.Current, ids[3])
		}
	})
}

func TestRollback(t *testing.T) {
	forEachStore(t, func(t *testing.T, r *recorder) {
		ctx := context.Background()
		p := newPublisher(r, 3)
		v1 := mustPublish(t, p, version(1)).SnapshotID
		if _, err := p.Rollback(ctx, ""); !errors.Is(err, ErrNoEarlier) {
			t.Errorf("Rollback with one snapshot = %v, want ErrNoEarlier", err)
		}
		v2 := mustPublish(t, p, version(2)).SnapshotID
		v3 := mustPublish(t, p, version(3)).SnapshotID

		if _, err := p.Rollback(ctx, "20000101T000000.000Z-deadbeef"); err == nil || !strings.Contains(err.Error(), "is not kept") {
			t.Errorf("Rollback to an unknown snapshot = %v, want an error saying it is not kept", err)
		}
		// Rolling back to a snapshot whose object disappeared would break the edge: refused.
		if err := r.Delete(ctx, objectKeys(`{"v":1}`)...); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Rollback(ctx, v1); err == nil || !strings.Contains(err.Error(), "missing") {
			t.Errorf("Rollback to a snapshot with a missing object = %v, want an error", err)
		}
		if got := currentID(t, r); got != v3 {
			t.Errorf("after refused rollback current = %s, want %s", got, v3)
		}
		got, err := p.Rollback(ctx, "")
		if err != nil || got != v2 {
			t.Fatalf("Rollback(\"\") = %s, %v; want %s", got, err, v2)
		}
		assertServable(t, r, version(2))
		got, err = p.Rollback(ctx, v3)
		if err != nil || got != v3 {
			t.Fatalf("Rollback(%s) = %s, %v; want it current again", v3, got, err)
		}
		assertServable(t, r, version(3))
	})
}

// TestCollectRulesOutObjectsOfOlderKeptSnapshots covers an object that neither the new nor
// the previous snapshot uses but an older kept one does: it must stay.
func TestCollectRulesOutObjectsOfOlderKeptSnapshots(t *testing.T) {
	forEachStore(t, func(t *testing.T, r *recorder) {
		p := newPublisher(r, 3)
		for _, v := range []int{1, 1, 2, 3} {
			mustPublish(t, p, version(v))
		}
		// Kept: v3, v2 and the second v1; the first v1 is dropped, but its object is used.
		if diff := cmp.Diff(objectKeys(shared, `{"v":1}`, `{"v":2}`, `{"v":3}`), listKeys(t, r, "objects/")); diff != "" {
			t.Errorf("objects mismatch (-want +got):\n%s", diff)
		}
		mustPublish(t, p, version(4))
		// Kept: v4, v3, v2: nothing uses v1 any more.
		if diff := cmp.Diff(objectKeys(shared, `{"v":2}`, `{"v":3}`, `{"v":4}`), listKeys(t, r, "objects/")); diff != "" {
			t.Errorf("objects after one more publication mismatch (-want +got):\n%s", diff)
		}
	})
}
