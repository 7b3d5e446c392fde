package catalogue

import (
	"fmt"
	"maps"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// State is what rendering only the documents a change affects needs to know of the rest of
// the catalogue: every public course with its upcoming class and its popularity, from which
// the course lists and popular are rendered whole. It is small (three entries per course,
// none per class), so builder serve keeps it between builds. A State is never modified: a
// partial render returns a new one.
type State struct {
	today    time.Time
	courses  map[int64]*Course
	upcoming map[int64]*Class // course id -> its upcoming class (D3)
	scores   map[int64]int64  // course id -> registrations of all time (D17)
}

// Today is the date the state was rendered for; a partial render must be for the same date.
func (s *State) Today() time.Time { return s.today }

// Courses is the number of public courses.
func (s *State) Courses() int { return len(s.courses) }

// state copies what c knows of each course out of the build's data, so that keeping the
// State does not keep the 100,000 classes of the build alive.
func (c *catalogue) state() *State {
	s := &State{
		today:    c.today,
		courses:  make(map[int64]*Course, len(c.byID)),
		upcoming: make(map[int64]*Class, len(c.upcoming)),
		scores:   maps.Clone(c.scores),
	}
	for id, co := range c.byID {
		cp := *co
		s.courses[id] = &cp
	}
	for id, cl := range c.upcoming {
		cp := *cl
		s.upcoming[id] = &cp
	}
	return s
}

// Affected is what a freshness.Changes affects, read in one consistent transaction
// (ReadChanges): the rows, not their names, that a partial render needs.
type Affected struct {
	// CourseIDs are the courses whose document or upcoming class the change may affect;
	// Courses are the public ones among them, and Upcoming their upcoming classes (those
	// that have one). ScoreCourseIDs, among CourseIDs, are those whose popularity it may
	// affect, and Scores the popularity of the public ones among them: every other public
	// course keeps the popularity the state has.
	CourseIDs      []int64
	Courses        []Course
	Upcoming       []Class
	ScoreCourseIDs []int64
	Scores         []Score
	// ClassIDs are the classes whose document the change may affect; Classes are those of
	// them that are public classes of public courses.
	ClassIDs []int64
	Classes  []Class
}

// Partial is the outcome of a partial render: the documents, not the rows, of what
// changed.
type Partial struct {
	// Docs are the re-rendered documents: the course lists, popular, and the course and
	// class documents of the affected courses and classes that exist.
	Docs map[string][]byte
	// Removed are the routes of the affected courses and classes that have no document now
	// (withdrawn or deleted); the caller drops those of them the current snapshot has.
	Removed []string
	// State is the state after the change, for the next partial render.
	State *State
}

// RenderChanges renders the documents d affects over s, for the same today as s (a new day
// moves every upcoming class and can_register: render everything then). The documents it
// returns are byte for byte those Render would give for the whole catalogue as d sees it,
// provided every change since s was built is in d.
func (s *State) RenderChanges(d *Affected) (*Partial, error) {
	next, err := s.apply(d)
	if err != nil {
		return nil, err
	}
	c := next.catalogue(len(d.CourseIDs) + len(d.ClassIDs))
	if err := c.indexAffectedClasses(d.Classes); err != nil {
		return nil, err
	}
	p := &Partial{State: next}
	for _, step := range []func() error{c.renderCourseLists, c.renderPopular, c.renderClasses} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	for _, id := range d.CourseIDs {
		co := next.courses[id]
		if co == nil {
			p.Removed = append(p.Removed, snapshot.CourseRoute(id))
			continue
		}
		if err := c.add(snapshot.CourseRoute(id), newCourseDoc(co)); err != nil {
			return nil, err
		}
	}
	rendered := make(map[int64]bool, len(d.Classes))
	for _, cl := range d.Classes {
		rendered[cl.ID] = true
	}
	for _, id := range d.ClassIDs {
		if !rendered[id] {
			p.Removed = append(p.Removed, snapshot.ClassRoute(id))
		}
	}
	p.Docs = c.docs
	return p, nil
}

// apply returns s with the courses of d replaced by what d read of them.
func (s *State) apply(d *Affected) (*State, error) {
	next := &State{
		today:    s.today,
		courses:  maps.Clone(s.courses),
		upcoming: maps.Clone(s.upcoming),
		scores:   maps.Clone(s.scores),
	}
	for _, id := range d.CourseIDs {
		delete(next.courses, id)
		delete(next.upcoming, id)
	}
	for _, id := range d.ScoreCourseIDs {
		delete(next.scores, id)
	}
	for i := range d.Courses {
		co := d.Courses[i]
		next.courses[co.ID] = &co
	}
	for _, id := range d.CourseIDs {
		if next.courses[id] == nil {
			delete(next.scores, id) // not public: no score, as a full render has none
		}
	}
	for i := range d.Upcoming {
		cl := d.Upcoming[i]
		if next.courses[cl.CourseID] == nil {
			return nil, fmt.Errorf("index upcoming classes: class %d belongs to course %d, which is not a public course", cl.ID, cl.CourseID)
		}
		next.upcoming[cl.CourseID] = &cl
	}
	for _, sc := range d.Scores {
		if next.courses[sc.CourseID] == nil {
			return nil, fmt.Errorf("index scores: course %d is not a public course", sc.CourseID)
		}
		next.scores[sc.CourseID] = sc.Registrations
	}
	return next, nil
}

// catalogue returns s indexed for rendering its course lists and popular; docs has room for
// extra more documents.
func (s *State) catalogue(extra int) *catalogue {
	c := &catalogue{
		today:    s.today,
		byID:     s.courses,
		upcoming: s.upcoming,
		scores:   s.scores,
		docs:     make(map[string][]byte, 8+extra),
		enc:      newEncoder(),
	}
	for _, co := range s.courses {
		c.courses = append(c.courses, co)
	}
	c.folded = sortCourses(c.courses)
	return c
}

// indexAffectedClasses sets the classes to render, checking each belongs to a public course.
func (c *catalogue) indexAffectedClasses(classes []Class) error {
	for i := range classes {
		cl := &classes[i]
		if c.byID[cl.CourseID] == nil {
			return fmt.Errorf("index classes: class %d belongs to course %d, which is not a public course", cl.ID, cl.CourseID)
		}
		c.classes = append(c.classes, cl)
	}
	return nil
}
