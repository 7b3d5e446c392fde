package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// Search items (spec 4.3, D29): ids as strings, schedule null, city and state null for
// online classes even with a room (130) and for classes without one (120).
var item = map[int]string{
	130: `{"id": "130", "course_id": "13", "course": "Algebra 100%", "start": "@-60", "end": "@-1", "type": "Online", "city": null, "state": null, "schedule": null, "cost": 100, "full": false, "available_seats": 18}`,
	140: `{"id": "140", "course_id": "14", "course": "biology basics", "start": "@+0", "end": "@+2", "type": "Blended", "city": "Portland", "state": "OR", "schedule": null, "cost": 200, "full": false, "available_seats": 8}`,
	131: `{"id": "131", "course_id": "13", "course": "Algebra 100%", "start": "@+1", "end": "@+30", "type": "Online", "city": null, "state": null, "schedule": null, "cost": 120, "full": true, "available_seats": 0}`,
	100: `{"id": "100", "course_id": "10", "course": "Zoology", "start": "@+10", "end": "@+12", "type": "Brick and Mortar", "city": "Springfield", "state": "IL", "schedule": null, "cost": 500, "full": false, "available_seats": 6}`,
	101: `{"id": "101", "course_id": "10", "course": "Zoology", "start": "@+10", "end": "@+11", "type": "Brick and Mortar", "city": "Portland", "state": "OR", "schedule": null, "cost": 450, "full": false, "available_seats": 5}`,
	150: `{"id": "150", "course_id": "15", "course": "chemistry", "start": "@+10", "end": "@+10", "type": "Online", "city": null, "state": null, "schedule": null, "cost": 0, "full": false, "available_seats": null}`,
	103: `{"id": "103", "course_id": "10", "course": "Zoology", "start": "@+15", "end": "@+16", "type": "Brick and Mortar", "city": "Portland", "state": "OR", "schedule": null, "cost": 600, "full": true, "available_seats": 0}`,
	120: `{"id": "120", "course_id": "12", "course": "Biology_Lab", "start": "@+20", "end": "@+21", "type": "Brick and Mortar", "city": null, "state": null, "schedule": null, "cost": 300, "full": false, "available_seats": null}`,
	141: `{"id": "141", "course_id": "14", "course": "biology basics", "start": "@+40", "end": "@+41", "type": "Blended", "city": "Springfield", "state": "IL", "schedule": null, "cost": 250, "full": false, "available_seats": null}`,
}

// handOrder is every match of the search outside Yoga, in search order (D4, D12): the past
// Online class first, then by start date, 100, 101 and 150 (same day) by id. Not matched:
// 102, 121, 170 (not public), 110, 122 (past, in person), 200 (course not public).
var handOrder = []int{130, 140, 131, 100, 101, 150, 103, 120, 141}

// yoga is the search item of Yoga class 1000+i, on @+(100+i).
func yoga(i int) string {
	return fmt.Sprintf(`{"id": "%d", "course_id": "18", "course": "Yoga", "start": "@+%d", "end": "@+%d", "type": "Blended", "city": "Springfield", "state": "IL", "schedule": null, "cost": 50, "full": false, "available_seats": null}`,
		1000+i, 100+i, 100+i)
}

// yogas returns the items of Yoga classes from..to-1.
func yogas(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, yoga(i))
	}
	return out
}

// items returns the search items of the given classes, in that order.
func items(ids ...int) []string {
	var out []string
	for _, id := range ids {
		out = append(out, item[id])
	}
	return out
}

// page is a search response body (D10).
func page(data []string, total, lastPage int) string {
	return fmt.Sprintf(`{"data": [%s], "total": %d, "last_page": %d}`, strings.Join(data, ","), total, lastPage)
}

// emptyPage is the empty result of D10.
const emptyPage = `{"data": [], "total": 0, "last_page": 1}`

// handOnly restricts a search to the hand-written classes: Yoga starts at @+100.
func (f *fixture) handOnly() string { return "end=" + f.mdy(99) }

// testSearch checks GET /public/classes without filters: 9 hand-written matches and 51
// Yoga classes, 25 a page by default (spec 4.3, 8).
func (f *fixture) testSearch(t *testing.T) {
	first := append(items(handOrder...), yogas(0, 16)...)
	f.wantJSON(t, f.get(t, "/public/classes"), page(first, 60, 3))
	f.wantJSON(t, f.get(t, "/public/classes?page=3"), page(yogas(41, 51), 60, 3))
	f.wantJSON(t, f.get(t, "/public/classes?"+f.handOnly()), page(items(handOrder...), 9, 1))
}

// testSearchFilters checks search, start, end and date (spec 4.3; D7, D8, D11, D16).
func (f *fixture) testSearchFilters(t *testing.T) {
	all := page(items(handOrder...), 9, 1)
	for _, tc := range []struct{ query, want string }{
		// D11: case-insensitive substring, trimmed; % and _ are literal.
		{"search=" + url.QueryEscape(" ZOOLOGY "), page(items(100, 101, 103), 3, 1)},
		{"search=100%25", page(items(130, 131), 2, 1)},
		{"search=%25", page(items(130, 131), 2, 1)},                                                  // only Algebra 100% has a %
		{"search=_", page(items(120), 1, 1)},                                                         // only Biology_Lab has a _
		{"search=gy_", page(items(120), 1, 1)},                                                       // as a wildcard it would match "biology basics"
		{"search=" + url.QueryEscape(`\`), emptyPage},                                                // no name has a backslash
		{"search=%20%20&" + f.handOnly(), all},                                                       // blank: no filter
		{"search=Secret", emptyPage},                                                                 // not public
		{"start=" + f.mdy(10) + "&" + f.handOnly(), page(items(100, 101, 150, 103, 120, 141), 6, 1)}, // start_date >= (excludes past Online too)
		{"start=" + f.mdyShort(10) + "&" + f.handOnly(), page(items(100, 101, 150, 103, 120, 141), 6, 1)},
		{"end=" + f.mdy(1), page(items(130, 140, 131), 3, 1)}, // start_date <=
		{"start=" + f.mdy(10) + "&end=" + f.mdy(15), page(items(100, 101, 150, 103), 4, 1)},
		{"date=" + f.mdy(11), page(items(131, 100, 101), 3, 1)}, // start <= date <= end
		{"date=" + f.mdy(-30), page(items(130), 1, 1)},          // 110 runs then but is past and in person
		// D8: "invalid date" in any case is ignored, and so is an empty value.
		{"start=invalid%20date&" + f.handOnly(), all},
		{"start=Invalid%20date&date=INVALID+DATE&" + f.handOnly(), all},
		{"start=&date=&" + f.handOnly(), all},
		{"foo=bar&" + f.handOnly(), all}, // D16
	} {
		f.wantJSON(t, f.get(t, "/public/classes?"+tc.query), tc.want)
	}
}

// testPagination checks limit and page (D9, D10) on Yoga's 51 classes.
func (f *fixture) testPagination(t *testing.T) {
	const yogaClasses = "/public/course/18/classes"
	for _, tc := range []struct{ query, want string }{
		{"", page(yogas(0, 25), 51, 3)},
		{"?limit=0", page(yogas(0, 25), 51, 3)},  // below 1: 25
		{"?limit=-4", page(yogas(0, 25), 51, 3)}, // below 1: 25
		{"?limit=50", page(yogas(0, 50), 51, 2)},
		{"?limit=51", page(yogas(0, 50), 51, 2)}, // above 50: 50, so two pages
		{"?limit=51&page=2", page(yogas(50, 51), 51, 2)},
		{"?limit=10&page=0", page(yogas(0, 10), 51, 6)}, // below 1: page 1
		{"?limit=10&page=-2", page(yogas(0, 10), 51, 6)},
		{"?limit=10&page=6", page(yogas(50, 51), 51, 6)},
		{"?limit=10&page=7", page(nil, 51, 6)}, // past the last: the true total (D9)
		{"?page=4", page(nil, 51, 3)},
		{"?page=99999999999999999999", page(nil, 51, 3)},
		{"?limit=4&page=3&search=yoga", page(yogas(8, 12), 51, 13)},
	} {
		f.wantJSON(t, f.get(t, yogaClasses+tc.query), tc.want)
	}
	// The pages of a limit concatenate to the whole ordered result (D12).
	hand := "/public/classes?limit=4&" + f.handOnly()
	f.wantJSON(t, f.get(t, hand+"&page=1"), page(items(130, 140, 131, 100), 9, 3))
	f.wantJSON(t, f.get(t, hand+"&page=2"), page(items(101, 150, 103, 120), 9, 3))
	f.wantJSON(t, f.get(t, hand+"&page=3"), page(items(141), 9, 3))
	f.wantJSON(t, f.get(t, hand+"&page=4"), page(nil, 9, 3))

	for _, q := range []string{"limit=abc", "limit=1.5", "page=abc", "page=1.5", "page=2x"} {
		r := f.get(t, "/public/classes?"+q)
		wantError(t, r, http.StatusBadRequest, "")
		name, _, _ := strings.Cut(q, "=")
		if msg := message(t, r); !strings.Contains(msg, name) {
			t.Errorf("GET /public/classes?%s: message %q does not name %s (D9)", q, msg, name)
		}
	}
}

// testSearchErrors checks that an unparseable date is a 500 whose message names the
// parameter and the format (spec 4.3 rule 5, D7, D8).
func (f *fixture) testSearchErrors(t *testing.T) {
	for _, tc := range []struct{ param, value string }{
		{"start", "02-30-2027"}, // not on the calendar (D7)
		{"date", "tomorrow"},
		{"end", "2027-01-31"}, // ISO, not MM-DD-YYYY
		{"start", "13-01-2027"},
		{"date", "1-5-27"},
	} {
		for _, path := range []string{"/public/classes", "/public/course/10/classes"} {
			r := f.get(t, path+"?"+tc.param+"="+url.QueryEscape(tc.value))
			wantError(t, r, http.StatusInternalServerError, "")
			msg := message(t, r)
			for _, p := range []string{"start", "end", "date"} {
				named := regexp.MustCompile(`\b` + p + `\b`).MatchString(msg)
				if p == tc.param && !named || p != tc.param && p != "date" && named {
					t.Errorf("GET %s?%s=%s: message %q should name %s and no other parameter (D8)", path, tc.param, tc.value, msg, tc.param)
				}
			}
			if !strings.Contains(msg, "MM-DD-YYYY") {
				t.Errorf("GET %s?%s=%s: message %q does not give the format MM-DD-YYYY (D8)", path, tc.param, tc.value, msg)
			}
		}
	}
}

// testCourseClasses checks GET /public/course/{id}/classes (spec 4.4, D15).
func (f *fixture) testCourseClasses(t *testing.T) {
	for _, tc := range []struct{ id, query, want string }{
		{"10", "", page(items(100, 101, 103), 3, 1)}, // 102 is not public
		{"12", "", page(items(120), 1, 1)},           // 121 not public, 122 past
		{"13", "", page(items(130, 131), 2, 1)},      // Online: the past class too (D4)
		{"11", "", emptyPage},                        // only a past class
		{"16", "", emptyPage},                        // no class
		{"20", "", emptyPage},                        // not public: empty, not 404 (4.4)
		{"999", "", emptyPage},                       // unknown (D15)
		{"10", "?search=biology", emptyPage},         // filters combine with the course
		{"10", "?date=" + f.mdy(11), page(items(100, 101), 2, 1)},
	} {
		f.wantJSON(t, f.get(t, "/public/course/"+tc.id+"/classes"+tc.query), tc.want)
	}
	for _, id := range []string{"abc", "-1", "1.5", "0"} {
		wantError(t, f.get(t, "/public/course/"+id+"/classes"), http.StatusNotFound, "")
	}
}

// message returns the message of an error body.
func message(t *testing.T, r interface{ JSON(testing.TB) any }) string {
	t.Helper()
	m, _ := r.JSON(t).(map[string]any)
	s, _ := m["message"].(string)
	return s
}
