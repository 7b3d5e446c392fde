package pace

import (
	"testing"
	"time"
)

// The waits cover the whole period, each quarter of it, and never reach its end: a
// quarter left out would be a phase of the poll the samples never see.
func TestNextCoversThePeriod(t *testing.T) {
	const period = time.Second
	p := New(period)
	var quarters [4]int
	for range 400 {
		d := p.Next()
		if d < 0 || d >= period {
			t.Fatalf("Next() = %v, want within [0, %v)", d, period)
		}
		quarters[d/(period/4)]++
	}
	for q, n := range quarters {
		// 100 expected in each; fewer than 50 would be a draw that favours some phases.
		if n < 50 {
			t.Errorf("quarter %d of the period drawn %d times in 400, want about 100 (all: %v)", q, n, quarters)
		}
	}
}

func TestNoPeriodNoWait(t *testing.T) {
	p := New(0)
	for range 10 {
		if d := p.Next(); d != 0 {
			t.Fatalf("Next() with no period = %v, want 0", d)
		}
	}
}

// Two runs draw the same waits.
func TestSameDrawsEveryRun(t *testing.T) {
	a, b := New(time.Second), New(time.Second)
	for i := range 20 {
		if x, y := a.Next(), b.Next(); x != y {
			t.Fatalf("draw %d: %v and %v, want the same", i, x, y)
		}
	}
}
