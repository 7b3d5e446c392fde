package snapshot_test

import (
	"errors"
	"maps"
	"testing"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// wholeManifest is the manifest of a catalogue of two courses and three classes: the eight
// routes every snapshot has (seven course lists and popular), two courses, three classes.
func wholeManifest(id string) *snapshot.Manifest {
	e := snapshot.Entry{Hash: snapshot.Hash([]byte("{}")), Size: 2}
	m := &snapshot.Manifest{ID: id, Header: snapshot.Header{Counts: snapshot.Counts{Courses: 2, Classes: 3, Documents: 13}},
		Documents: map[string]snapshot.Entry{}}
	for _, r := range []string{"/public/courses", "/public/courses?type=Blended", "/public/courses?type=Online",
		"/public/courses?type=Brick and Mortar", "/public/courses?type=Blended&type=Brick and Mortar",
		"/public/courses?type=Blended&type=Online", "/public/courses?type=Brick and Mortar&type=Online",
		"/public/popular", "/public/course/1", "/public/course/2",
		"/public/class/1", "/public/class/2", "/public/class/3"} {
		m.Documents[r] = e
	}
	return m
}

// TestManifestCheck: a manifest whose documents do not match its counts, or that lacks a
// route every snapshot has, is refused by Check; a whole one, and that of a catalogue
// without courses, pass.
func TestManifestCheck(t *testing.T) {
	for _, tt := range []struct {
		name  string
		wreck func(m *snapshot.Manifest)
	}{
		{"no documents", func(m *snapshot.Manifest) { m.Documents = map[string]snapshot.Entry{} }},
		{"documents null", func(m *snapshot.Manifest) { m.Documents = nil }},
		{"counts missing", func(m *snapshot.Manifest) { m.Counts = snapshot.Counts{} }},
		{"no classes", func(m *snapshot.Manifest) {
			maps.DeleteFunc(m.Documents, func(r string, _ snapshot.Entry) bool { return snapshot.IsClassRoute(r) })
		}},
		{"a class short", func(m *snapshot.Manifest) { delete(m.Documents, "/public/class/3") }},
		{"a course short", func(m *snapshot.Manifest) {
			delete(m.Documents, "/public/course/2")
			m.Counts.Documents--
		}},
		{"a class more than counted", func(m *snapshot.Manifest) {
			m.Documents["/public/class/4"] = m.Documents["/public/class/1"]
			m.Counts.Documents++
		}},
		{"no course list", func(m *snapshot.Manifest) {
			delete(m.Documents, "/public/courses")
			m.Counts.Documents--
		}},
		{"no popular", func(m *snapshot.Manifest) {
			delete(m.Documents, "/public/popular")
			m.Documents["/public/other"] = m.Documents["/public/courses"]
		}},
		{"a type combination missing", func(m *snapshot.Manifest) {
			delete(m.Documents, "/public/courses?type=Blended&type=Online")
			m.Counts.Documents--
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := wholeManifest("s1")
			tt.wreck(m)
			if err := m.Check(); !errors.Is(err, snapshot.ErrInvalidManifest) {
				t.Errorf("Check() = %v, want ErrInvalidManifest", err)
			}
		})
	}
	if err := wholeManifest("s1").Check(); err != nil {
		t.Errorf("Check() of a whole manifest = %v", err)
	}
	empty := wholeManifest("s0") // a catalogue with no public course: the eight lists alone
	maps.DeleteFunc(empty.Documents, func(r string, _ snapshot.Entry) bool {
		return snapshot.IsClassRoute(r) || r == snapshot.CourseRoute(1) || r == snapshot.CourseRoute(2)
	})
	empty.Counts = snapshot.Counts{Documents: 8}
	if err := empty.Check(); err != nil {
		t.Errorf("Check() of an empty catalogue's manifest = %v", err)
	}
}
