package student

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

func pool(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatalf("open pool: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// TestReaderRead reads both fields of student 7, registered in class 10 (registrations 5
// and 4: the lowest is 4) and tested in class 11 of the same course, against a real
// PostgreSQL; student.sql's own cases are in templates.
func TestReaderRead(t *testing.T) {
	db := testkit.NewMigratedDatabase(t)
	testkit.Exec(t, db, `
INSERT INTO courses (id, name, type, is_public) VALUES (1, 'Welding', 'Blended', true);
INSERT INTO classes (id, course_id, start_date, end_date, cost, is_public) VALUES
    (10, 1, '2027-01-10', '2027-01-12', 100, true), (11, 1, '2026-04-10', '2026-04-12', 100, true);
INSERT INTO registrations (id, class_id, student_id, test_date) VALUES
    (5, 10, 7, NULL), (4, 10, 7, NULL), (6, 11, 7, '2026-05-01');`)
	r := NewReader(pool(t, db), templates.MustDefault(), 2*time.Second)
	got, err := r.Read(context.Background(), "7", 10, 1)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	want := Fields{ptr(int64(4)), ptr(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Read(7, 10, 1) mismatch (-want +got):\n%s", diff)
	}
}

// TestReaderReplicaDown: a replica that refuses connections is an error, within the timeout.
func TestReaderReplicaDown(t *testing.T) {
	r := NewReader(pool(t, "postgres://nobody@127.0.0.1:1/none?connect_timeout=1"), templates.MustDefault(), 500*time.Millisecond)
	began := time.Now()
	if _, err := r.Read(context.Background(), "7", 10, 1); err == nil {
		t.Fatal("Read from a replica that is down: no error")
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("Read from a replica that is down took %v, want about the 500ms timeout at most", d)
	}
}
