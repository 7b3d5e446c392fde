package edge

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"
	_ "time/tzdata" // TestSearchToday needs America/Chicago on machines without zoneinfo

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/config"
)

// The items of searchSeed as the search must render them (spec 4.3, D6, D29), written out
// from the seed's rows.
const (
	item20 = `{"id":"20","course_id":"2","course":"Online Safety","start":"2026-01-10","end":"2026-01-20","type":"Online","city":null,"state":null,"schedule":null,"cost":99,"full":false,"available_seats":null}`
	item12 = `{"id":"12","course_id":"1","course":"Welding Basics","start":"2027-03-09","end":"2027-03-11","type":"Brick and Mortar","city":"Springfield","state":"IL","schedule":null,"cost":450,"full":false,"available_seats":9}`
	item11 = `{"id":"11","course_id":"1","course":"Welding Basics","start":"2027-03-10","end":"2027-03-12","type":"Brick and Mortar","city":null,"state":null,"schedule":null,"cost":450,"full":true,"available_seats":0}`
	item9  = `{"id":"9","course_id":"1","course":"Welding Basics","start":"2027-04-01","end":"2027-04-01","type":"Brick and Mortar","city":"Springfield","state":"IL","schedule":null,"cost":400,"full":true,"available_seats":0}`
	item10 = `{"id":"10","course_id":"1","course":"Welding Basics","start":"2027-04-01","end":"2027-04-03","type":"Brick and Mortar","city":"Springfield","state":"IL","schedule":null,"cost":500,"full":false,"available_seats":7}`
	item13 = `{"id":"13","course_id":"1","course":"Welding Basics","start":"2027-04-01","end":"2027-04-02","type":"Brick and Mortar","city":"Springfield","state":"IL","schedule":null,"cost":480,"full":false,"available_seats":null}`
	item21 = `{"id":"21","course_id":"2","course":"Online Safety","start":"2027-06-01","end":"2027-06-30","type":"Online","city":null,"state":null,"schedule":null,"cost":120,"full":false,"available_seats":100}`
	item30 = `{"id":"30","course_id":"3","course":"100% Cotton_Weaving\\Basics","start":"2027-07-01","end":"2027-07-05","type":"Blended","city":"Springfield","state":"IL","schedule":null,"cost":300,"full":true,"available_seats":0}`
	item50 = `{"id":"50","course_id":"5","course":"100 Percent Cotton Weaving","start":"2027-07-02","end":"2027-07-02","type":"Brick and Mortar","city":"Springfield","state":"IL","schedule":null,"cost":200,"full":false,"available_seats":null}`
	item60 = `{"id":"60","course_id":"6","course":"Advanced \u003cWeavingBasics\u003e \u0026 More","start":"2027-08-01","end":"2027-08-03","type":"Blended","city":null,"state":null,"schedule":null,"cost":250,"full":false,"available_seats":7}`
)

const (
	msgStart = "The start parameter must be a date in the format MM-DD-YYYY (for example 01-31-2027)."
	msgEnd   = "The end parameter must be a date in the format MM-DD-YYYY (for example 01-31-2027)."
	msgDate  = "The date parameter must be a date in the format MM-DD-YYYY (for example 01-31-2027)."
	msgLimit = "The limit parameter must be an integer."
	msgPage  = "The page parameter must be an integer."
)

func TestSearch(t *testing.T) { eachSearchPath(t, searchSeed, testSearch) }

func testSearch(t *testing.T, env *searchEnv) {
	all := page(9, 1, item20, item11, item9, item10, item13, item21, item30, item50, item60)
	empty := page(0, 1)
	const classes = "/api/v2/public/classes"
	tests := []struct {
		target string
		want   response
	}{
		// Order by start then id; past in-person classes out, past online in; hidden rows out.
		{classes, okSearch(all)},
		{classes + "?foo=bar&type=Online&limit=25", okSearch(all)}, // unknown parameters ignored (D16)

		// Pages (D9, D10): ties broken by id across page boundaries.
		{classes + "?limit=2", okSearch(page(9, 5, item20, item11))},
		{classes + "?limit=2&page=2", okSearch(page(9, 5, item9, item10))},
		{classes + "?limit=2&page=3", okSearch(page(9, 5, item13, item21))},
		{classes + "?limit=2&page=5", okSearch(page(9, 5, item60))},
		{classes + "?limit=2&page=6", okSearch(page(9, 5))}, // past the last: the true total
		{classes + "?page=2", okSearch(page(9, 1))},
		{classes + "?limit=9", okSearch(all)},
		{classes + "?limit=8&page=2", okSearch(page(9, 2, item60))},
		{classes + "?page=99999999999999999999", okSearch(page(9, 1))},
		{classes + "?page=0&limit=-3", okSearch(all)},
		{classes + "?page=-1&limit=0", okSearch(all)},
		{classes + "?limit=51", okSearch(all)},
		{classes + "?limit=%207%20&page=%202", okSearch(page(9, 2, item50, item60))},
		{classes + "?limit=abc", errSearch(400, msgLimit)},
		{classes + "?limit=1.5", errSearch(400, msgLimit)},
		{classes + "?page=abc", errSearch(400, msgPage)},

		// Date filters (4.3, D7, D8) and their boundaries.
		{classes + "?start=4-1-2027", okSearch(page(7, 1, item9, item10, item13, item21, item30, item50, item60))},
		{classes + "?start=04-02-2027", okSearch(page(4, 1, item21, item30, item50, item60))},
		{classes + "?end=4-1-2027", okSearch(page(5, 1, item20, item11, item9, item10, item13))},
		{classes + "?end=03-31-2027", okSearch(page(2, 1, item20, item11))},
		{classes + "?start=4-1-2027&end=07-01-2027", okSearch(page(5, 1, item9, item10, item13, item21, item30))},
		{classes + "?date=4-2-2027", okSearch(page(2, 1, item10, item13))},
		{classes + "?date=04-01-2027", okSearch(page(3, 1, item9, item10, item13))},
		{classes + "?date=1-15-2026", okSearch(page(1, 1, item20))}, // a past online class running then
		{classes + "?date=06-30-2027", okSearch(page(1, 1, item21))},
		{classes + "?date=03-09-2027", okSearch(empty)}, // 12 runs then, but started before today
		{classes + "?start=invalid+date&end=Invalid+Date&date=INVALID%20DATE", okSearch(all)},
		{classes + "?start=&end=&date=", okSearch(all)},
		{classes + "?start=02-30-2027", errSearch(500, msgStart)},
		{classes + "?date=tomorrow", errSearch(500, msgDate)},
		{classes + "?start=%2001-31-2027", errSearch(500, msgStart)}, // only search is trimmed (D11)
		{classes + "?date=1-5-2027%20", errSearch(500, msgDate)},
		{classes + "?start=+", errSearch(500, msgStart)},
		{classes + "?end=2027-04-01", errSearch(500, msgEnd)},
		{classes + "?start=13-01-2027&limit=abc", errSearch(500, msgStart)},

		// Course-name search (D11): case-insensitive, %, _ and \ literal, trimmed.
		{classes + "?search=weld", okSearch(page(4, 1, item11, item9, item10, item13))},
		{classes + "?search=WELDING%20BASICS", okSearch(page(4, 1, item11, item9, item10, item13))},
		{classes + "?search=100%25", okSearch(page(1, 1, item30))},
		{classes + "?search=Cotton_Weaving", okSearch(page(1, 1, item30))},
		{classes + "?search=Weaving%5CBasics", okSearch(page(1, 1, item30))},
		{classes + "?search=%25", okSearch(page(1, 1, item30))},
		{classes + "?search=_", okSearch(page(1, 1, item30))},
		{classes + "?search=%5C", okSearch(page(1, 1, item30))},
		{classes + "?search=%3Cweavingbasics%3E+%26", okSearch(page(1, 1, item60))},
		{classes + "?search=%20%20online%20", okSearch(page(2, 1, item20, item21))},
		{classes + "?search=%20%20", okSearch(all)},
		{classes + "?search=secret", okSearch(empty)},
		{classes + "?search=hidden", okSearch(empty)},
		{classes + "?search=weld&date=4-2-2027&limit=1&page=2", okSearch(page(2, 2, item13))},

		// The per-course route (4.4, D15).
		{"/api/v2/public/course/1/classes", okSearch(page(4, 1, item11, item9, item10, item13))},
		{"/api/v2/public/course/1/classes?date=4-2-2027", okSearch(page(2, 1, item10, item13))},
		{"/api/v2/public/course/1/classes?search=online", okSearch(empty)},
		{"/api/v2/public/course/2/classes?limit=1&page=2", okSearch(page(2, 2, item21))},
		{"/api/v2/public/course/4/classes", okSearch(empty)}, // not public: empty, never 404
		{"/api/v2/public/course/7/classes", okSearch(empty)}, // public, no public class
		{"/api/v2/public/course/999/classes", okSearch(empty)},
		{"/api/v2/public/course/9223372036854775807/classes", okSearch(empty)},
		{"/api/v2/public/course/1/classes?start=2-30-2027", errSearch(500, msgStart)},
		{"/api/v2/public/course/abc/classes", errSearch(404, "Course not found.")},
		{"/api/v2/public/course/0/classes", errSearch(404, "Course not found.")},
		{"/api/v2/public/course/-1/classes", errSearch(404, "Course not found.")},
		{"/api/v2/public/course/01/classes", errSearch(404, "Course not found.")},
		{"/api/v2/public/course/1.5/classes", errSearch(404, "Course not found.")},
		// Positive integers past int64 name no course either: the empty result, never 404.
		{"/api/v2/public/course/9223372036854775808/classes", okSearch(empty)},
		{"/api/v2/public/course/99999999999999999999999/classes", okSearch(empty)},
		{"/api/v2/public/course/99999999999999999999999/classes?page=2", okSearch(page(0, 1))},
		{"/api/v2/public/course/99999999999999999999999/classes?limit=x", errSearch(400, "The limit parameter must be an integer.")},
		{"/api/v2/public/course/99999999999999999999999/classes?date=2027-03-10", errSearch(500, msgDate)},
		{"/api/v2/public/course/099999999999999999999999/classes", errSearch(404, "Course not found.")},
		{"/api/v2/public/course/99999999999999999999999x/classes", errSearch(404, "Course not found.")},
	}
	for _, tt := range tests {
		got := env.get(http.MethodGet, tt.target, nil)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("GET %q mismatch (-want +got):\n%s", tt.target, diff)
		}
	}
}

// TestSearchToday checks that "today" is the date in the configured time zone (D1): at
// 02:00 UTC on 2027-03-10 it is still 2027-03-09 in Chicago, so class 12 is upcoming.
func TestSearchToday(t *testing.T) {
	env := newSearchEnv(t, searchSeed, searchOpts{
		now:  time.Date(2027, 3, 10, 2, 0, 0, 0, time.UTC),
		edit: func(c *config.Config) { c.Timezone = "America/Chicago" },
	})
	target := "/api/v2/public/classes?search=weld"
	want := okSearch(page(5, 1, item12, item11, item9, item10, item13))
	if diff := cmp.Diff(want, env.get(http.MethodGet, target, nil)); diff != "" {
		t.Errorf("GET %q mismatch (-want +got):\n%s", target, diff)
	}
}

// TestSearchEncodings checks HEAD and gzip (D25): the same headers and length, no body for
// HEAD, and a gzip body that decompresses to the identity body.
func TestSearchEncodings(t *testing.T) {
	env := newSearchEnv(t, searchSeed, searchOpts{})
	const target = "/api/v2/public/classes?search=weld"
	body := page(4, 1, item11, item9, item10, item13)
	length := strconv.Itoa(len(body))

	head := env.get(http.MethodHead, target, nil)
	wantHead := okSearch("")
	if diff := cmp.Diff(wantHead, head); diff != "" {
		t.Errorf("HEAD %q mismatch (-want +got):\n%s", target, diff)
	}
	lengths := do(env.s.Handler(), http.MethodHead, target, map[string]string{"Authorization": "Bearer " + env.token}, "Content-Length")
	if diff := cmp.Diff(length, lengths.Headers["Content-Length"]); diff != "" {
		t.Errorf("HEAD %q Content-Length mismatch (-want +got):\n%s", target, diff)
	}

	gz := env.get(http.MethodGet, target, map[string]string{"Accept-Encoding": "br, gzip"})
	wantGz := okSearch(gz.Body) // compared below, after decompression
	wantGz.Headers["Content-Encoding"] = "gzip"
	if diff := cmp.Diff(wantGz, gz); diff != "" {
		t.Errorf("GET %q with gzip mismatch (-want +got):\n%s", target, diff)
	}
	zr, err := gzip.NewReader(bytes.NewReader([]byte(gz.Body)))
	if err != nil {
		t.Fatalf("gzip body: %v", err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gzip body: %v", err)
	}
	if diff := cmp.Diff(body, string(plain)); diff != "" {
		t.Errorf("GET %q gzip body mismatch (-want +got):\n%s", target, diff)
	}
	gzLen := do(env.s.Handler(), http.MethodGet, target, map[string]string{"Authorization": "Bearer " + env.token,
		"Accept-Encoding": "gzip"}, "Content-Length")
	if diff := cmp.Diff(strconv.Itoa(len(gz.Body)), gzLen.Headers["Content-Length"]); diff != "" {
		t.Errorf("GET %q gzip Content-Length mismatch (-want +got):\n%s", target, diff)
	}
}
