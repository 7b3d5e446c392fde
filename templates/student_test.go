package templates_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// studentData: course 1 has classes 10, 11 and 12, course 2 has class 20. Student 7 is
// registered twice in class 10 (100 and 103, no test date), in 11 (test 2026-05-01), in 12
// (test 2026-09-01) and in 20 of the other course (test 2027-01-01); student 8 once in 12
// (test 2026-12-01); registration 106 has no student.
const studentData = `
INSERT INTO courses (id, name, type, is_public) VALUES (1, 'Welding', 'Blended', true), (2, 'Rigging', 'Online', true);
INSERT INTO classes (id, course_id, start_date, end_date, cost, is_public) VALUES
    (10, 1, '2026-01-10', '2026-01-12', 100, true), (11, 1, '2026-04-10', '2026-04-12', 100, true),
    (12, 1, '2026-08-10', '2026-08-12', 100, false), (20, 2, '2026-12-01', '2026-12-02', 50, true);
INSERT INTO registrations (id, class_id, student_id, test_date) VALUES
    (103, 10, 7, NULL), (100, 10, 7, NULL), (101, 11, 7, '2026-05-01'), (102, 12, 7, '2026-09-01'),
    (104, 20, 7, '2027-01-01'), (105, 12, 8, '2026-12-01'), (106, 11, NULL, '2027-02-02');
`

// studentRow is one answer of student.sql.
type studentRow struct {
	RegistrationID *int64
	PrevTestDate   *string
}

func id(n int64) *int64     { return &n }
func date(s string) *string { return &s }

// TestStudentQuery checks student.sql (D32) against answers worked out by hand from
// studentData.
func TestStudentQuery(t *testing.T) {
	db := testkit.NewMigratedDatabase(t)
	testkit.Exec(t, db, studentData)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	q := templates.MustDefault().SQL(templates.Student)
	tests := []struct {
		name          string
		student       string
		class, course int64
		want          studentRow
	}{
		{"the lowest of two registrations; latest test of the course's other classes", "7", 10, 1, studentRow{id(100), date("2026-09-01")}},
		{"the other classes' tests, not this class's", "7", 11, 1, studentRow{id(101), date("2026-09-01")}},
		{"a non-public class counts like any other", "7", 12, 1, studentRow{id(102), date("2026-05-01")}},
		{"no other class of the course", "7", 20, 2, studentRow{id(104), nil}},
		{"not registered; another student's tests do not count", "8", 11, 1, studentRow{nil, date("2026-12-01")}},
		{"a student with no registration", "9", 10, 1, studentRow{nil, nil}},
		{"a claim that is not a number", "stu-7", 10, 1, studentRow{nil, nil}},
		{"a claim past bigint", "99999999999999999999", 10, 1, studentRow{nil, nil}},
		{"a claim with spaces", " 7", 10, 1, studentRow{nil, nil}},
		{"an unknown class", "7", 999, 1, studentRow{nil, date("2026-09-01")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got studentRow
			var prev *time.Time
			if err := conn.QueryRow(ctx, q, tt.student, tt.class, tt.course).Scan(&got.RegistrationID, &prev); err != nil {
				t.Fatalf("student.sql(%q, %d, %d): %v", tt.student, tt.class, tt.course, err)
			}
			if prev != nil {
				got.PrevTestDate = date(prev.Format(time.DateOnly))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("student.sql(%q, %d, %d) mismatch (-want +got):\n%s", tt.student, tt.class, tt.course, diff)
			}
		})
	}
}

// TestStudentQueryUsesItsIndex checks that student.sql reads registrations through
// registrations_student_idx, not by a scan of every registration, once the table is big
// enough for the planner to care.
func TestStudentQueryUsesItsIndex(t *testing.T) {
	db := testkit.NewMigratedDatabase(t)
	testkit.Exec(t, db, studentData+`
INSERT INTO registrations (id, class_id, student_id, test_date)
    SELECT 1000 + g, 10 + (g % 3), g % 20000, DATE '2026-01-01' + (g % 300) FROM generate_series(1, 60000) AS g;
ANALYZE registrations; ANALYZE classes;`)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "EXPLAIN "+templates.MustDefault().SQL(templates.Student), "7", int64(10), int64(1))
	if err != nil {
		t.Fatalf("explain student.sql: %v", err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("explain student.sql: %v", err)
	}
	uses := 0
	for _, line := range plan {
		if strings.Contains(line, "registrations_student_idx") {
			uses++
		}
		if strings.Contains(line, "Seq Scan on registrations") {
			t.Errorf("student.sql scans every registration:\n%s", strings.Join(plan, "\n"))
		}
	}
	if uses != 2 {
		t.Errorf("student.sql uses registrations_student_idx %d times, want 2 (both lookups):\n%s", uses, strings.Join(plan, "\n"))
	}
}
