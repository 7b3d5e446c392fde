package templates_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// beforeSearchVersion puts a migrated database back to what schema.sql created before it
// kept catalogue_search_version.
const beforeSearchVersion = `
DROP TRIGGER catalogue_search_changed ON classes;
DROP TRIGGER catalogue_search_changed ON courses;
DROP FUNCTION catalogue_search_changed();
DROP VIEW catalogue_search_version;
DROP TABLE catalogue_search_changes;
`

const versionSeed = `
INSERT INTO courses (id, name, type, description, is_public) VALUES
  (1, 'Pottery', 'Brick and Mortar', NULL, true),
  (2, 'Weaving', 'Online', NULL, false);
INSERT INTO classes (id, course_id, start_date, end_date, cost, is_public) VALUES
  (10, 1, '2027-03-10', '2027-03-12', 100, true),
  (11, 1, '2027-04-10', '2027-04-12', 100, true),
  (20, 2, '2027-05-10', '2027-05-12', 100, false);
`

// TestSearchVersionCountsChanges checks that catalogue_search_version moves by one with
// every statement that changes what the search matches on (a class's course, dates, public
// flag or id; a course's name, type, public flag or id), however many rows it changes, and
// not with changes the search reads live (cost, seats, rooms), on a new database and on one
// migrated before the version existed.
func TestSearchVersionCountsChanges(t *testing.T) {
	schema := templates.MustDefault().Migration(false)
	steps := []struct {
		sql   string
		moves int64 // by how much the version moves
	}{
		{"UPDATE classes SET cost = cost + 1", 0},
		{"UPDATE classes SET seat_limit = 5, schedule = 'Mon', room_id = NULL, down_payment = 1", 0},
		{"UPDATE courses SET description = 'x'", 0},
		{"INSERT INTO registrations (id, class_id) VALUES (1, 10)", 0},
		{"UPDATE classes SET start_date = start_date + 1", 1}, // three rows: one statement
		{"UPDATE classes SET end_date = end_date + 1 WHERE id = 10", 1},
		{"UPDATE classes SET is_public = NOT is_public WHERE id = 20", 1},
		{"UPDATE classes SET course_id = 2 WHERE id = 11", 1},
		{"UPDATE classes SET id = 12 WHERE id = 11", 1},
		{"UPDATE classes SET cost = 1 WHERE id = 999", 0},         // a column the search does not read
		{"UPDATE classes SET is_public = true WHERE id = 999", 1}, // no row: still a statement
		{"UPDATE courses SET name = 'Clay' WHERE id = 1", 1},
		{"UPDATE courses SET type = 'Blended' WHERE id = 1", 1},
		{"UPDATE courses SET is_public = true WHERE id = 2", 1},
		{"INSERT INTO classes (id, course_id, start_date, end_date, cost) VALUES (30, 1, '2027-06-01', '2027-06-01', 5)", 1},
		{"DELETE FROM classes WHERE id = 30", 1},
		{"INSERT INTO courses (id, name, type) VALUES (3, 'New', 'Online')", 1},
		{"BEGIN ISOLATION LEVEL REPEATABLE READ; UPDATE classes SET start_date = start_date + 1; COMMIT", 1},
		{"BEGIN ISOLATION LEVEL SERIALIZABLE; DELETE FROM courses WHERE id = 3; COMMIT", 1},
		{"TRUNCATE registrations, classes, courses", 2}, // the triggers of classes and of courses
	}
	for _, upgraded := range []bool{false, true} {
		db := testkit.NewMigratedDatabase(t)
		if upgraded {
			testkit.Exec(t, db, beforeSearchVersion)
			testkit.Exec(t, db, schema)
		}
		testkit.Exec(t, db, schema) // a second migrate changes nothing
		testkit.Exec(t, db, versionSeed)
		conn := testkit.Connect(t, db)
		prev := searchVersion(t, conn)
		for _, s := range steps {
			if _, err := conn.Exec(context.Background(), s.sql); err != nil {
				t.Fatalf("%s: %v", s.sql, err)
			}
			want := prev + s.moves
			if got := searchVersion(t, conn); got != want {
				t.Errorf("upgraded %v: after %q the version is %d, want %d", upgraded, s.sql, got, want)
			}
			prev = want
		}
		// Folding keeps the table short: the changes above are in one or two rows.
		if n := countRows(t, conn); n > 2 {
			t.Errorf("upgraded %v: catalogue_search_changes holds %d rows after %d changes, want at most 2", upgraded, n, prev)
		}
	}
}

// TestSearchVersionWritersNeverWait checks that writers of classes do not wait for each other
// on the version (each adds its own row and folds only rows no one holds), and that a
// REPEATABLE READ writer does not fail because another transaction folded rows it could
// see; and that the version counts every committed change once.
func TestSearchVersionWritersNeverWait(t *testing.T) {
	db := testkit.NewMigratedDatabase(t)
	testkit.Exec(t, db, versionSeed)
	reader, a, b, c := testkit.Connect(t, db), testkit.Connect(t, db), testkit.Connect(t, db), testkit.Connect(t, db)
	before := searchVersion(t, reader)
	for _, conn := range []*pgx.Conn{a, b, c} {
		// Any wait for a lock fails the test at once instead of hanging it.
		mustExec(t, conn, "SET lock_timeout = '2s'")
	}
	mustExec(t, c, "BEGIN ISOLATION LEVEL REPEATABLE READ")
	mustExec(t, c, "SELECT version FROM catalogue_search_version") // c's snapshot: before a and b
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "UPDATE classes SET start_date = start_date + 1 WHERE id = 10")
	mustExec(t, b, "BEGIN")
	mustExec(t, b, "UPDATE classes SET start_date = start_date + 1 WHERE id = 11") // a holds its rows
	mustExec(t, b, "COMMIT")
	mustExec(t, a, "COMMIT")
	if got := searchVersion(t, reader); got != before+2 {
		t.Errorf("after two committed changes the version is %d, want %d", got, before+2)
	}
	// b or a folded the rows c's snapshot sees; c's change must still commit.
	mustExec(t, c, "UPDATE courses SET name = 'Clay' WHERE id = 1")
	mustExec(t, c, "COMMIT")
	// An uncommitted change is not counted; a rolled-back one never is.
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "DELETE FROM classes WHERE id = 20")
	if got := searchVersion(t, reader); got != before+3 {
		t.Errorf("with a change in progress the version is %d, want %d", got, before+3)
	}
	mustExec(t, a, "ROLLBACK")
	if got := searchVersion(t, reader); got != before+3 {
		t.Errorf("after a rollback the version is %d, want %d", got, before+3)
	}
}

func mustExec(t *testing.T, conn *pgx.Conn, sql string) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "55P03" {
			t.Fatalf("%s: waited for a lock: %v", sql, err)
		}
		t.Fatalf("%s: %v", sql, err)
	}
}

func searchVersion(t *testing.T, conn *pgx.Conn) int64 {
	t.Helper()
	var v int64
	if err := conn.QueryRow(context.Background(), "SELECT version FROM catalogue_search_version").Scan(&v); err != nil {
		t.Fatalf("read catalogue_search_version: %v", err)
	}
	return v
}

func countRows(t *testing.T, conn *pgx.Conn) int64 {
	t.Helper()
	var n int64
	if err := conn.QueryRow(context.Background(), "SELECT COUNT(*) FROM catalogue_search_changes").Scan(&n); err != nil {
		t.Fatalf("count catalogue_search_changes: %v", err)
	}
	return n
}
