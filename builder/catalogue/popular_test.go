package catalogue

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// TestRenderPopularTies covers D17 beyond the fixture: ties on score, courses that score 0,
// fewer than three public courses, and an empty catalogue.
func TestRenderPopularTies(t *testing.T) {
	tests := []struct {
		name string
		sql  string
		want string
	}{{
		// Four courses tie on one registration each (past classes, so no upcoming class):
		// "Alpha" and "alpha" are equal ignoring case, so the lower id goes first (D17 breaks
		// ties by id, unlike D14's list, which compares the exact name first); the two "beta"
		// by id.
		// "Aardvark" would come first by name but scores 0; "Zeta" scores most but is not public.
		name: "ties",
		sql: `
INSERT INTO courses (id, name, type, is_public) VALUES
    (4, 'beta', 'Online', TRUE), (1, 'alpha', 'Online', TRUE), (2, 'beta', 'Online', TRUE),
    (3, 'Alpha', 'Online', TRUE), (5, 'Aardvark', 'Online', TRUE), (6, 'Zeta', 'Online', FALSE);
INSERT INTO classes (id, course_id, start_date, end_date, cost, is_public) VALUES
    (14, 4, '2027-01-01', '2027-01-02', 10, TRUE), (11, 1, '2027-01-01', '2027-01-02', 10, TRUE),
    (12, 2, '2027-01-01', '2027-01-02', 10, TRUE), (13, 3, '2027-01-01', '2027-01-02', 10, TRUE),
    (16, 6, '2027-01-01', '2027-01-02', 10, TRUE);
INSERT INTO registrations (class_id) VALUES (14), (11), (12), (13), (16), (16), (16), (16);`,
		want: `[{"id":1,"name":"alpha","upcoming_class":null},{"id":3,"name":"Alpha","upcoming_class":null},{"id":2,"name":"beta","upcoming_class":null}]`,
	}, {
		// One public course without classes or registrations still ranks; the non-public
		// course with registrations does not.
		name: "fewer than three",
		sql: `
INSERT INTO courses (id, name, type, is_public) VALUES (1, 'Only', 'Blended', TRUE), (2, 'Hidden', 'Online', FALSE);
INSERT INTO classes (id, course_id, start_date, end_date, cost, is_public) VALUES (20, 2, '2027-04-01', '2027-04-02', 10, TRUE);
INSERT INTO registrations (class_id) VALUES (20), (20), (20), (20);`,
		want: `[{"id":1,"name":"Only","upcoming_class":null}]`,
	}, {
		name: "empty catalogue",
		want: `[]`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := render(t, readDB(t, tt.sql))
			got, ok := r.Docs[snapshot.RoutePopular]
			if !ok {
				t.Fatalf("Render(%s): no popular document", tt.name)
			}
			if diff := cmp.Diff(decode(t, "want", []byte(tt.want)), decode(t, "popular", got)); diff != "" {
				t.Errorf("Render(%q) popular mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// TestRenderEmpty: an empty catalogue still has its eight list documents, each empty rather
// than null.
func TestRenderEmpty(t *testing.T) {
	r := render(t, readDB(t, ""))
	want := map[string]string{snapshot.RoutePopular: `[]`}
	for _, types := range [][]string{nil, {"Online"}, {"Brick and Mortar"}, {"Blended"},
		{"Online", "Brick and Mortar"}, {"Online", "Blended"}, {"Brick and Mortar", "Blended"}} {
		want[snapshot.CoursesRoute(types)] = `{"data":[]}`
	}
	checkDocs(t, r, want)
	for route, doc := range r.Docs {
		if w := want[route]; string(doc) != w {
			t.Errorf("Render: %q is %s, want exactly %s", route, doc, w)
		}
	}
	if diff := cmp.Diff(snapshot.Counts{Documents: 8}, r.Counts); diff != "" {
		t.Errorf("Render: counts mismatch (-want +got):\n%s", diff)
	}
}
