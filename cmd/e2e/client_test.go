package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/trainingco/catalogue/cmd/internal/apiclient"
	"github.com/trainingco/catalogue/cmd/internal/cmdtest"
)

// testGeneratedClient calls every endpoint through the Go client that oapi-codegen
// generates from edge/openapi.json (cmd/internal/apiclient), as a partner's Go program
// would. Each response must decode into the generated types, hold the values the dataset
// gives, and encode back to the very JSON the edge sent, so that no field is lost or
// retyped on the way (a null, a string id, the "online" location).
func (f *fixture) testGeneratedClient(t *testing.T) {
	ctx := t.Context()
	c := f.apiClient(t, base, f.token)

	courses, err := c.ListCoursesWithResponse(ctx, &apiclient.ListCoursesParams{
		TypeBrackets: &apiclient.TypeBrackets{apiclient.CourseTypeOnline, apiclient.CourseTypeBlended}})
	if ok(t, "listCourses", courses.StatusCode(), courses.Body, courses.JSON200, err) {
		f.wantJSON(t, &cmdtest.Response{Response: courses.HTTPResponse, Data: courses.Body}, coursesOnlineBlended)
		first := courses.JSON200.Data[0]
		if first.Id != 13 || first.UpcomingClass == nil || first.UpcomingClass.Start.Format(time.DateOnly) != f.ymd(1) ||
			first.UpcomingClass.City != nil || courses.JSON200.Data[1].UpcomingClass != nil {
			t.Errorf("listCourses: data[0] = %+v, data[1].upcoming_class = %v; want course 13 starting %s in no city, then null",
				first, courses.JSON200.Data[1].UpcomingClass, f.ymd(1))
		}
	}

	popular, err := c.ListPopularCoursesWithResponse(ctx)
	if ok(t, "listPopularCourses", popular.StatusCode(), popular.Body, popular.JSON200, err) {
		p := *popular.JSON200
		if len(p) != 3 || p[0].UpcomingClass == nil || p[0].UpcomingClass.Id != 100 || p[2].UpcomingClass != nil {
			t.Errorf("listPopularCourses: %+v; want 3 courses, the first's next class 100, the last's null", p)
		}
	}

	f.clientSearch(t, c)
	f.clientCourse(t, c)
	f.clientClass(t, c)
	f.clientErrors(t, c)

	doc, err := c.GetOpenAPIWithResponse(ctx)
	if ok(t, "getOpenAPI", doc.StatusCode(), doc.Body, doc.JSON200, err) && doc.JSON200.Openapi != "3.1.0" {
		t.Errorf("getOpenAPI: openapi %q, want 3.1.0", doc.JSON200.Openapi)
	}
}

// clientSearch pages through the Yoga classes (51 from @+100 on) with both searches, past
// the last page too, and checks the string ids of the results (D29).
func (f *fixture) clientSearch(t *testing.T, c *apiclient.ClientWithResponses) {
	ctx := t.Context()
	search, limit := "yoga", 10
	for page, wantIDs := range map[int][]string{6: {"1050"}, 7: {}} {
		s, err := c.SearchClassesWithResponse(ctx, &apiclient.SearchClassesParams{
			Search: &search, Start: ptr(f.mdy(100)), Limit: &limit, Page: &page})
		if !ok(t, "searchClasses", s.StatusCode(), s.Body, s.JSON200, err) {
			continue
		}
		var ids []string
		for _, item := range s.JSON200.Data {
			ids = append(ids, item.Id)
		}
		if s.JSON200.Total != 51 || s.JSON200.LastPage != 6 || len(ids) != len(wantIDs) || (len(ids) == 1 && ids[0] != wantIDs[0]) {
			t.Errorf("searchClasses page %d: ids %q, total %d, last_page %d; want %q, 51, 6", page, ids, s.JSON200.Total, s.JSON200.LastPage, wantIDs)
		}
	}
	s, err := c.SearchCourseClassesWithResponse(ctx, 13, &apiclient.SearchCourseClassesParams{})
	if ok(t, "searchCourseClasses", s.StatusCode(), s.Body, s.JSON200, err) {
		d := s.JSON200.Data
		if len(d) != 2 || d[0].Id != "130" || d[0].CourseId != "13" || d[0].Schedule != nil || d[1].AvailableSeats == nil || *d[1].AvailableSeats != 0 || !d[1].Full {
			t.Errorf("searchCourseClasses 13: %+v; want 130 (schedule null), then 131 full with 0 seats", d)
		}
	}
}

// clientCourse reads a course with HTML in its description and one without (D34).
func (f *fixture) clientCourse(t *testing.T, c *apiclient.ClientWithResponses) {
	ctx := t.Context()
	html, err := c.GetCourseWithResponse(ctx, 10)
	if ok(t, "getCourse 10", html.StatusCode(), html.Body, html.JSON200, err) &&
		(html.JSON200.Description == nil || *html.JSON200.Description != "<p>Animals &amp; <b>habitats</b></p>") {
		t.Errorf("getCourse 10: description %v, want the staff's HTML unchanged", html.JSON200.Description)
	}
	none, err := c.GetCourseWithResponse(ctx, 14)
	if ok(t, "getCourse 14", none.StatusCode(), none.Body, none.JSON200, err) &&
		(none.JSON200.Description != nil || none.JSON200.Type != apiclient.CourseTypeBlended) {
		t.Errorf("getCourse 14: %+v, want a Blended course with a null description", none.JSON200)
	}
}

// clientClass reads a class in a room, one with no room yet and an online one: the
// location is an object or the string "online" (D19), and a caller tells them apart with
// the generated accessors.
func (f *fixture) clientClass(t *testing.T, c *apiclient.ClientWithResponses) {
	ctx := t.Context()
	for _, tc := range []struct {
		id     int64
		city   *string // nil: no room yet (every field null)
		online bool
	}{{100, ptr("Springfield"), false}, {120, nil, false}, {131, nil, true}} {
		r, err := c.GetClassWithResponse(ctx, tc.id)
		if !ok(t, "getClass", r.StatusCode(), r.Body, r.JSON200, err) {
			continue
		}
		d := r.JSON200
		if d.RegistrationId != nil || d.PrevRegTestDate != nil {
			t.Errorf("getClass %d: registration_id %v, prev_reg_test_date %v; want null with an API token", tc.id, d.RegistrationId, d.PrevRegTestDate)
		}
		online, onlineErr := d.Location.AsOnlineLocation()
		loc, locErr := d.Location.AsLocation()
		switch {
		case tc.online && (onlineErr != nil || online != apiclient.OnlineLocationOnline || locErr == nil):
			t.Errorf("getClass %d: location %s; want the string online", tc.id, mustJSON(t, d.Location))
		case !tc.online && (locErr != nil || onlineErr == nil || !equalPtr(loc.City, tc.city)):
			t.Errorf("getClass %d: location %s (%v); want an object in city %v", tc.id, mustJSON(t, d.Location), locErr, tc.city)
		}
	}
}

// clientErrors checks that error responses decode into the generated error types, with the
// bodies of D22 and D24.
func (f *fixture) clientErrors(t *testing.T, c *apiclient.ClientWithResponses) {
	ctx := t.Context()
	anon, err := f.apiClient(t, base, "").GetCourseWithResponse(ctx, 10)
	if err != nil || anon.JSON401 == nil || anon.JSON401.Message != "Unauthenticated." {
		t.Errorf("getCourse without a token: %v, %d %s; want 401 Unauthenticated.", err, anon.StatusCode(), anon.Body)
	}
	missing, err := c.GetClassWithResponse(ctx, 102)
	if err != nil || missing.JSON404 == nil || missing.JSON404.Message == "" {
		t.Errorf("getClass 102: %v, %d %s; want 404 with a message", err, missing.StatusCode(), missing.Body)
	}
	badType, err := c.ListCoursesWithResponse(ctx, &apiclient.ListCoursesParams{Type: &apiclient.TypeQuery{"Webinar"}})
	if err != nil || badType.JSON400 == nil || badType.JSON400.Message == "" {
		t.Errorf("listCourses type=Webinar: %v, %d %s; want 400 with a message", err, badType.StatusCode(), badType.Body)
	}
	badDate, err := c.SearchClassesWithResponse(ctx, &apiclient.SearchClassesParams{Date: ptr("2027-01-31")})
	if err != nil || badDate.JSON500 == nil || badDate.JSON500.Message == "" {
		t.Errorf("searchClasses date=2027-01-31 (YYYY-MM-DD): %v, %d %s; want 500 with a message (D8)", err, badDate.StatusCode(), badDate.Body)
	}
}

// apiClient returns a generated client of the fixture's edge for server base (the base
// path, or "" for the root), sending token when it is not empty.
func (f *fixture) apiClient(t *testing.T, base, token string) *apiclient.ClientWithResponses {
	t.Helper()
	var opts []apiclient.ClientOption
	if token != "" {
		opts = append(opts, apiclient.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+token)
			return nil
		}))
	}
	c, err := apiclient.NewClientWithResponses(f.edge.URL+base, opts...)
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	return c
}

// ok reports whether a generated call succeeded with 200 and a decoded body, and checks
// that the decoded value encodes back to the JSON the edge sent.
func ok[T any](t *testing.T, op string, status int, body []byte, decoded *T, err error) bool {
	t.Helper()
	if err != nil || status != http.StatusOK || decoded == nil {
		t.Errorf("%s: error %v, status %d, decoded %v; want 200 decoded\n%s", op, err, status, decoded != nil, body)
		return false
	}
	if diff := jsonDiff(t, string(body), mustJSON(t, decoded)); diff != "" {
		t.Errorf("%s: the generated types do not hold the response as sent (-sent +re-encoded):\n%s", op, diff)
	}
	return true
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode %T: %v", v, err)
	}
	return string(b)
}

func ptr[T any](v T) *T { return &v }

func equalPtr[T comparable](a, b *T) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
