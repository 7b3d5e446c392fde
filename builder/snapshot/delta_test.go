package snapshot

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDeltaApply(t *testing.T) {
	base := &Manifest{ID: "a", Documents: map[string]Entry{
		"/x": {Hash: "1", Size: 1}, "/y": {Hash: "2", Size: 2}, "/z": {Hash: "3", Size: 3},
	}}
	next := &Manifest{ID: "b", Today: "2027-03-01", Counts: Counts{Documents: 3}, Documents: map[string]Entry{
		"/x": {Hash: "1", Size: 1}, "/y": {Hash: "9", Size: 9}, "/w": {Hash: "4", Size: 4},
	}}
	d := NewDelta(next, "a", []string{"/y", "/w", "/z", "/x"})
	if diff := cmp.Diff([]string{"/z"}, d.Removed); diff != "" {
		t.Errorf("Removed mismatch (-want +got):\n%s", diff)
	}
	got, err := d.Apply(base)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if diff := cmp.Diff(next, got); diff != "" {
		t.Errorf("Apply mismatch (-want +got):\n%s", diff)
	}
	if _, ok := base.Documents["/w"]; ok || base.Documents["/y"].Hash != "2" {
		t.Errorf("Apply modified its base: %v", base.Documents)
	}
	d.Counts.Documents = 4
	if _, err := d.Apply(base); err == nil {
		t.Error("Apply of a delta whose count does not match: no error")
	}
}
