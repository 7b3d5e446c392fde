package seed

import (
	"math"
	"math/rand/v2"
	"time"
)

// class is one generated row of classes, with what the registrations need to know about it.
type class struct {
	id, courseID int64
	roomID       *int64
	start, end   time.Time
	schedule     *string
	cost         int32
	seatLimit    *int32
	downPayment  *int32
	public       bool
	demand       float64 // relative chance that a registration lands in this class
}

// genClasses spreads n classes over the offered courses: each gets one first (while there
// are classes to give), the rest go to courses in proportion to their popularity.
func genClasses(r *rand.Rand, n int, courses []course, rooms []room, today time.Time) []class {
	var offered []int
	for i, c := range courses {
		if c.offered {
			offered = append(offered, i)
		}
	}
	// More popular courses run more classes, though less than in proportion.
	w := newWeights(len(offered))
	for k, i := range offered {
		w.set(k, weightOf(math.Sqrt(courses[i].popularity)))
	}
	first := r.Perm(len(offered))
	out := make([]class, n)
	for i := range out {
		k := 0
		if i < len(first) {
			k = first[i]
		} else {
			k = w.pick(r)
		}
		out[i] = genClass(r, int64(i+1), courses[offered[k]], rooms, today)
	}
	return out
}

func genClass(r *rand.Rand, id int64, c course, rooms []room, today time.Time) class {
	cl := class{id: id, courseID: c.id, public: percent(r, 90)}
	// Start dates from 120 days ago to a year ahead of today.
	cl.start = today.AddDate(0, 0, r.IntN(486)-120)
	cl.end = cl.start.AddDate(0, 0, duration(r, c.typ))
	withRoom := 88
	if c.typ == "Online" {
		withRoom = 8
	}
	if len(rooms) > 0 && percent(r, withRoom) {
		id := pick(r, rooms).id
		cl.roomID = &id
	}
	if percent(r, 65) {
		s := pick(r, schedules)
		if c.typ == "Online" && percent(r, 50) {
			s = "Self-paced"
		}
		cl.schedule = &s
	}
	cl.cost = classCost(r, c.cost)
	if percent(r, 70) {
		limit := pick(r, seatLimits)
		cl.seatLimit = &limit
	}
	if cl.cost > 0 && percent(r, 35) {
		// 10% to 50% of the price, in cents (cost × percent), rounded down to $5, at least $5.
		cents := int32(max(500, int64(cl.cost)*int64(10+r.IntN(41))/500*500))
		cl.downPayment = &cents
	}
	// Far-off classes have fewer registrations yet.
	cl.demand = c.popularity * math.Exp(0.5*r.NormFloat64())
	switch days := cl.start.Sub(today).Hours() / 24; {
	case days > 180:
		cl.demand *= 0.3
	case days > 60:
		cl.demand *= 0.7
	}
	return cl
}

// duration returns the number of days from start to end date for a class of course type typ.
func duration(r *rand.Rand, typ string) int {
	switch p := r.IntN(100); {
	case typ == "Online" && p < 40:
		return 90 + r.IntN(276) // self-paced, open for months
	case typ == "Online" || typ == "Blended":
		return 7 + r.IntN(84)
	case p < 45:
		return 0 // a one-day workshop
	case p < 80:
		return 1 + r.IntN(5)
	default:
		return 14 + r.IntN(71)
	}
}

func classCost(r *rand.Rand, list int32) int32 {
	switch p := r.IntN(100); {
	case p < 2:
		return 0 // a free information session
	case p < 12:
		return list * 9 / 10 // early-bird price
	case p < 20:
		return list + list/5 // premium section
	}
	return list
}
