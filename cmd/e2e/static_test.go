package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Upcoming-class summaries of the course list (spec 2.3), by course: the earliest upcoming
// public class, ties by lowest id (D3).
const (
	upZoology  = `{"start": "@+10", "end": "@+12", "type": "Brick and Mortar", "city": "Springfield", "state": "IL", "cost": 500, "available_seats": 6}`
	upBiology  = `{"start": "@+20", "end": "@+21", "type": "Brick and Mortar", "city": null, "state": null, "cost": 300, "available_seats": null}`
	upAlgebra  = `{"start": "@+1", "end": "@+30", "type": "Online", "city": null, "state": null, "cost": 120, "available_seats": 0}`
	upBasics   = `{"start": "@+0", "end": "@+2", "type": "Blended", "city": "Portland", "state": "OR", "cost": 200, "available_seats": 8}`
	upChem     = `{"start": "@+10", "end": "@+10", "type": "Online", "city": null, "state": null, "cost": 0, "available_seats": null}`
	upYoga     = `{"start": "@+100", "end": "@+100", "type": "Blended", "city": "Springfield", "state": "IL", "cost": 50, "available_seats": null}`
	coursesAll = `{"data": [
		{"id": 13, "name": "Algebra 100%", "upcoming_class": ` + upAlgebra + `},
		{"id": 11, "name": "art history", "upcoming_class": null},
		{"id": 14, "name": "biology basics", "upcoming_class": ` + upBasics + `},
		{"id": 12, "name": "Biology_Lab", "upcoming_class": ` + upBiology + `},
		{"id": 16, "name": "Chemistry", "upcoming_class": null},
		{"id": 17, "name": "Chemistry", "upcoming_class": null},
		{"id": 15, "name": "chemistry", "upcoming_class": ` + upChem + `},
		{"id": 18, "name": "Yoga", "upcoming_class": ` + upYoga + `},
		{"id": 10, "name": "Zoology", "upcoming_class": ` + upZoology + `}
	]}`
	coursesOnline = `{"data": [
		{"id": 13, "name": "Algebra 100%", "upcoming_class": ` + upAlgebra + `},
		{"id": 15, "name": "chemistry", "upcoming_class": ` + upChem + `}
	]}`
	coursesOnlineBlended = `{"data": [
		{"id": 13, "name": "Algebra 100%", "upcoming_class": ` + upAlgebra + `},
		{"id": 11, "name": "art history", "upcoming_class": null},
		{"id": 14, "name": "biology basics", "upcoming_class": ` + upBasics + `},
		{"id": 17, "name": "Chemistry", "upcoming_class": null},
		{"id": 15, "name": "chemistry", "upcoming_class": ` + upChem + `},
		{"id": 18, "name": "Yoga", "upcoming_class": ` + upYoga + `}
	]}`
	coursesInPerson = `{"data": [
		{"id": 11, "name": "art history", "upcoming_class": null},
		{"id": 14, "name": "biology basics", "upcoming_class": ` + upBasics + `},
		{"id": 12, "name": "Biology_Lab", "upcoming_class": ` + upBiology + `},
		{"id": 16, "name": "Chemistry", "upcoming_class": null},
		{"id": 17, "name": "Chemistry", "upcoming_class": null},
		{"id": 18, "name": "Yoga", "upcoming_class": ` + upYoga + `},
		{"id": 10, "name": "Zoology", "upcoming_class": ` + upZoology + `}
	]}`
)

// testCourses checks GET /public/courses (spec 4.1): order by name case-insensitively, then
// name, then id (D14), the type filter in its three spellings (D13), limit and page ignored.
func (f *fixture) testCourses(t *testing.T) {
	for _, tc := range []struct{ query, want string }{
		{"", coursesAll},
		{"?limit=1&page=2", coursesAll}, // not paginated (4.1)
		{"?type=", coursesAll},          // empty values are ignored (D13)
		{"?type=Online", coursesOnline},
		{"?type[]=Online&type[]=Blended", coursesOnlineBlended},
		{"?type[]=Blended&type[]=Online&type[]=Online", coursesOnlineBlended}, // order, duplicates
		{"?type=Blended&type=" + url.QueryEscape("Brick and Mortar"), coursesInPerson},
		{"?unknown=1", coursesAll}, // D16
	} {
		f.wantJSON(t, f.get(t, "/public/courses"+tc.query), tc.want)
	}
	for _, q := range []string{"?type=online", "?type=Foo", "?type[]=Online&type[]=Webinar"} {
		r := f.get(t, "/public/courses"+q)
		wantError(t, r, http.StatusBadRequest, "")
		msg, _ := r.JSON(t).(map[string]any)["message"].(string)
		for _, typ := range []string{"Online", "Brick and Mortar", "Blended"} {
			if !strings.Contains(msg, typ) {
				t.Errorf("GET /public/courses%s: message %q does not list %q (D13)", q, msg, typ)
			}
		}
	}
}

// testPopular checks GET /public/popular (spec 4.2, D17): a bare array of three, Secret
// Course left out although it has the most registrations, the tie at 3 broken by name
// case-insensitively, and upcoming_class null for art history.
func (f *fixture) testPopular(t *testing.T) {
	f.wantJSON(t, f.get(t, "/public/popular"), `[
		{"id": 10, "name": "Zoology", "upcoming_class": {"id": 100, "cost": 500, "start": "@+10", "end": "@+12", "available_seats": 6}},
		{"id": 13, "name": "Algebra 100%", "upcoming_class": {"id": 131, "cost": 120, "start": "@+1", "end": "@+30", "available_seats": 0}},
		{"id": 11, "name": "art history", "upcoming_class": null}
	]`)
}

// testCourse checks GET /public/course/{id} (spec 4.5, D15): HTML passed through unchanged,
// a null description, 404 for a course that is not public and for ids that are not
// positive base-10 integers.
func (f *fixture) testCourse(t *testing.T) {
	f.wantJSON(t, f.get(t, "/public/course/10"),
		`{"id": 10, "name": "Zoology", "type": "Brick and Mortar", "description": "<p>Animals &amp; <b>habitats</b></p>"}`)
	f.wantJSON(t, f.get(t, "/public/course/14"),
		`{"id": 14, "name": "biology basics", "type": "Blended", "description": null}`)
	for _, id := range []string{"20", "999", "abc", "-1", "1.5", "0", "1e1", "%2010"} {
		wantError(t, f.get(t, "/public/course/"+id), http.StatusNotFound, "")
	}
}

// testClass checks GET /public/class/{id} (spec 4.6, 2.4; D5, D6, D18, D19, D20).
func (f *fixture) testClass(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		// Capped, upcoming, with a room and a down payment.
		{"100", `{"course_id": 10, "course_name": "Zoology", "course_type": "Brick and Mortar",
			"start": "@+10", "end": "@+12", "schedule": "Mon-Wed 9am-5pm", "cost": 500, "can_register": true,
			"location": {"name": "Downtown Center", "room": "Room 101", "city": "Springfield", "state": "IL", "zip": "62701", "country": "US"},
			"down_payment": "30000", "registration_id": null, "prev_reg_test_date": null, "open_seats": 6}`},
		// Full and upcoming, in person: cannot register (D5).
		{"103", `{"course_id": 10, "course_name": "Zoology", "course_type": "Brick and Mortar",
			"start": "@+15", "end": "@+16", "schedule": null, "cost": 600, "can_register": false,
			"location": {"name": "Harbor Campus", "room": "Lab B", "city": "Portland", "state": "OR", "zip": "97201", "country": "US"},
			"down_payment": null, "registration_id": null, "prev_reg_test_date": null, "open_seats": 0}`},
		// Past and full: still served (D18).
		{"110", `{"course_id": 11, "course_name": "art history", "course_type": "Blended",
			"start": "@-30", "end": "@-28", "schedule": "Weekends", "cost": 700, "can_register": false,
			"location": {"name": "Downtown Center", "room": "Room 101", "city": "Springfield", "state": "IL", "zip": "62701", "country": "US"},
			"down_payment": null, "registration_id": null, "prev_reg_test_date": null, "open_seats": 0}`},
		// Past with seats left: has started, so cannot register (D5, D18).
		{"122", `{"course_id": 12, "course_name": "Biology_Lab", "course_type": "Brick and Mortar",
			"start": "@-10", "end": "@-9", "schedule": null, "cost": 300, "can_register": false,
			"location": {"name": "Harbor Campus", "room": "Lab B", "city": "Portland", "state": "OR", "zip": "97201", "country": "US"},
			"down_payment": null, "registration_id": null, "prev_reg_test_date": null, "open_seats": 9}`},
		// No room yet: six nulls (D19); uncapped: open_seats null (D6).
		{"120", `{"course_id": 12, "course_name": "Biology_Lab", "course_type": "Brick and Mortar",
			"start": "@+20", "end": "@+21", "schedule": null, "cost": 300, "can_register": true,
			"location": {"name": null, "room": null, "city": null, "state": null, "zip": null, "country": null},
			"down_payment": null, "registration_id": null, "prev_reg_test_date": null, "open_seats": null}`},
		// Online and full: can register all the same; location is the string (D5, D19).
		{"131", `{"course_id": 13, "course_name": "Algebra 100%", "course_type": "Online",
			"start": "@+1", "end": "@+30", "schedule": null, "cost": 120, "can_register": true,
			"location": "online", "down_payment": "2500", "registration_id": null, "prev_reg_test_date": null, "open_seats": 0}`},
		// Online and past, with a room: still "online" and open.
		{"130", `{"course_id": 13, "course_name": "Algebra 100%", "course_type": "Online",
			"start": "@-60", "end": "@-1", "schedule": "Self-paced", "cost": 100, "can_register": true,
			"location": "online", "down_payment": null, "registration_id": null, "prev_reg_test_date": null, "open_seats": 18}`},
		// Starts today: upcoming, so open (D2).
		{"140", `{"course_id": 14, "course_name": "biology basics", "course_type": "Blended",
			"start": "@+0", "end": "@+2", "schedule": null, "cost": 200, "can_register": true,
			"location": {"name": "Harbor Campus", "room": "Lab B", "city": "Portland", "state": "OR", "zip": "97201", "country": "US"},
			"down_payment": null, "registration_id": null, "prev_reg_test_date": null, "open_seats": 8}`},
		// Free, uncapped, online.
		{"150", `{"course_id": 15, "course_name": "chemistry", "course_type": "Online",
			"start": "@+10", "end": "@+10", "schedule": null, "cost": 0, "can_register": true,
			"location": "online", "down_payment": null, "registration_id": null, "prev_reg_test_date": null, "open_seats": null}`},
	} {
		f.wantJSON(t, f.get(t, "/public/class/"+tc.id), tc.want)
	}
	// 102, 121, 170: not public; 200: public class of a course that is not (4.6).
	for _, id := range []string{"102", "121", "170", "200", "99999", "abc", "-1", "1.5", "0"} {
		wantError(t, f.get(t, "/public/class/"+id), http.StatusNotFound, "")
	}
}
