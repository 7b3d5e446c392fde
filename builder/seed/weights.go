package seed

import (
	"math"
	"math/rand/v2"
)

// weights picks an index with probability proportional to its weight, and lets a weight
// change as the data fills up (a class that becomes full stops drawing registrations). It is
// a Fenwick tree of integer weights: picks and updates take O(log n) and, unlike running sums
// of floats, stay exact however many updates there are.
type weights struct {
	tree  []int64 // 1-based Fenwick tree
	value []int64 // the weight of each index
	total int64
}

// weightScale turns a relative demand into an integer weight with enough resolution.
const weightScale = 1000

// weightOf returns the integer weight of a positive relative demand, at least 1.
func weightOf(demand float64) int64 {
	return 1 + int64(math.Round(demand*weightScale))
}

func newWeights(n int) *weights {
	return &weights{tree: make([]int64, n+1), value: make([]int64, n)}
}

// set changes the weight of index i.
func (w *weights) set(i int, v int64) {
	delta := v - w.value[i]
	w.value[i] = v
	w.total += delta
	for j := i + 1; j < len(w.tree); j += j & -j {
		w.tree[j] += delta
	}
}

// pick returns a random index drawn by weight, or -1 when every weight is 0.
func (w *weights) pick(r *rand.Rand) int {
	if w.total <= 0 {
		return -1
	}
	x := 1 + r.Int64N(w.total) // the x-th unit of weight, 1-based
	pos := 0
	for step := highBit(len(w.tree) - 1); step > 0; step >>= 1 {
		if next := pos + step; next < len(w.tree) && w.tree[next] < x {
			pos = next
			x -= w.tree[next]
		}
	}
	return pos // the 0-based index whose range of units holds x
}

func highBit(n int) int {
	b := 1
	for b*2 <= n {
		b *= 2
	}
	if n == 0 {
		return 0
	}
	return b
}
