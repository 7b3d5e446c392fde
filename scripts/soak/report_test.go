package main

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestRegressions(t *testing.T) {
	tests := []struct {
		name    string
		seen    []sighting
		want    int
		wantIDs []string
	}{
		{
			name:    "a swap seen in order",
			seen:    []sighting{{0, 1, "a", ""}, {2, 3, "b", ""}, {4, 5, "b", ""}},
			wantIDs: []string{"a", "b"},
		},
		{
			name:    "the older snapshot asked for after the newer one was received",
			seen:    []sighting{{0, 1, "a", ""}, {2, 3, "b", ""}, {4, 5, "a", ""}},
			want:    1,
			wantIDs: []string{"a", "b"},
		},
		{
			name: "the older snapshot asked for while the first answer naming the newer was on its way",
			// Sent at 2, before b was first received at 3: the edge may have answered it first.
			seen:    []sighting{{0, 1, "a", ""}, {1, 3, "b", ""}, {2, 6, "a", ""}},
			wantIDs: []string{"a", "b"},
		},
		{
			name:    "ids sort in build order, not in the order they were first seen",
			seen:    []sighting{{0, 1, "b", ""}, {2, 3, "a", ""}},
			want:    1,
			wantIDs: []string{"a", "b"},
		},
		{name: "nothing seen"},
	}
	for _, tt := range tests {
		got, ids := regressions(tt.seen)
		if got != tt.want {
			t.Errorf("regressions(%q) = %d, want %d", tt.name, got, tt.want)
		}
		if diff := cmp.Diff(tt.wantIDs, ids, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("regressions(%q) ids mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestRegressionsPerEdge: behind a load balancer each edge polls the store on its own, so
// one may still serve the snapshot another has replaced; only going back on one edge counts.
func TestRegressionsPerEdge(t *testing.T) {
	seen := []sighting{{0, 1, "a", "e1"}, {2, 3, "b", "e1"}, {4, 5, "a", "e2"}, {6, 7, "b", "e2"}, {8, 9, "a", "e2"}}
	got, ids := regressionsPerEdge(seen)
	if got != 1 || !slices.Equal(ids, []string{"a", "b"}) {
		t.Errorf("regressionsPerEdge = %d, %q; want 1 (e2 went back to a) and [a b]", got, ids)
	}
}

func TestSummarise(t *testing.T) {
	s := func(sec, kb int64) rssSample { return rssSample{at: time.Duration(sec) * time.Second, kb: kb} }
	got, err := summarise([]rssSample{s(0, 10), s(1, 50), s(2, 100), s(3, 130), s(4, 110)}, 2*time.Second)
	want := rssSummary{startKB: 100, endKB: 110, maxKB: 130, samples: 3, growth: 0.1}
	if err != nil || got != want {
		t.Errorf("summarise = %+v, %v; want %+v", got, err, want)
	}
	if _, err := summarise([]rssSample{s(0, 10), s(3, 10)}, 2*time.Second); err == nil {
		t.Errorf("summarise with one sample after the warm-up succeeded, want an error")
	}
}
