package seed

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWeightsPick draws many times from fixed weights and checks the shares and that an index
// of weight 0 is never drawn.
func TestWeightsPick(t *testing.T) {
	tests := []struct {
		name    string
		weights []int64
		want    []int // expected draws out of 10,000, within 3%
	}{
		{"one", []int64{5}, []int{10000}},
		{"even", []int64{1, 1}, []int{5000, 5000}},
		{"zeros are never drawn", []int64{0, 3, 0, 1, 0}, []int{0, 7500, 0, 2500, 0}},
		{"seven", []int64{1, 2, 3, 4, 0, 0, 10}, []int{500, 1000, 1500, 2000, 0, 0, 5000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWeights(len(tt.weights))
			for i, v := range tt.weights {
				w.set(i, v)
			}
			r := newRand(1, 1)
			got := make([]int, len(tt.weights))
			for range 10000 {
				got[w.pick(r)]++
			}
			near := cmp.Comparer(func(a, b int) bool { return a-b <= 300 && b-a <= 300 })
			if diff := cmp.Diff(tt.want, got, near); diff != "" {
				t.Errorf("pick(%v) mismatch (-want +got):\n%s", tt.weights, diff)
			}
		})
	}
}

func TestWeightsUpdate(t *testing.T) {
	w := newWeights(3)
	w.set(0, 4)
	w.set(2, 4)
	w.set(0, 0)
	r := newRand(1, 1)
	for range 100 {
		if got := w.pick(r); got != 2 {
			t.Fatalf("pick after setting index 0 to 0 = %d, want 2 (the only weight left)", got)
		}
	}
	w.set(2, 0)
	if got := w.pick(r); got != -1 {
		t.Errorf("pick with every weight 0 = %d, want -1", got)
	}
}
