package security

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// emptySearch is the search result with no class (D10).
const emptySearch = `{"data":[],"total":0,"last_page":1}`

// The parts of the documents that name ids or could carry a non-public class's values.
type (
	listDoc struct {
		Data []struct {
			ID       int64       `json:"id"`
			Upcoming *summaryDoc `json:"upcoming_class"`
		} `json:"data"`
	}
	popularDoc []struct {
		ID       int64       `json:"id"`
		Upcoming *summaryDoc `json:"upcoming_class"`
	}
	summaryDoc struct {
		ID    *int64 `json:"id"` // popular only
		Start string `json:"start"`
		End   string `json:"end"`
		Cost  int64  `json:"cost"`
	}
	courseDoc struct {
		ID int64 `json:"id"`
	}
	classDoc struct {
		CourseID int64 `json:"course_id"`
	}
	searchDoc struct {
		Data []struct {
			ID       string `json:"id"`
			CourseID string `json:"course_id"`
		} `json:"data"`
		Total    int64 `json:"total"`
		LastPage int64 `json:"last_page"`
	}
)

// checkDocument parses the document of route and fails on any id of a non-public row in
// it. The upcoming_class of lists and popular must be the one computed from visible
// classes alone (D3): the course list's summary has no id, so its dates and cost tell
// whether a non-public class (which often starts sooner) took its place.
func (lc *leakCheck) checkDocument(where, route string, b []byte) {
	lc.t.Helper()
	lc.tot.items.Add(1)
	var id int64
	switch {
	case strings.HasPrefix(route, snapshot.RouteCourses):
		var doc listDoc
		if lc.decode(where, b, &doc) {
			for _, it := range doc.Data {
				lc.publicCourse(where, it.ID)
				lc.upcoming(where, it.ID, it.Upcoming)
			}
		}
	case route == snapshot.RoutePopular:
		var doc popularDoc
		if lc.decode(where, b, &doc) {
			for _, it := range doc {
				lc.publicCourse(where, it.ID)
				lc.upcoming(where, it.ID, it.Upcoming)
			}
		}
	case scanID(route, "/public/course/%d", &id):
		var doc courseDoc
		if lc.decode(where, b, &doc) && (doc.ID != id || !lc.ds.publicCourses[id]) {
			lc.fail("%s: course %d of a route for id %d (public: %v)", where, doc.ID, id, lc.ds.publicCourses[id])
		}
	case scanID(route, "/public/class/%d", &id):
		var doc classDoc
		if !lc.decode(where, b, &doc) {
			return
		}
		if !lc.ds.visibleClasses[id] {
			lc.fail("%s: a document for class %d, which is not visible", where, id)
		}
		lc.publicCourse(where, doc.CourseID)
	default:
		lc.fail("%s: unknown route %s", where, route)
	}
}

// scanID reports whether route is format with exactly one id, stored in id.
func scanID(route, format string, id *int64) bool {
	_, err := fmt.Sscanf(route, format, id)
	return err == nil && fmt.Sprintf(format, *id) == route
}

func (lc *leakCheck) decode(where string, b []byte, v any) bool {
	lc.t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		lc.fail("%s: not the expected JSON (%v): %s", where, err, b)
		return false
	}
	return true
}

func (lc *leakCheck) publicCourse(where string, id int64) {
	lc.t.Helper()
	if !lc.ds.publicCourses[id] {
		lc.fail("%s names course %d, which is not public", where, id)
	}
}

// upcoming fails unless got is the summary of the course's upcoming visible class.
func (lc *leakCheck) upcoming(where string, courseID int64, got *summaryDoc) {
	lc.t.Helper()
	want := lc.ds.upcomingOf(courseID)
	switch {
	case want == nil && got == nil:
		return
	case want == nil:
		lc.fail("%s: course %d has upcoming_class %+v but no upcoming visible class", where, courseID, *got)
		return
	case got == nil:
		lc.fail("%s: course %d has upcoming_class null, want class %d", where, courseID, want.id)
		return
	}
	if got.ID != nil && !lc.ds.visibleClasses[*got.ID] {
		lc.fail("%s: course %d has upcoming_class %d, which is not visible", where, courseID, *got.ID)
	}
	ok := got.Start == want.start.Format(time.DateOnly) && got.End == want.end.Format(time.DateOnly) &&
		got.Cost == want.cost && (got.ID == nil || *got.ID == want.id)
	if !ok {
		lc.fail("%s: course %d has upcoming_class %+v, want visible class %d (%s, cost %d)", where, courseID,
			*got, want.id, want.start.Format(time.DateOnly), want.cost)
	}
}

// upcomingOf is D3 over visible classes: the earliest upcoming one, ties by lowest id.
func (ds *dataset) upcomingOf(courseID int64) *dsClass {
	day := time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC)
	var best *dsClass
	for i := range ds.classes {
		c := &ds.classes[i]
		if c.courseID != courseID || !ds.visibleClasses[c.id] || c.start.Before(day) {
			continue
		}
		if best == nil || c.start.Before(best.start) || (c.start.Equal(best.start) && c.id < best.id) {
			best = c
		}
	}
	return best
}

// searchAll fetches every page of the class search at route with q (50 a page): each item
// must be a visible class of a public course (of the route's course on the per-course
// search), and when none is set the result must be exactly the empty one.
func (lc *leakCheck) searchAll(route string, q url.Values, none bool) {
	lc.t.Helper()
	var courseID int64
	scoped := scanID(route, "/public/course/%d/classes", &courseID)
	q.Set("limit", "50")
	for page := int64(1); ; page++ {
		q.Set("page", strconv.FormatInt(page, 10))
		target := route + "?" + q.Encode()
		code, b := lc.get(target)
		where := "GET " + target
		if code != 200 {
			lc.fail("%s: status %d, want 200: %s", where, code, b)
			return
		}
		if none && string(b) != emptySearch {
			lc.fail("%s = %s, want the empty result %s", where, b, emptySearch)
		}
		var doc searchDoc
		if !lc.decode(where, b, &doc) {
			return
		}
		for _, it := range doc.Data {
			lc.tot.items.Add(1)
			lc.searchItem(where, it.ID, it.CourseID, scoped, courseID)
		}
		if page >= doc.LastPage || page >= 20 {
			return
		}
	}
}

// searchItem fails unless the item is a visible class of its course.
func (lc *leakCheck) searchItem(where, id, courseID string, scoped bool, routeCourse int64) {
	lc.t.Helper()
	classID, err1 := strconv.ParseInt(id, 10, 64)
	cid, err2 := strconv.ParseInt(courseID, 10, 64)
	if err1 != nil || err2 != nil {
		lc.fail("%s: item ids %q, %q are not decimal strings (D29)", where, id, courseID)
		return
	}
	if !lc.ds.visibleClasses[classID] {
		lc.fail("%s: item of class %d, which is not visible", where, classID)
	}
	lc.publicCourse(where, cid)
	if scoped && cid != routeCourse {
		lc.fail("%s: item of course %d on the search of course %d", where, cid, routeCourse)
	}
	for _, c := range lc.ds.classes {
		if c.id == classID && c.courseID != cid {
			lc.fail("%s: class %d given course %d, its course is %d", where, classID, cid, c.courseID)
		}
	}
}
