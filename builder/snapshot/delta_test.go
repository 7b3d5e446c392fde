package snapshot

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDeltaApply(t *testing.T) {
	lists := map[string]Entry{}
	for _, r := range RequiredRoutes() {
		lists[r] = Entry{Hash: "0", Size: 1}
	}
	with := func(docs map[string]Entry) map[string]Entry {
		for r, e := range lists {
			docs[r] = e
		}
		return docs
	}
	base := &Manifest{ID: "a", Header: Header{Counts: Counts{Courses: 1, Classes: 2, Documents: 11}}, Documents: with(map[string]Entry{
		"/public/course/1": {Hash: "1", Size: 1}, "/public/class/1": {Hash: "2", Size: 2}, "/public/class/2": {Hash: "3", Size: 3},
	})}
	next := &Manifest{ID: "b", Header: Header{Today: "2027-03-01", Counts: Counts{Courses: 1, Classes: 2, Documents: 11}}, Documents: with(map[string]Entry{
		"/public/course/1": {Hash: "1", Size: 1}, "/public/class/1": {Hash: "9", Size: 9}, "/public/class/3": {Hash: "4", Size: 4},
	})}
	d := NewDelta(next, "a", []string{"/public/class/1", "/public/class/3", "/public/class/2", "/public/course/1"})
	if diff := cmp.Diff([]string{"/public/class/2"}, d.Removed); diff != "" {
		t.Errorf("Removed mismatch (-want +got):\n%s", diff)
	}
	got, err := d.Apply(base)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if diff := cmp.Diff(next, got); diff != "" {
		t.Errorf("Apply mismatch (-want +got):\n%s", diff)
	}
	if _, ok := base.Documents["/public/class/3"]; ok || base.Documents["/public/class/1"].Hash != "2" {
		t.Errorf("Apply modified its base: %v", base.Documents)
	}
	d.Counts.Documents = 12
	if _, err := d.Apply(base); err == nil {
		t.Error("Apply of a delta whose count does not match: no error")
	}
}
