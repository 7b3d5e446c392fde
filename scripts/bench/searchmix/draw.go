package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// draw returns one search. The weights say what a catalogue's search boxes and calendars
// send most: name fragments, the plain upcoming list paged, date filters, a course's classes.
func (d *data) draw(r *rand.Rand) search {
	day := func(within int) time.Time { return d.first.AddDate(0, 0, r.IntN(max(1, within))) }
	s := search{Page: 1}
	switch k := r.IntN(20); {
	case k < 4: // the upcoming list, paged
		s.Page = 1 + r.IntN(5)
	case k < 9: // a name fragment
		s.Search = d.fragment(r)
		s.Page = 1 + r.IntN(2)
	case k < 12: // starting on or after a date
		s.Start = day(d.upcomingDays / 2)
		s.Page = 1 + r.IntN(5)
	case k < 14: // running on a date
		s.Date = day(d.upcomingDays)
	case k < 16: // starting within a month
		s.Start = day(d.upcomingDays)
		s.End = s.Start.AddDate(0, 1, 0)
		s.Page = 1 + r.IntN(3)
	case k < 19: // one course's classes
		s.CourseID = d.courses[r.IntN(len(d.courses))].id
		s.Page = 1 + r.IntN(2)
	default: // a name fragment from a date
		s.Search = d.fragment(r)
		s.Start = day(d.upcomingDays / 2)
	}
	if r.IntN(10) == 0 {
		s.Limit = 50
	}
	return s
}

// fragment returns what someone types into a search box: mostly the start of a word of a
// course name, sometimes a piece from its middle, 3 to 6 letters, lower case.
func (d *data) fragment(r *rand.Rand) string {
	for range 100 {
		words := strings.FieldsFunc(d.courses[r.IntN(len(d.courses))].name, func(c rune) bool {
			return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z')
		})
		if len(words) == 0 {
			continue
		}
		w := strings.ToLower(words[r.IntN(len(words))])
		if len(w) < 3 {
			continue
		}
		n := min(len(w), 3+r.IntN(4))
		at := 0
		if r.IntN(10) < 3 {
			at = r.IntN(len(w) - n + 1)
		}
		return w[at : at+n]
	}
	return strings.ToLower(d.courses[0].name)
}

// drawLongTail returns n different searches of the long tail (the -mix longtail of the
// package comment), in the order drawn.
func (d *data) drawLongTail(r *rand.Rand, n int) ([]search, error) {
	seen := map[string]bool{}
	var cases []search
	for tries := 0; len(cases) < n; tries++ {
		if tries == 100*n {
			return nil, fmt.Errorf("drew only %d different searches of the %d asked for: is the database seeded?", len(cases), n)
		}
		s := d.drawOneOfLongTail(r)
		if p := s.path(""); !seen[p] {
			seen[p] = true
			cases = append(cases, s)
		}
	}
	return cases, nil
}

func (d *data) drawOneOfLongTail(r *rand.Rand) search {
	s := search{Page: 1 + r.IntN(5), Limit: []int{10, 25, 50}[r.IntN(3)]}
	if r.IntN(10) == 0 {
		s.CourseID = d.courses[r.IntN(len(d.courses))].id
	} else {
		s.Search = d.substring(r)
	}
	if r.IntN(2) == 0 {
		day := d.first.AddDate(0, 0, r.IntN(d.upcomingDays))
		switch r.IntN(3) {
		case 0:
			s.Start = day
		case 1:
			s.End = day
		default:
			s.Date = day
		}
	}
	return s
}

// substring returns 1 to 8 consecutive characters of a public course's name, lower case, as
// typed into a search box. It never starts or ends with a space: the edge trims the search
// (D11) and pgbench would not, so the two would search for different text.
func (d *data) substring(r *rand.Rand) string {
	for range 1000 {
		name := []rune(strings.ToLower(d.courses[r.IntN(len(d.courses))].name))
		n := min(len(name), 1+r.IntN(8))
		at := r.IntN(len(name) - n + 1)
		s := string(name[at : at+n])
		if s != "" && strings.TrimSpace(s) == s {
			return s
		}
	}
	return strings.TrimSpace(strings.ToLower(d.courses[0].name))
}
