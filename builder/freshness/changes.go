package freshness

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// Channel is the channel the triggers notify and builder serve listens on.
const Channel = "catalogue_changes"

// MaxIDs is how many ids a Changes gathers before it gives up and says "everything": past it a
// full build reads less than re-reading every named row one by one would.
const MaxIDs = 5000

// Changes is what a series of notifications says changed: the notifications that the
// triggers of templates/notify.sql send on the primary after every change to the
// catalogue's tables, gathered into what the next build has to read again. A notification
// it cannot read, or more than MaxIDs ids, makes it say "everything", which a full build
// answers: being unsure costs time, never freshness. The zero Changes is empty and ready.
type Changes struct {
	all          bool
	courses      ids // course rows changed
	classes      ids // class rows changed
	regClasses   ids // classes whose registrations changed
	classCourses ids // courses of changed classes, old and new
	rooms        ids
	locations    ids
	tables       map[string]int // notifications per table
}

type ids map[int64]struct{}

// payload is the JSON a trigger sends.
type payload struct {
	Table     string  `json:"table"`
	All       bool    `json:"all"`
	IDs       []int64 `json:"ids"`
	CourseIDs []int64 `json:"course_ids"`
	ClassIDs  []int64 `json:"class_ids"`
}

// Add adds one notification's payload. A payload it cannot read makes it say
// "everything" and is returned as an error for the caller to log.
func (s *Changes) Add(raw string) error {
	var p payload
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		s.setAll()
		return fmt.Errorf("read the notification %q: %w; rebuilding everything", truncate(raw), err)
	}
	s.count(p.Table)
	if p.All {
		s.setAll()
		return nil
	}
	switch p.Table {
	case "courses":
		s.add(&s.courses, p.IDs)
	case "classes":
		s.add(&s.classes, p.IDs)
		s.add(&s.classCourses, p.CourseIDs)
	case "registrations":
		s.add(&s.regClasses, p.ClassIDs)
	case "rooms":
		s.add(&s.rooms, p.IDs)
	case "locations":
		s.add(&s.locations, p.IDs)
	default:
		s.setAll()
		return fmt.Errorf("the notification %q names no table of the catalogue; rebuilding everything", truncate(raw))
	}
	if s.size() > MaxIDs {
		s.setAll()
	}
	return nil
}

// Merge adds to s what o says changed, as if o's notifications had been added to s.
func (s *Changes) Merge(o *Changes) {
	for table, n := range o.tables {
		s.countN(table, n)
	}
	if o.all {
		s.setAll()
		return
	}
	s.add(&s.courses, o.Courses())
	s.add(&s.classes, o.Classes())
	s.add(&s.regClasses, o.RegClasses())
	s.add(&s.classCourses, o.ClassCourses())
	s.add(&s.rooms, o.Rooms())
	s.add(&s.locations, o.Locations())
	if s.size() > MaxIDs {
		s.setAll()
	}
}

// All reports whether c says "everything changed".
func (s *Changes) All() bool { return s.all }

// Empty reports whether no notification was added.
func (s *Changes) Empty() bool { return len(s.tables) == 0 && !s.all }

// Courses returns the courses whose row changed, sorted; nil when All.
func (s *Changes) Courses() []int64 { return s.courses.sorted() }

// Classes returns the classes whose row changed, sorted.
func (s *Changes) Classes() []int64 { return s.classes.sorted() }

// RegClasses returns the classes whose registrations changed, sorted.
func (s *Changes) RegClasses() []int64 { return s.regClasses.sorted() }

// ClassCourses returns the courses the changed classes belong or belonged to, sorted.
func (s *Changes) ClassCourses() []int64 { return s.classCourses.sorted() }

// Rooms returns the rooms whose row changed, sorted.
func (s *Changes) Rooms() []int64 { return s.rooms.sorted() }

// Locations returns the locations whose row changed, sorted.
func (s *Changes) Locations() []int64 { return s.locations.sorted() }

// Notifications returns how many notifications each table sent.
func (s *Changes) Notifications() map[string]int { return maps.Clone(s.tables) }

func (s *Changes) setAll() {
	s.all = true
	s.courses, s.classes, s.regClasses, s.classCourses, s.rooms, s.locations = nil, nil, nil, nil, nil, nil
}

func (s *Changes) add(to *ids, list []int64) {
	if s.all || len(list) == 0 {
		return
	}
	if *to == nil {
		*to = ids{}
	}
	for _, id := range list {
		(*to)[id] = struct{}{}
	}
}

func (s *Changes) count(table string) { s.countN(table, 1) }

func (s *Changes) countN(table string, n int) {
	if s.tables == nil {
		s.tables = map[string]int{}
	}
	s.tables[table] += n
}

func (s *Changes) size() int {
	return len(s.courses) + len(s.classes) + len(s.regClasses) + len(s.classCourses) + len(s.rooms) + len(s.locations)
}

func (i ids) sorted() []int64 {
	if len(i) == 0 {
		return nil
	}
	l := slices.Collect(maps.Keys(i))
	slices.Sort(l)
	return l
}

// truncate shortens a payload for an error message.
func truncate(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
