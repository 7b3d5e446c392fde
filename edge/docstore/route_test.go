package docstore

import (
	"testing"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// routeKind indexes a course or class by its id only when the route is written exactly as
// snapshot.CourseRoute or ClassRoute writes it: any other spelling is a list route, which
// no request reaches (D13 names every list route).
func TestRouteKind(t *testing.T) {
	tests := []struct {
		route string
		kind  int
		id    int64
	}{
		{snapshot.CourseRoute(7), courseRoute, 7},
		{snapshot.ClassRoute(21), classRoute, 21},
		{snapshot.ClassRoute(1<<53 - 1), classRoute, 1<<53 - 1},
		{"/public/course/0", listRoute, 0},
		{"/public/course/-1", listRoute, 0},
		{"/public/course/07", listRoute, 0},
		{"/public/class/+7", listRoute, 0},
		{"/public/class/", listRoute, 0},
		{"/public/course/7/x", listRoute, 0},
		{"/public/course/9223372036854775808", listRoute, 0},
		{snapshot.RouteCourses, listRoute, 0},
		{snapshot.RoutePopular, listRoute, 0},
	}
	for _, tt := range tests {
		if kind, id := routeKind(tt.route); kind != tt.kind || id != tt.id {
			t.Errorf("routeKind(%q) = %d, %d, want %d, %d", tt.route, kind, id, tt.kind, tt.id)
		}
	}
}
