package catalogue

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// popularCount is how many courses GET /public/popular lists (spec 8).
const popularCount = 3

// Rendered is every static document of one build.
type Rendered struct {
	Docs   map[string][]byte // route (snapshot.CoursesRoute(...), snapshot.RoutePopular, snapshot.CourseRoute(id), snapshot.ClassRoute(id)) -> JSON bytes
	Counts snapshot.Counts   // public courses, public classes of public courses, documents
	State  *State            // what a later partial render needs (State.RenderChanges)
}

// catalogue is Data indexed for rendering.
type catalogue struct {
	today    time.Time
	courses  []*Course          // in course-list order (D14)
	folded   map[*Course]string // each course's name in lower case, folded once
	byID     map[int64]*Course  // public courses by id
	upcoming map[int64]*Class   // course id -> its upcoming class (D3)
	scores   map[int64]int64    // course id -> registrations of all time (D17)
	classes  []*Class           // every class, in id order
	docs     map[string][]byte  // the output
	enc      *encoder           // shared by every document
}

// Render renders every static document for the given today (midnight UTC of the date, from
// config.Config.Today). The same d and today always give the same bytes, whatever the order
// of d's slices, so the publisher can skip unchanged documents by hash.
func Render(d *Data, today time.Time) (*Rendered, error) {
	c, err := index(d, today)
	if err != nil {
		return nil, err
	}
	steps := []func() error{c.renderCourseLists, c.renderPopular, c.renderCourses, c.renderClasses}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return &Rendered{
		Docs:   c.docs,
		Counts: snapshot.Counts{Courses: len(c.courses), Classes: len(c.classes), Documents: len(c.docs)},
		State:  c.state(),
	}, nil
}

// index checks d for consistency and indexes it. A class of a course that is not among the
// public courses is an error rather than skipped: it means a template no longer selects only
// public rows, and such a build must not publish (D28).
func index(d *Data, today time.Time) (*catalogue, error) {
	y, m, day := today.Date()
	c := &catalogue{
		today:    time.Date(y, m, day, 0, 0, 0, 0, time.UTC),
		byID:     make(map[int64]*Course, len(d.Courses)),
		upcoming: make(map[int64]*Class, len(d.Courses)),
		scores:   make(map[int64]int64, len(d.Scores)),
		docs:     make(map[string][]byte, 8+len(d.Courses)+len(d.Classes)),
		enc:      newEncoder(),
	}
	if err := c.indexCourses(d.Courses); err != nil {
		return nil, err
	}
	if err := c.indexClasses(d.Classes); err != nil {
		return nil, err
	}
	for _, s := range d.Scores {
		if c.byID[s.CourseID] == nil {
			return nil, fmt.Errorf("index scores: course %d is not a public course", s.CourseID)
		}
		c.scores[s.CourseID] = s.Registrations
	}
	return c, nil
}

func (c *catalogue) indexCourses(courses []Course) error {
	for i := range courses {
		co := &courses[i]
		if c.byID[co.ID] != nil {
			return fmt.Errorf("index courses: course %d appears twice", co.ID)
		}
		c.byID[co.ID] = co
		c.courses = append(c.courses, co)
	}
	c.folded = sortCourses(c.courses)
	return nil
}

// sortCourses sorts courses in course-list order and returns each one's name in lower case.
func sortCourses(courses []*Course) map[*Course]string {
	// Fold each name once rather than in every comparison.
	folded := make(map[*Course]string, len(courses))
	for _, co := range courses {
		folded[co] = strings.ToLower(co.Name)
	}
	// D14: name compared case-insensitively, then name, then id.
	slices.SortFunc(courses, func(a, b *Course) int {
		return cmp.Or(strings.Compare(folded[a], folded[b]), strings.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID))
	})
	return folded
}

func (c *catalogue) indexClasses(classes []Class) error {
	for i := range classes {
		cl := &classes[i]
		if c.byID[cl.CourseID] == nil {
			return fmt.Errorf("index classes: class %d belongs to course %d, which is not a public course", cl.ID, cl.CourseID)
		}
		c.classes = append(c.classes, cl)
		if !upcoming(cl, c.today) {
			continue
		}
		// D3: the earliest start, ties broken by the lowest id; fullness does not matter.
		best := c.upcoming[cl.CourseID]
		if best == nil || cl.Start.Before(best.Start) || (cl.Start.Equal(best.Start) && cl.ID < best.ID) {
			c.upcoming[cl.CourseID] = cl
		}
	}
	slices.SortFunc(c.classes, func(a, b *Class) int { return cmp.Compare(a.ID, b.ID) })
	for i := 1; i < len(c.classes); i++ {
		if c.classes[i].ID == c.classes[i-1].ID {
			return fmt.Errorf("index classes: class %d appears twice", c.classes[i].ID)
		}
	}
	return nil
}

// add encodes v as the document of route.
func (c *catalogue) add(route string, v any) error {
	b, err := c.enc.encode(v)
	if err != nil {
		return fmt.Errorf("render %s: %w", route, err)
	}
	c.docs[route] = b
	return nil
}

// renderCourseLists renders the course list and one variant per non-empty proper subset of
// the course types (D13); snapshot.CoursesRoute names them.
func (c *catalogue) renderCourseLists() error {
	items := make([]listItem, len(c.courses))
	for i, co := range c.courses {
		items[i] = listItem{ID: co.ID, Name: co.Name}
		if cl := c.upcoming[co.ID]; cl != nil {
			items[i].UpcomingClass = newListUpcoming(co, cl)
		}
	}
	types := snapshot.CourseTypes
	for mask := 1; mask < 1<<len(types); mask++ {
		var subset []string
		for i, t := range types {
			if mask&(1<<i) != 0 {
				subset = append(subset, t)
			}
		}
		list := courseList{Data: []listItem{}}
		for i, co := range c.courses {
			if slices.Contains(subset, co.Type) {
				list.Data = append(list.Data, items[i])
			}
		}
		if err := c.add(snapshot.CoursesRoute(subset), list); err != nil {
			return err
		}
	}
	return nil
}

// renderPopular renders the three public courses with the most registrations (D17).
func (c *catalogue) renderPopular() error {
	// D17: the highest score first; ties by name compared case-insensitively, then by id
	// (not D14's list order, which compares the exact name before the id).
	ranked := slices.Clone(c.courses)
	slices.SortFunc(ranked, func(a, b *Course) int {
		return cmp.Or(cmp.Compare(c.scores[b.ID], c.scores[a.ID]),
			strings.Compare(c.folded[a], c.folded[b]), cmp.Compare(a.ID, b.ID))
	})
	popular := []popularItem{}
	for _, co := range ranked[:min(popularCount, len(ranked))] {
		item := popularItem{ID: co.ID, Name: co.Name}
		if cl := c.upcoming[co.ID]; cl != nil {
			item.UpcomingClass = newPopularUpcoming(cl)
		}
		popular = append(popular, item)
	}
	return c.add(snapshot.RoutePopular, popular)
}

// renderCourses renders one document per public course.
func (c *catalogue) renderCourses() error {
	for _, co := range c.courses {
		if err := c.add(snapshot.CourseRoute(co.ID), newCourseDoc(co)); err != nil {
			return err
		}
	}
	return nil
}

// renderClasses renders one document per public class of a public course, past ones
// included (D18).
func (c *catalogue) renderClasses() error {
	for _, cl := range c.classes {
		doc := newClassDoc(c.byID[cl.CourseID], cl, c.today)
		if err := c.add(snapshot.ClassRoute(cl.ID), doc); err != nil {
			return err
		}
	}
	return nil
}

// encoder writes compact JSON without escaping HTML, so that staff HTML in descriptions stays
// readable, and without the trailing newline of json.Encoder. One buffer is reused and each
// document copied out at its exact size, which keeps ~100,000 documents compact in memory.
type encoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

func newEncoder() *encoder {
	e := &encoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}

func (e *encoder) encode(v any) ([]byte, error) {
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.Clone(bytes.TrimSuffix(e.buf.Bytes(), []byte("\n"))), nil
}
