package catalogue

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// fixture is the main test catalogue. today is 2027-03-10. Rows are inserted out of id order
// so that nothing can pass by relying on insertion order. Everything named Secret/HIDDEN or
// with an id or cost starting with 9 is not public and must never appear (D28).
//
// Registrations: class 101: 2 (its limit: full), 102: 1, 9100: 3 (non-public class of public
// course 1), 201: 5 (limit 1: over-registered), 301: 3, 9801: 10 (public class of the
// non-public course 9001).
const fixture = `
INSERT INTO locations (id, name, city, state, zip, country) VALUES
    (1, 'Downtown Center', 'Springfield', 'IL', '62701', 'US'),
    (2, 'Annex', 'Shelbyville', NULL, NULL, 'US');
INSERT INTO rooms (id, location_id, name) VALUES (10, 1, 'Room A'), (11, 2, NULL);
INSERT INTO courses (id, name, type, description, is_public) VALUES
    (7, 'Biology', 'Blended', 'Second biology', TRUE),
    (5, 'Zoology', 'Brick and Mortar', 'Animals', TRUE),
    (3, 'Biology', 'Blended', '<em>Cells</em>', TRUE),
    (9001, 'Secret Course', 'Online', 'TOPSECRET-DESC', FALSE),
    (1, 'algebra basics', 'Brick and Mortar', '<p>Learn <b>algebra</b> & "more"</p>', TRUE),
    (2, 'Algebra Basics', 'Online', 'Online algebra', TRUE),
    (4, 'Chemistry', 'Online', NULL, TRUE);
INSERT INTO classes (id, course_id, room_id, start_date, end_date, schedule, cost, seat_limit, down_payment, is_public) VALUES
    (103, 1, NULL, '2027-03-10', '2027-03-11', NULL, 450, NULL, NULL, TRUE),
    (101, 1, 10, '2027-03-10', '2027-03-12', 'Mon-Wed 9am-5pm', 500, 2, 10000, TRUE),
    (102, 1, 10, '2027-03-01', '2027-03-03', NULL, 400, 10, NULL, TRUE),
    (9100, 1, 10, '2027-02-01', '2027-02-02', 'HIDDEN-SCHEDULE', 9111, 50, NULL, FALSE),
    (201, 2, 10, '2027-01-01', '2027-01-31', 'Self-paced', 300, 1, 0, TRUE),
    (202, 2, 10, '2027-04-01', '2027-04-30', NULL, 300, NULL, NULL, TRUE),
    (301, 3, NULL, '2027-05-01', '2027-05-02', NULL, 700, 20, 25000, TRUE),
    (302, 3, 11, '2027-06-01', '2027-06-02', 'Weekends', 700, 0, NULL, TRUE),
    (104, 5, 10, '2027-03-09', '2027-03-25', NULL, 850, NULL, NULL, TRUE),
    (9500, 5, 10, '2027-03-15', '2027-03-16', 'HIDDEN-SCHEDULE', 9555, NULL, NULL, FALSE),
    (501, 5, 10, '2027-03-20', '2027-03-21', NULL, 800, 30, NULL, TRUE),
    (9801, 9001, NULL, '2027-04-01', '2027-04-02', NULL, 9888, NULL, NULL, TRUE);
INSERT INTO registrations (class_id) SELECT 101 FROM generate_series(1, 2);
INSERT INTO registrations (class_id) SELECT 102 FROM generate_series(1, 1);
INSERT INTO registrations (class_id) SELECT 9100 FROM generate_series(1, 3);
INSERT INTO registrations (class_id) SELECT 201 FROM generate_series(1, 5);
INSERT INTO registrations (class_id) SELECT 301 FROM generate_series(1, 3);
INSERT INTO registrations (class_id) SELECT 9801 FROM generate_series(1, 10);
`

// Course-list items of the fixture, written from the spec (2.3, 4.1) and D2, D3, D6.
const (
	// Online: no city or state although class 202 has a room; uncapped: null seats.
	item2 = `{"id":2,"name":"Algebra Basics","upcoming_class":{"start":"2027-04-01","end":"2027-04-30","type":"Online","city":null,"state":null,"cost":300,"available_seats":null}}`
	// Class 101 starts today (upcoming), is full (still counts) and ties 103 on start (lower id wins).
	item1 = `{"id":1,"name":"algebra basics","upcoming_class":{"start":"2027-03-10","end":"2027-03-12","type":"Brick and Mortar","city":"Springfield","state":"IL","cost":500,"available_seats":0}}`
	// Class 301 has no room: city and state null.
	item3 = `{"id":3,"name":"Biology","upcoming_class":{"start":"2027-05-01","end":"2027-05-02","type":"Blended","city":null,"state":null,"cost":700,"available_seats":17}}`
	item7 = `{"id":7,"name":"Biology","upcoming_class":null}`
	item4 = `{"id":4,"name":"Chemistry","upcoming_class":null}`
	// Class 104 started yesterday and the earlier non-public 9500 does not count: 501.
	item5 = `{"id":5,"name":"Zoology","upcoming_class":{"start":"2027-03-20","end":"2027-03-21","type":"Brick and Mortar","city":"Springfield","state":"IL","cost":800,"available_seats":30}}`
)

// list wraps course-list items in the document's envelope.
func list(items ...string) string { return `{"data":[` + strings.Join(items, ",") + `]}` }

// fixtureDocs is every document the fixture must give, written by hand.
var fixtureDocs = map[string]string{
	// D14: "Algebra Basics" and "algebra basics" are equal ignoring case, then "A" < "a";
	// the two "Biology" courses by id.
	snapshot.CoursesRoute(nil):                                     list(item2, item1, item3, item7, item4, item5),
	snapshot.CoursesRoute([]string{"Online"}):                      list(item2, item4),
	snapshot.CoursesRoute([]string{"Brick and Mortar"}):            list(item1, item5),
	snapshot.CoursesRoute([]string{"Blended"}):                     list(item3, item7),
	snapshot.CoursesRoute([]string{"Online", "Brick and Mortar"}):  list(item2, item1, item4, item5),
	snapshot.CoursesRoute([]string{"Online", "Blended"}):           list(item2, item3, item7, item4),
	snapshot.CoursesRoute([]string{"Brick and Mortar", "Blended"}): list(item1, item3, item7, item5),

	// D17: course 1 scores 2+1+3 (its non-public class 9100 counts) = 6, course 2 scores 5,
	// course 3 scores 3; course 9001 (10) is not public and does not rank.
	snapshot.RoutePopular: `[
		{"id":1,"name":"algebra basics","upcoming_class":{"id":101,"cost":500,"start":"2027-03-10","end":"2027-03-12","available_seats":0}},
		{"id":2,"name":"Algebra Basics","upcoming_class":{"id":202,"cost":300,"start":"2027-04-01","end":"2027-04-30","available_seats":null}},
		{"id":3,"name":"Biology","upcoming_class":{"id":301,"cost":700,"start":"2027-05-01","end":"2027-05-02","available_seats":17}}]`,

	snapshot.CourseRoute(1): `{"id":1,"name":"algebra basics","type":"Brick and Mortar","description":"<p>Learn <b>algebra</b> & \"more\"</p>"}`,
	snapshot.CourseRoute(2): `{"id":2,"name":"Algebra Basics","type":"Online","description":"Online algebra"}`,
	snapshot.CourseRoute(3): `{"id":3,"name":"Biology","type":"Blended","description":"<em>Cells</em>"}`,
	snapshot.CourseRoute(4): `{"id":4,"name":"Chemistry","type":"Online","description":null}`,
	snapshot.CourseRoute(5): `{"id":5,"name":"Zoology","type":"Brick and Mortar","description":"Animals"}`,
	snapshot.CourseRoute(7): `{"id":7,"name":"Biology","type":"Blended","description":"Second biology"}`,

	// Starts today, capped and full: cannot register (D5); 0 open seats (D6); full location (D19).
	snapshot.ClassRoute(101): `{"course_id":1,"course_name":"algebra basics","course_type":"Brick and Mortar","start":"2027-03-10","end":"2027-03-12","schedule":"Mon-Wed 9am-5pm","cost":500,"can_register":false,
		"location":{"name":"Downtown Center","room":"Room A","city":"Springfield","state":"IL","zip":"62701","country":"US"},
		"down_payment":"10000","registration_id":null,"prev_reg_test_date":null,"open_seats":0}`,
	// Past in-person class: still served (D18), cannot register although 9 seats remain.
	snapshot.ClassRoute(102): `{"course_id":1,"course_name":"algebra basics","course_type":"Brick and Mortar","start":"2027-03-01","end":"2027-03-03","schedule":null,"cost":400,"can_register":false,
		"location":{"name":"Downtown Center","room":"Room A","city":"Springfield","state":"IL","zip":"62701","country":"US"},
		"down_payment":null,"registration_id":null,"prev_reg_test_date":null,"open_seats":9}`,
	// Upcoming and uncapped: can register, open seats null; no room: every location field null.
	snapshot.ClassRoute(103): `{"course_id":1,"course_name":"algebra basics","course_type":"Brick and Mortar","start":"2027-03-10","end":"2027-03-11","schedule":null,"cost":450,"can_register":true,
		"location":{"name":null,"room":null,"city":null,"state":null,"zip":null,"country":null},
		"down_payment":null,"registration_id":null,"prev_reg_test_date":null,"open_seats":null}`,
	// Started yesterday, uncapped: has started, so cannot register.
	snapshot.ClassRoute(104): `{"course_id":5,"course_name":"Zoology","course_type":"Brick and Mortar","start":"2027-03-09","end":"2027-03-25","schedule":null,"cost":850,"can_register":false,
		"location":{"name":"Downtown Center","room":"Room A","city":"Springfield","state":"IL","zip":"62701","country":"US"},
		"down_payment":null,"registration_id":null,"prev_reg_test_date":null,"open_seats":null}`,
	// Online, past and over-registered (5 of 1): can register (D5), 0 not -4 (D6), "0" (D20).
	snapshot.ClassRoute(201): `{"course_id":2,"course_name":"Algebra Basics","course_type":"Online","start":"2027-01-01","end":"2027-01-31","schedule":"Self-paced","cost":300,"can_register":true,
		"location":"online","down_payment":"0","registration_id":null,"prev_reg_test_date":null,"open_seats":0}`,
	snapshot.ClassRoute(202): `{"course_id":2,"course_name":"Algebra Basics","course_type":"Online","start":"2027-04-01","end":"2027-04-30","schedule":null,"cost":300,"can_register":true,
		"location":"online","down_payment":null,"registration_id":null,"prev_reg_test_date":null,"open_seats":null}`,
	snapshot.ClassRoute(301): `{"course_id":3,"course_name":"Biology","course_type":"Blended","start":"2027-05-01","end":"2027-05-02","schedule":null,"cost":700,"can_register":true,
		"location":{"name":null,"room":null,"city":null,"state":null,"zip":null,"country":null},
		"down_payment":"25000","registration_id":null,"prev_reg_test_date":null,"open_seats":17}`,
	// Capped at 0 seats: upcoming but cannot register; a room without a name at a location
	// with some fields unset.
	snapshot.ClassRoute(302): `{"course_id":3,"course_name":"Biology","course_type":"Blended","start":"2027-06-01","end":"2027-06-02","schedule":"Weekends","cost":700,"can_register":false,
		"location":{"name":"Annex","room":null,"city":"Shelbyville","state":null,"zip":null,"country":"US"},
		"down_payment":null,"registration_id":null,"prev_reg_test_date":null,"open_seats":0}`,
	snapshot.ClassRoute(501): `{"course_id":5,"course_name":"Zoology","course_type":"Brick and Mortar","start":"2027-03-20","end":"2027-03-21","schedule":null,"cost":800,"can_register":true,
		"location":{"name":"Downtown Center","room":"Room A","city":"Springfield","state":"IL","zip":"62701","country":"US"},
		"down_payment":null,"registration_id":null,"prev_reg_test_date":null,"open_seats":30}`,
}

func TestRender(t *testing.T) {
	r := render(t, readDB(t, fixture))
	checkDocs(t, r, fixtureDocs)
	want := snapshot.Counts{Courses: 6, Classes: 9, Documents: 7 + 1 + 6 + 9}
	if diff := cmp.Diff(want, r.Counts); diff != "" {
		t.Errorf("Render: counts mismatch (-want +got):\n%s", diff)
	}
}

// TestRenderBytes checks exact bytes where the decoded comparison cannot: field order as the
// spec lists it, HTML left unescaped, compact output without a trailing newline.
func TestRenderBytes(t *testing.T) {
	r := render(t, readDB(t, fixture))
	tests := []struct {
		route string
		want  string
	}{
		{snapshot.CourseRoute(1), `{"id":1,"name":"algebra basics","type":"Brick and Mortar","description":"<p>Learn <b>algebra</b> & \"more\"</p>"}`},
		{snapshot.CoursesRoute([]string{"Blended"}), `{"data":[{"id":3,"name":"Biology","upcoming_class":{"start":"2027-05-01","end":"2027-05-02","type":"Blended","city":null,"state":null,"cost":700,"available_seats":17}},{"id":7,"name":"Biology","upcoming_class":null}]}`},
		{snapshot.ClassRoute(302), `{"course_id":3,"course_name":"Biology","course_type":"Blended","start":"2027-06-01","end":"2027-06-02","schedule":"Weekends","cost":700,"can_register":false,"location":{"name":"Annex","room":null,"city":"Shelbyville","state":null,"zip":null,"country":"US"},"down_payment":null,"registration_id":null,"prev_reg_test_date":null,"open_seats":0}`},
		{snapshot.ClassRoute(202), `{"course_id":2,"course_name":"Algebra Basics","course_type":"Online","start":"2027-04-01","end":"2027-04-30","schedule":null,"cost":300,"can_register":true,"location":"online","down_payment":null,"registration_id":null,"prev_reg_test_date":null,"open_seats":null}`},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, string(r.Docs[tt.route])); diff != "" {
			t.Errorf("Render: bytes of %q mismatch (-want +got):\n%s", tt.route, diff)
		}
	}
}

// TestRenderNothingNonPublic is D28: the non-public course 9001, its public class 9801 and
// the non-public classes 9100 and 9500 of public courses have no document, and nothing of
// them (names, descriptions, schedules, ids, costs) appears in any document.
func TestRenderNothingNonPublic(t *testing.T) {
	r := render(t, readDB(t, fixture))
	for _, route := range []string{
		snapshot.CourseRoute(9001), snapshot.ClassRoute(9801),
		snapshot.ClassRoute(9100), snapshot.ClassRoute(9500),
	} {
		if _, ok := r.Docs[route]; ok {
			t.Errorf("Render: document %q exists, want none (not public)", route)
		}
	}
	secrets := []string{"Secret", "TOPSECRET", "HIDDEN", "9001", "9801", "9100", "9500", "9111", "9555", "9888"}
	for route, doc := range r.Docs {
		for _, s := range secrets {
			if bytes.Contains(doc, []byte(s)) || strings.Contains(route, s) {
				t.Errorf("Render: %q contains %q of a non-public row:\n%s", route, s, doc)
			}
		}
	}
}
