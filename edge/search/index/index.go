// Package index is the class search's copy in memory of what searches match on: the public
// courses (id, name as the database lowers it, Online or not) and their public classes (id,
// start and end dates), read from the replica at one version of that data
// (catalogue_search_version, templates/catalogue.sql).
//
// A search finds its page's class ids and its exact total here, in tens of microseconds,
// instead of counting every matching class in the database (milliseconds to tens of
// milliseconds for a short name fragment at 100,000 classes), and then reads only the
// page's classes from the replica, seats included. That query also reads the version, and
// the index's answer stands only if the two agree: then the index holds exactly the data the
// page was read from, and the total is exact for it. Otherwise the search runs in SQL alone
// and the index is reloaded (Keeper).
package index

import (
	"strings"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Index is one version of the search's data. It is immutable once loaded.
type Index struct {
	version int64
	// fold lowers an ASCII letter as the database's lower() does under the names'
	// collation; folds is false when the database could not tell (not UTF-8) or lowers
	// some letter otherwise than ASCII does: then name searches are left to the database.
	fold  [128]byte
	folds bool
	// courses, by id; each holds a range of the class arrays below.
	courses []course
	// The public classes of public courses, by course (in courses' order), and within a
	// course in (start, id) order (D12). Dates are days since 1970-01-01.
	ids          []int64
	starts, ends []int32
	// matches keeps, for the searches asked for lately, which courses their text matches:
	// a search box sends the same few letters with many dates and pages, and matching them
	// against every course's name took a tenth of the edge's CPU for a search.
	matches *lru.Cache[string, []uint64]
}

// matchesKept bounds Index.matches: a bit per course, 250 bytes an entry at 2,000 courses.
const matchesKept = 4096

type course struct {
	id     int64
	name   string // lower(name), as the database lowers it
	title  string // the name as it is
	typ    string
	online bool
	lo, hi int32 // its classes: ids[lo:hi]
}

// Version is the catalogue_search_version the index was read at.
func (ix *Index) Version() int64 { return ix.version }

// Query is one class search (spec 4.3, 4.4; D4, D11).
type Query struct {
	Search           string    // the trimmed course-name substring (D11); "" is no filter
	CourseID         int64     // the per-course route's course; 0 is every course
	Today            time.Time // "today" (D1), midnight UTC
	Start, End, Date time.Time // filters, midnight UTC; the zero time is no filter
	Limit, Offset    int64     // Limit >= 1, Offset >= 0
}

// Class is a class of a page, as the index holds it.
type Class struct {
	ID, CourseID int64
	Course, Type string    // the course's name and type
	Start, End   time.Time // midnight UTC; the zero time for a date at infinity
	Infinite     bool      // a date is at infinity
}

// Page appends to buf the classes of q's page, in page order (D12), and returns them with
// the number of matches across all pages. ok is false when the index cannot match q.Search
// exactly as the database's ILIKE would (a character other than ASCII, or a database that
// lowers ASCII letters its own way): the caller then asks the database.
func (ix *Index) Page(q Query, buf []Class) (page []Class, total int64, ok bool) {
	pattern := ""
	if q.Search != "" {
		if pattern, ok = ix.lower(q.Search); !ok {
			return buf, 0, false
		}
	}
	w := newWindow(q)
	if w.empty() {
		return buf, 0, true
	}
	m := getMerger()
	defer putMerger(m)
	var matched []uint64 // nil: every course
	if pattern != "" {
		matched = ix.matching(pattern)
	}
	first, last := ix.courseRange(q.CourseID)
	for i := first; i < last; i++ {
		if matched != nil && matched[i/64]&(1<<(i%64)) == 0 {
			continue
		}
		c := &ix.courses[i]
		lo, hi := ix.segment(c, w)
		if n := ix.count(lo, hi, w); n > 0 {
			total += n
			m.add(lo, hi, int32(i))
		}
	}
	if q.Offset >= total {
		return buf, total, true
	}
	return m.page(ix, w, q.Offset, q.Limit, buf), total, true
}

// matching returns the courses whose lowered name holds pattern, a bit for each (by position
// in courses).
func (ix *Index) matching(pattern string) []uint64 {
	if bits, ok := ix.matches.Get(pattern); ok {
		return bits
	}
	bits := make([]uint64, (len(ix.courses)+63)/64)
	for i := range ix.courses {
		if strings.Contains(ix.courses[i].name, pattern) {
			bits[i/64] |= 1 << (i % 64)
		}
	}
	ix.matches.Add(pattern, bits)
	return bits
}

// courseRange returns the positions [first, last) of the courses that a search of course id
// (0: every course) looks at.
func (ix *Index) courseRange(id int64) (first, last int) {
	if id == 0 {
		return 0, len(ix.courses)
	}
	if i, ok := ix.courseIndex(id); ok {
		return i, i + 1
	}
	return 0, 0
}

// courseIndex returns the position of course id in ix.courses.
func (ix *Index) courseIndex(id int64) (int, bool) {
	lo, hi := 0, len(ix.courses)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if ix.courses[mid].id < id {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, lo < len(ix.courses) && ix.courses[lo].id == id
}

// lower returns s lowered as the database's lower() lowers it, or false when the index
// cannot tell: s holds a byte that is not ASCII, or the database lowers ASCII letters its
// own way (folds).
func (ix *Index) lower(s string) (string, bool) {
	b := make([]byte, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || !ix.folds && ('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return "", false
		}
		b[i] = ix.fold[c]
	}
	return string(b), true
}

// window is a search's date bounds in days since 1970-01-01: a class matches when its
// start is in [from, to] (from is at least today unless the course is Online, D4) and,
// with a date filter, its end is on or after the date.
type window struct {
	today, from, to int32
	date            int32
	hasDate         bool
}

const (
	minDay int32 = -1 << 31
	maxDay int32 = 1<<31 - 1
)

func newWindow(q Query) window {
	w := window{today: day(q.Today), from: minDay, to: maxDay}
	if !q.Start.IsZero() {
		w.from = day(q.Start)
	}
	if !q.End.IsZero() {
		w.to = day(q.End)
	}
	if !q.Date.IsZero() {
		w.date, w.hasDate = day(q.Date), true
		w.to = min(w.to, w.date)
	}
	return w
}

func (w window) empty() bool { return w.from > w.to }

// day is the number of days from 1970-01-01 to t, a midnight UTC.
func day(t time.Time) int32 { return int32(t.Unix() / 86400) }

// class returns the class at position pos of the class arrays, of course c.
func (ix *Index) class(pos int32, c *course) Class {
	start, end := ix.starts[pos], ix.ends[pos]
	cl := Class{ID: ix.ids[pos], CourseID: c.id, Course: c.title, Type: c.typ,
		Infinite: start == minDay || start == maxDay || end == minDay || end == maxDay}
	if !cl.Infinite {
		cl.Start, cl.End = time.Unix(int64(start)*86400, 0).UTC(), time.Unix(int64(end)*86400, 0).UTC()
	}
	return cl
}

// segment returns the range of c's classes whose start is in the window (for c).
func (ix *Index) segment(c *course, w window) (lo, hi int32) {
	from := w.from
	if !c.online {
		from = max(from, w.today) // D4: past classes only of Online courses
	}
	starts := ix.starts[c.lo:c.hi]
	lo = c.lo + firstFrom(starts, from)
	if w.to == maxDay {
		return lo, c.hi
	}
	hi = c.lo + firstFrom(starts, w.to+1)
	return lo, max(lo, hi) // today may be past w.to
}

// firstFrom returns the position of the first element of the ascending s that is at least
// v, len(s) if none. (sort.Search would call a function at each step: this runs once per
// course of a search, two thousand times for a short name.)
func firstFrom(s []int32, v int32) int32 {
	lo, hi := 0, len(s)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s[mid] < v {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return int32(lo)
}

// count returns the number of classes in [lo, hi) that match w: all of them, unless a date
// filter also asks that they end on or after the date.
func (ix *Index) count(lo, hi int32, w window) int64 {
	if !w.hasDate {
		return int64(hi - lo)
	}
	var n int64
	for _, e := range ix.ends[lo:hi] {
		if e >= w.date {
			n++
		}
	}
	return n
}
