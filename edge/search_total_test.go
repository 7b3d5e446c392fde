package edge

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// totalSeed is the catalogue of TestSearchTotal, which checks the total both ways: the way
// search.sql counts it (without a name or id filter, every public class of the date range
// less those of non-public courses; with one, course by course; past Online classes apart)
// and the way the index does (edge/search/index). Today is 2027-03-10. No class has a room or a seat limit. Every name holds
// "pottery", so that a name search meets the non-public courses too:
//
//	course 1 Pottery (B&M, public): 101 starts today, 102 upcoming, 103 past in person
//	  (out, though it runs on 2027-03-15), 104 not public.
//	course 2 Hidden Pottery (B&M, not public): 201 public upcoming and 203 public past (out:
//	  the total must take 201 off), 202 not public (also out: taking it off too would leave
//	  the total one short).
//	course 3 Online Pottery (Online, public): 301 and 302 past (in: online), 303 upcoming,
//	  304 not public.
//	course 4 Secret Online Pottery (Online, not public): 401 public past, 402 public
//	  upcoming (both out).
const totalSeed = `
INSERT INTO courses (id, name, type, description, is_public) VALUES
  (1, 'Pottery', 'Brick and Mortar', NULL, true),
  (2, 'Hidden Pottery', 'Brick and Mortar', NULL, false),
  (3, 'Online Pottery', 'Online', NULL, true),
  (4, 'Secret Online Pottery', 'Online', NULL, false);
INSERT INTO classes (id, course_id, room_id, start_date, end_date, schedule, cost, seat_limit, down_payment, is_public) VALUES
  (101, 1, NULL, '2027-03-10', '2027-03-12', NULL, 11, NULL, NULL, true),
  (102, 1, NULL, '2027-04-01', '2027-04-05', NULL, 12, NULL, NULL, true),
  (103, 1, NULL, '2027-03-01', '2027-03-20', NULL, 13, NULL, NULL, true),
  (104, 1, NULL, '2027-04-02', '2027-04-02', NULL, 14, NULL, NULL, false),
  (201, 2, NULL, '2027-04-01', '2027-04-10', NULL, 21, NULL, NULL, true),
  (202, 2, NULL, '2027-04-03', '2027-04-03', NULL, 22, NULL, NULL, false),
  (203, 2, NULL, '2027-03-01', '2027-03-02', NULL, 23, NULL, NULL, true),
  (301, 3, NULL, '2027-01-01', '2027-03-31', NULL, 31, NULL, NULL, true),
  (302, 3, NULL, '2027-03-09', '2027-03-09', NULL, 32, NULL, NULL, true),
  (303, 3, NULL, '2027-05-01', '2027-05-02', NULL, 33, NULL, NULL, true),
  (304, 3, NULL, '2026-12-01', '2026-12-02', NULL, 34, NULL, NULL, false),
  (401, 4, NULL, '2027-02-01', '2027-04-30', NULL, 41, NULL, NULL, true),
  (402, 4, NULL, '2027-04-04', '2027-04-04', NULL, 42, NULL, NULL, true);
`

// The items of totalSeed's matching classes, written out from its rows (spec 4.3, D29).
const (
	item101 = `{"id":"101","course_id":"1","course":"Pottery","start":"2027-03-10","end":"2027-03-12","type":"Brick and Mortar","city":null,"state":null,"schedule":null,"cost":11,"full":false,"available_seats":null}`
	item102 = `{"id":"102","course_id":"1","course":"Pottery","start":"2027-04-01","end":"2027-04-05","type":"Brick and Mortar","city":null,"state":null,"schedule":null,"cost":12,"full":false,"available_seats":null}`
	item301 = `{"id":"301","course_id":"3","course":"Online Pottery","start":"2027-01-01","end":"2027-03-31","type":"Online","city":null,"state":null,"schedule":null,"cost":31,"full":false,"available_seats":null}`
	item302 = `{"id":"302","course_id":"3","course":"Online Pottery","start":"2027-03-09","end":"2027-03-09","type":"Online","city":null,"state":null,"schedule":null,"cost":32,"full":false,"available_seats":null}`
	item303 = `{"id":"303","course_id":"3","course":"Online Pottery","start":"2027-05-01","end":"2027-05-02","type":"Online","city":null,"state":null,"schedule":null,"cost":33,"full":false,"available_seats":null}`
)

func TestSearchTotal(t *testing.T) { eachSearchPath(t, totalSeed, testSearchTotal) }

func testSearchTotal(t *testing.T, env *searchEnv) {
	const classes = "/api/v2/public/classes"
	tests := []struct {
		target string
		want   string
	}{
		// No name or id filter: the range's public classes less those of courses 2 and 4.
		{classes, page(5, 1, item301, item302, item101, item102, item303)},
		{classes + "?start=3-10-2027", page(3, 1, item101, item102, item303)}, // today: no past class
		{classes + "?start=3-9-2027", page(4, 1, item302, item101, item102, item303)},
		{classes + "?start=4-1-2027", page(2, 1, item102, item303)},
		{classes + "?end=3-31-2027", page(3, 1, item301, item302, item101)},
		{classes + "?start=4-2-2027&end=4-30-2027", page(0, 1)}, // only 104, 201, 202 and 402 start then
		{classes + "?date=3-15-2027", page(1, 1, item301)},      // 103 and 401 run then too
		{classes + "?date=4-3-2027", page(1, 1, item102)},       // 201 and 202 run then too
		{classes + "?date=4-4-2027", page(1, 1, item102)},       // 201 and 402 run then too
		{classes + "?limit=2&page=2", page(5, 3, item101, item102)},
		{classes + "?limit=2&page=4", page(5, 3)},       // past the last: the true total
		{classes + "?date=4-3-2027&page=2", page(1, 1)}, // the same, with a date
		{classes + "?start=4-1-2027&limit=1&page=3", page(2, 2)},

		// A name: course by course, public courses only.
		{classes + "?search=pottery", page(5, 1, item301, item302, item101, item102, item303)},
		{classes + "?search=online", page(3, 1, item301, item302, item303)},
		{classes + "?search=hidden", page(0, 1)},
		{classes + "?search=pottery&date=4-3-2027", page(1, 1, item102)},
		{classes + "?search=pottery&limit=2&page=9", page(5, 3)}, // past the last: the true total
		{classes + "?search=online&start=3-10-2027&limit=1&page=2", page(1, 1)},

		// An id (spec 4.4): a non-public course is an empty result, its public classes too.
		{"/api/v2/public/course/3/classes", page(3, 1, item301, item302, item303)},
		{"/api/v2/public/course/3/classes?limit=1&page=5", page(3, 3)}, // past the last: the true total
		{"/api/v2/public/course/1/classes?date=3-15-2027", page(0, 1)},
		{"/api/v2/public/course/2/classes", page(0, 1)},
		{"/api/v2/public/course/4/classes", page(0, 1)},
		{"/api/v2/public/course/4/classes?page=2", page(0, 1)},
	}
	for _, tt := range tests {
		got := env.get(http.MethodGet, tt.target, nil)
		if diff := cmp.Diff(okSearch(tt.want), got); diff != "" {
			t.Errorf("GET %q mismatch (-want +got):\n%s", tt.target, diff)
		}
	}
}
