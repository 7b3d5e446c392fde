package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// The soak's traffic asks for the lists, the courses (and their classes by course id) and
// the classes of the snapshot current at start, each in route order.
func TestNewCatalogue(t *testing.T) {
	m := &snapshot.Manifest{ID: "s1", Documents: map[string]snapshot.Entry{
		"/public/courses": {}, "/public/popular": {}, "/public/courses?type=Online": {},
		"/public/course/12": {}, "/public/course/3": {},
		"/public/class/7": {},
	}}
	c, err := newCatalogue(m)
	if err != nil {
		t.Fatal(err)
	}
	want := &catalogue{
		lists:     []string{"/public/courses", "/public/courses?type=Online", "/public/popular"},
		courses:   []string{"/public/course/12", "/public/course/3"},
		classes:   []string{"/public/class/7"},
		courseIDs: []string{"12", "3"},
	}
	if diff := cmp.Diff(want, c, cmp.AllowUnexported(catalogue{})); diff != "" {
		t.Errorf("newCatalogue mismatch (-want +got):\n%s", diff)
	}
	delete(m.Documents, "/public/class/7")
	if _, err := newCatalogue(m); err == nil {
		t.Error("newCatalogue of a snapshot without classes: no error")
	}
}
