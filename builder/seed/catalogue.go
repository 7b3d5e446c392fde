package seed

import (
	"fmt"
	"html"
	"math"
	"math/rand/v2"
	"strings"
)

// course is one generated row of courses, with what the later tables need to know about it.
type course struct {
	id          int64
	name, typ   string
	description *string
	public      bool
	offered     bool    // false for the few retired courses that have no classes at all
	popularity  float64 // relative demand, drives classes and registrations
	cost        int32   // list price of its classes
}

type location struct {
	id                              int64
	name, city, state, zip, country string
}

type room struct {
	id, locationID int64
	name           string
}

// newRand returns the generator of one table: each table has its own stream, so that changing
// the number of registrations does not change the classes.
func newRand(seed int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), stream))
}

// percent reports true with probability p/100.
func percent(r *rand.Rand, p int) bool { return r.IntN(100) < p }

func pick[T any](r *rand.Rand, list []T) T { return list[r.IntN(len(list))] }

func genCourses(r *rand.Rand, n int) []course {
	out := make([]course, n)
	for i := range out {
		c := course{id: int64(i + 1), name: courseName(r), typ: courseType(r)}
		c.public = percent(r, 90)
		// A few courses are retired: in the catalogue but with no classes (upcoming_class null).
		c.offered = n < 10 || !percent(r, 3)
		// Log-normal demand: most courses are ordinary, a few are many times as popular.
		c.popularity = math.Exp(1.2 * r.NormFloat64())
		c.cost = pick(r, costs)
		if !percent(r, 5) {
			d := description(r, c)
			c.description = &d
		}
		out[i] = c
	}
	return out
}

func courseName(r *rand.Rand) string {
	switch p := r.IntN(100); {
	case p < 2:
		return pick(r, oddNames)
	case p < 35:
		return pick(r, levels) + " " + pick(r, subjects)
	case p < 70:
		return pick(r, subjects) + " " + pick(r, suffixes)
	default:
		return pick(r, levels) + " " + pick(r, subjects) + " " + pick(r, suffixes)
	}
}

func courseType(r *rand.Rand) string {
	p := r.IntN(100)
	for _, t := range courseTypes {
		if p < t.share {
			return t.name
		}
		p -= t.share
	}
	return courseTypes[0].name
}

// description writes the kind of HTML staff enter in a rich-text editor.
func description(r *rand.Rand, c course) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<p><strong>%s</strong>: %d hours of %s training, taught by working professionals.</p>",
		html.EscapeString(c.name), 4*(1+r.IntN(20)), strings.ToLower(c.typ))
	if percent(r, 70) {
		b.WriteString("<ul>")
		for _, k := range r.Perm(len(outcomes))[:2+r.IntN(3)] {
			fmt.Fprintf(&b, "<li>%s</li>", outcomes[k])
		}
		b.WriteString("</ul>")
	}
	if percent(r, 40) {
		b.WriteString("<p><em>Prerequisites:</em> none. Bring a photo ID on the first day.</p>")
	}
	return b.String()
}

// locationCount scales the number of sites with the catalogue: 3 to 60.
func locationCount(courses int) int {
	if courses == 0 {
		return 0
	}
	return min(60, max(3, courses/50))
}

func genLocations(r *rand.Rand, n int) []location {
	order := r.Perm(len(cities))
	quarters := []string{"", "North ", "East ", "South ", "West "}
	out := make([]location, n)
	for i := range out {
		c := cities[order[i%len(cities)]]
		quarter := quarters[(i/len(cities))%len(quarters)]
		out[i] = location{
			id:   int64(i + 1),
			name: c.city + " " + quarter + pick(r, siteKinds),
			city: c.city, state: c.state, zip: c.zip, country: c.country,
		}
	}
	return out
}

func genRooms(r *rand.Rand, locs []location) []room {
	var out []room
	for _, l := range locs {
		for j := range 2 + r.IntN(7) {
			kind := pick(r, roomKinds)
			name := fmt.Sprintf("%s %c", kind, 'A'+j)
			if kind == "Room" || kind == "Classroom" {
				name = fmt.Sprintf("%s %d", kind, 101+j)
			}
			out = append(out, room{id: int64(len(out) + 1), locationID: l.id, name: name})
		}
	}
	return out
}
