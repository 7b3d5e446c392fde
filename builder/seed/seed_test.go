package seed

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

var today = time.Date(2027, 3, 15, 0, 0, 0, 0, time.UTC)

var small = Options{Courses: 60, Classes: 1500, Registrations: 12000, Seed: 7, Today: today}

func seeded(t *testing.T, o Options) *pgx.Conn {
	t.Helper()
	conn := testkit.Connect(t, testkit.NewMigratedDatabase(t))
	if _, err := Seed(context.Background(), conn, o); err != nil {
		t.Fatalf("Seed(%+v): %v", o, err)
	}
	return conn
}

// schemaOf describes every column, index and constraint of the public schema.
func schemaOf(t *testing.T, conn *pgx.Conn) []string {
	t.Helper()
	rows, err := conn.Query(context.Background(), `
		SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' ||
		       COALESCE(column_default, '') || ' ' || is_identity
		FROM information_schema.columns WHERE table_schema = 'public'
		UNION ALL
		SELECT indexdef FROM pg_indexes WHERE schemaname = 'public'
		UNION ALL
		SELECT conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
		FROM pg_constraint WHERE connamespace = 'public'::regnamespace
		UNION ALL
		SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal
		UNION ALL
		SELECT 'function ' || proname FROM pg_proc WHERE pronamespace = 'public'::regnamespace
		ORDER BY 1`)
	if err != nil {
		t.Fatalf("describe schema: %v", err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("describe schema: %v", err)
	}
	return got
}

func TestMigrateTwiceIsANoOp(t *testing.T) {
	ctx := context.Background()
	conn := testkit.Connect(t, testkit.NewDatabase(t))
	tpl := templates.MustDefault()
	if err := Migrate(ctx, conn, tpl, true); err != nil {
		t.Fatalf("first Migrate: %v", err)
	}
	first := schemaOf(t, conn)
	if len(first) < 30 {
		t.Fatalf("schema after Migrate has %d items, want the six tables with their columns:\n%v", len(first), first)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO courses (name, type) VALUES ('Intro to Python', 'Online')`); err != nil {
		t.Fatalf("insert a course: %v", err)
	}
	if err := Migrate(ctx, conn, tpl, true); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	if diff := cmp.Diff(first, schemaOf(t, conn)); diff != "" {
		t.Errorf("schema after a second Migrate mismatch (-want +got):\n%s", diff)
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM courses`).Scan(&n); err != nil || n != 1 {
		t.Errorf("courses after a second Migrate = %d (%v), want the 1 row inserted before", n, err)
	}
}

// counts returns the number of rows of each seeded table.
func counts(t *testing.T, conn *pgx.Conn) Stats {
	t.Helper()
	var s Stats
	err := conn.QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM courses), (SELECT count(*) FROM locations), (SELECT count(*) FROM rooms),
		(SELECT count(*) FROM classes), (SELECT count(*) FROM registrations)`).
		Scan(&s.Courses, &s.Locations, &s.Rooms, &s.Classes, &s.Registrations)
	if err != nil {
		t.Fatalf("count rows: %v", err)
	}
	return s
}

func TestSeedCounts(t *testing.T) {
	conn := testkit.Connect(t, testkit.NewMigratedDatabase(t))
	stats, err := Seed(context.Background(), conn, small)
	if err != nil {
		t.Fatalf("Seed: %v", err)
	}
	if stats.Duration <= 0 {
		t.Errorf("Seed Duration = %v, want > 0", stats.Duration)
	}
	// 60 courses: max(3, 60/50) = 3 locations, each with 2 to 8 rooms.
	if stats.Locations != 3 || stats.Rooms < 6 || stats.Rooms > 24 {
		t.Errorf("Seed made %d locations and %d rooms, want 3 and 6..24", stats.Locations, stats.Rooms)
	}
	want := Stats{Courses: 60, Locations: 3, Rooms: stats.Rooms, Classes: 1500, Registrations: 12000}
	got := stats
	got.Duration = 0
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Seed(%+v) stats mismatch (-want +got):\n%s", small, diff)
	}
	if diff := cmp.Diff(want, counts(t, conn)); diff != "" {
		t.Errorf("rows in the tables after Seed(%+v) mismatch (-want +got):\n%s", small, diff)
	}
}

// TestSeedKeepsTheSchema checks that the foreign keys Seed sets aside for the load come back
// as they were.
func TestSeedKeepsTheSchema(t *testing.T) {
	conn := testkit.Connect(t, testkit.NewMigratedDatabase(t))
	before := schemaOf(t, conn)
	if _, err := Seed(context.Background(), conn, small); err != nil {
		t.Fatalf("Seed: %v", err)
	}
	if diff := cmp.Diff(before, schemaOf(t, conn)); diff != "" {
		t.Errorf("schema after Seed(%+v) mismatch (-want +got):\n%s", small, diff)
	}
	_, err := conn.Exec(context.Background(), `INSERT INTO registrations (class_id) VALUES (999999)`)
	if err == nil {
		t.Errorf("a registration of an unknown class was accepted after Seed: the foreign key is gone")
	}
}

// triggersOf returns "table trigger" for every change-capture trigger (notify.sql), sorted.
func triggersOf(t *testing.T, conn *pgx.Conn) []string {
	t.Helper()
	rows, err := conn.Query(context.Background(), `
		SELECT tgrelid::regclass || ' ' || tgname FROM pg_trigger WHERE NOT tgisinternal AND tgname LIKE 'catalogue_notify_%' ORDER BY 1`)
	if err != nil {
		t.Fatalf("list triggers: %v", err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("list triggers: %v", err)
	}
	return got
}

// TestMigrateTriggersFollowListen checks that Migrate installs the change-capture triggers
// (four on each of the five tables) when builder.listen is on, and that migrating with it
// off removes them and their functions, leaving the database as if they had never been.
func TestMigrateTriggersFollowListen(t *testing.T) {
	ctx := context.Background()
	tpl := templates.MustDefault()
	never := testkit.Connect(t, testkit.NewDatabase(t))
	if err := Migrate(ctx, never, tpl, false); err != nil {
		t.Fatalf("Migrate without triggers: %v", err)
	}
	if got := triggersOf(t, never); len(got) != 0 {
		t.Errorf("triggers after Migrate with listen off = %v, want none", got)
	}

	conn := testkit.Connect(t, testkit.NewDatabase(t))
	if err := Migrate(ctx, conn, tpl, true); err != nil {
		t.Fatalf("Migrate with triggers: %v", err)
	}
	var want []string
	for _, table := range []string{"courses", "locations", "rooms", "classes", "registrations"} {
		for _, op := range []string{"delete", "insert", "truncate", "update"} {
			want = append(want, table+" catalogue_notify_"+op)
		}
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, triggersOf(t, conn)); diff != "" {
		t.Errorf("triggers after Migrate with listen on mismatch (-want +got):\n%s", diff)
	}
	if err := Migrate(ctx, conn, tpl, false); err != nil {
		t.Fatalf("Migrate with listen off: %v", err)
	}
	if diff := cmp.Diff(schemaOf(t, never), schemaOf(t, conn)); diff != "" {
		t.Errorf("schema after turning listen off mismatch (-never had triggers +had them):\n%s", diff)
	}
}

// TestSeedRefusesAMappedDatabase: a database migrated with the worked example's mapping has
// a courses table of its own (the provider's); seed, with or without reset, refuses it
// and leaves it as it was.
func TestSeedRefusesAMappedDatabase(t *testing.T) {
	db, _ := testkit.Laravel(t).NewMigratedDatabase(t)
	testkit.Exec(t, db, `INSERT INTO courses (id, title, delivery, published) VALUES (1, 'Welding', 'classroom', true)`)
	conn := testkit.Connect(t, db)
	for _, reset := range []bool{false, true} {
		o := small
		o.Reset = reset
		if _, err := Seed(context.Background(), conn, o); !errors.Is(err, ErrMapped) || !strings.Contains(err.Error(), "course_sessions, enrolments, venues") {
			t.Errorf("Seed with reset %v: %v, want ErrMapped naming the mapped tables", reset, err)
		}
	}
	var title string
	if err := conn.QueryRow(context.Background(), `SELECT title FROM courses WHERE id = 1`).Scan(&title); err != nil || title != "Welding" {
		t.Errorf("the provider's course after the refused seeds: %q (%v)", title, err)
	}
}
