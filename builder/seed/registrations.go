package seed

import (
	"math/rand/v2"
	"time"
)

// registrations generates the rows of registrations one at a time, for pgx.CopyFromFunc, so
// that a million of them never sit in memory together.
type registrations struct {
	r        *rand.Rand
	classes  []class
	demand   *weights // per class; 0 once the class is full
	taken    []int32  // registrations so far per class
	capacity []int32  // seats per capped class, with the few overbooked seats; -1 uncapped
	today    time.Time
	n, next  int
	students int64
}

func newRegistrations(r *rand.Rand, n int, classes []class, today time.Time) *registrations {
	g := &registrations{
		r: r, classes: classes, today: today, n: n,
		demand:   newWeights(len(classes)),
		taken:    make([]int32, len(classes)),
		capacity: make([]int32, len(classes)),
		// About three registrations per person: regulars come back.
		students: int64(max(1, n/3)),
	}
	for i, c := range classes {
		g.capacity[i] = -1
		if c.seatLimit != nil {
			g.capacity[i] = *c.seatLimit
			// Real data has a few overbooked classes (open seats are then 0, never
			// negative: D6).
			if percent(r, 3) {
				g.capacity[i] += int32(1 + r.IntN(3))
			}
		}
		if g.capacity[i] != 0 {
			g.demand.set(i, weightOf(c.demand))
		}
	}
	return g
}

// row returns the next row (id, class_id, student_id, created_at, test_date), or nil after
// the last.
func (g *registrations) row() ([]any, error) {
	if g.next == g.n {
		return nil, nil
	}
	g.next++
	i := g.demand.pick(g.r)
	if i < 0 {
		// Every class is full: more registrations than seats were asked for.
		i = g.r.IntN(len(g.classes))
	}
	g.taken[i]++
	if g.taken[i] == g.capacity[i] {
		g.demand.set(i, 0)
	}
	c := g.classes[i]
	var student any
	if !percent(g.r, 4) {
		student = 1 + g.r.Int64N(g.students)
	}
	// Registered in the 120 days before the class started (or before today, if it has not).
	base := c.start
	if base.After(g.today) {
		base = g.today
	}
	created := base.Add(-time.Duration(1+g.r.IntN(120*24*3600)) * time.Second)
	return []any{int64(g.next), c.id, student, created, testDate(int64(g.next), c, student != nil, g.today)}, nil
}

// testDate is the date of the test attached to a registration (D32), or nil: a student's
// registration in a class that ended before today has one in about 60% of cases, 1 to 30
// days after the class ended. It is drawn from the registration id, not from the generator,
// so that every other column is what it was before test dates existed.
func testDate(id int64, c class, hasStudent bool, today time.Time) any {
	if !hasStudent || !c.end.Before(today) {
		return nil
	}
	h := uint64(id) * 0x9e3779b97f4a7c15 // Fibonacci hashing spreads consecutive ids
	h ^= h >> 31
	if h%100 >= 60 {
		return nil
	}
	return c.end.AddDate(0, 0, 1+int((h>>8)%30))
}
