package docstore

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIDIndex(t *testing.T) {
	tests := []struct {
		name      string
		entries   []idPos
		denseLen  int // the slice's length: which ids it holds
		sparseLen int
	}{
		{"empty", nil, 1, 0},
		{"dense", []idPos{{1, 5}, {2, 6}, {3, 7}, {7, 8}}, 8, 0},
		{"a large id goes to the map", []idPos{{1, 5}, {math.MaxInt64, 6}, {70, 7}}, 2, 2},
		// Two entries: ids below 2*2+64 = 68 are in the slice, 68 and above in the map.
		{"the bound", []idPos{{67, 1}, {68, 2}}, 68, 1},
	}
	for _, tt := range tests {
		x := newIDIndex(tt.entries)
		if len(x.dense) != tt.denseLen || len(x.sparse) != tt.sparseLen {
			t.Errorf("newIDIndex(%s): %d ids in the slice and %d in the map, want %d and %d",
				tt.name, len(x.dense), len(x.sparse), tt.denseLen, tt.sparseLen)
		}
		want := map[int64]docPos{}
		for _, e := range tt.entries {
			want[e.id] = e.pos
		}
		for _, id := range []int64{math.MinInt64, -1, 0, 1, 2, 4, 7, 8, 67, 68, 69, 70, math.MaxInt64 - 1, math.MaxInt64} {
			if got := x.get(id); got != want[id] {
				t.Errorf("newIDIndex(%s).get(%d) = %d, want %d", tt.name, id, got, want[id])
			}
		}
		got := map[int64]docPos{}
		x.each(func(id int64, p docPos) {
			if _, dup := got[id]; dup {
				t.Errorf("newIDIndex(%s).each: id %d twice", tt.name, id)
			}
			got[id] = p
		})
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("newIDIndex(%s).each mismatch (-want +got):\n%s", tt.name, diff)
		}
		if x.n != len(tt.entries) {
			t.Errorf("newIDIndex(%s).n = %d, want %d", tt.name, x.n, len(tt.entries))
		}
	}
}
