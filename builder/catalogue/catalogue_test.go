package catalogue

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// today is the fixed "today" of every test: classes starting on 2027-03-10 are upcoming.
var today = time.Date(2027, 3, 10, 0, 0, 0, 0, time.UTC)

// readDB loads sql into a fresh database and reads it the way the builder does: through the
// default templates inside a read-only REPEATABLE READ transaction.
func readDB(t *testing.T, sql string) *Data {
	t.Helper()
	dbURL := testkit.NewMigratedDatabase(t)
	if sql != "" {
		testkit.Exec(t, dbURL, sql)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	defer tx.Rollback(ctx)
	d, err := Read(ctx, tx, templates.MustDefault())
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return d
}

// render renders d for today and fails the test on error.
func render(t *testing.T, d *Data) *Rendered {
	t.Helper()
	r, err := Render(d, today)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return r
}

// decode parses a JSON document so that documents compare by value.
func decode(t *testing.T, what string, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %s: %v\n%s", what, err, b)
	}
	return v
}

// routes returns the sorted routes of r.
func routes(r *Rendered) []string {
	var got []string
	for k := range r.Docs {
		got = append(got, k)
	}
	slices.Sort(got)
	return got
}

// checkDocs compares every document of r with want, a route -> JSON table written by hand.
// r must hold exactly the routes of want.
func checkDocs(t *testing.T, r *Rendered, want map[string]string) {
	t.Helper()
	var wantRoutes []string
	for k := range want {
		wantRoutes = append(wantRoutes, k)
	}
	slices.Sort(wantRoutes)
	if diff := cmp.Diff(wantRoutes, routes(r)); diff != "" {
		t.Errorf("routes mismatch (-want +got):\n%s", diff)
	}
	for route, w := range want {
		got, ok := r.Docs[route]
		if !ok {
			continue // reported above
		}
		if diff := cmp.Diff(decode(t, "want "+route, []byte(w)), decode(t, route, got)); diff != "" {
			t.Errorf("Render: document %q mismatch (-want +got):\n%s", route, diff)
		}
	}
}

// reversed returns a copy of d with every slice in reverse order.
func reversed(d *Data) *Data {
	r := &Data{
		Courses: slices.Clone(d.Courses),
		Classes: slices.Clone(d.Classes),
		Scores:  slices.Clone(d.Scores),
	}
	slices.Reverse(r.Courses)
	slices.Reverse(r.Classes)
	slices.Reverse(r.Scores)
	return r
}

func TestRenderDeterministic(t *testing.T) {
	d := readDB(t, fixture)
	first := render(t, d)
	for name, again := range map[string]*Data{"same data": d, "reversed rows": reversed(d)} {
		got := render(t, again)
		if diff := cmp.Diff(routes(first), routes(got)); diff != "" {
			t.Errorf("Render(%s): routes mismatch (-want +got):\n%s", name, diff)
		}
		for route, want := range first.Docs {
			if string(got.Docs[route]) != string(want) {
				t.Errorf("Render(%s): %s differs:\nfirst: %s\nagain: %s", name, route, want, got.Docs[route])
			}
		}
	}
}

func TestRenderRejectsInconsistentData(t *testing.T) {
	course := Course{ID: 1, Name: "A", Type: "Online"}
	class := Class{ID: 10, CourseID: 1, Start: today, End: today, Cost: 1}
	tests := []struct {
		name string
		data Data
	}{
		{"class of a course that is not public", Data{
			Courses: []Course{course},
			Classes: []Class{class, {ID: 11, CourseID: 2, Start: today, End: today}},
		}},
		{"score of a course that is not public", Data{
			Courses: []Course{course},
			Scores:  []Score{{CourseID: 2, Registrations: 5}},
		}},
		{"course twice", Data{Courses: []Course{course, course}}},
		{"class twice", Data{Courses: []Course{course}, Classes: []Class{class, class}}},
	}
	for _, tt := range tests {
		if _, err := Render(&tt.data, today); err == nil {
			t.Errorf("Render(%s): got no error, want one", tt.name)
		}
	}
}

// TestReadNamesTheRowItCannotRead: a provider's mapping that lets a public class through
// without an end date fails the build (nothing is published), and the error names that
// class, so that the provider can find it among thousands, and points at builder doctor.
func TestReadNamesTheRowItCannotRead(t *testing.T) {
	dbURL := testkit.NewMigratedDatabase(t)
	testkit.Exec(t, dbURL, `ALTER TABLE classes ALTER end_date DROP NOT NULL;
		INSERT INTO courses (id, name, type, is_public) VALUES (1, 'Welding', 'Online', true);
		INSERT INTO classes (id, course_id, start_date, end_date, cost, is_public) VALUES
			(7, 1, '2027-04-01', '2027-04-02', 100, true), (8, 1, '2027-04-03', NULL, 100, true)`)
	ctx := context.Background()
	conn := testkit.Connect(t, dbURL)
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	_, err = Read(ctx, tx, templates.MustDefault())
	for _, want := range []string{"read classes.sql: the row whose id is 8: ", "end_date", "builder doctor"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Read: %v, want an error saying %q", err, want)
		}
	}
}
