package templates_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// olderSearchIndexes puts a migrated database back to the search indexes that earlier
// versions of schema.sql created: (start_date, id) alone, and for a while a wide covering
// index.
const olderSearchIndexes = `
DROP INDEX classes_public_start_cover_idx, classes_public_start_end_idx, classes_public_course_start_idx;
CREATE INDEX classes_public_start_idx ON classes (start_date, id) WHERE is_public;
CREATE INDEX classes_public_search_idx ON classes (start_date, id)
    INCLUDE (course_id, end_date, room_id, cost, seat_limit) WHERE is_public;
`

// wantClassIndexes are the indexes of classes after schema.sql, as pg_indexes spells them,
// by name.
var wantClassIndexes = []string{
	"CREATE INDEX classes_course_idx ON public.classes USING btree (course_id)",
	"CREATE UNIQUE INDEX classes_pkey ON public.classes USING btree (id)",
	"CREATE INDEX classes_public_course_start_idx ON public.classes USING btree (course_id, start_date, id) INCLUDE (end_date) WHERE is_public",
	"CREATE INDEX classes_public_start_cover_idx ON public.classes USING btree (start_date, id) INCLUDE (course_id, end_date) WHERE is_public",
	"CREATE INDEX classes_public_start_end_idx ON public.classes USING btree (start_date, end_date) WHERE is_public",
	"CREATE INDEX classes_room_idx ON public.classes USING btree (room_id)",
}

// TestSchemaSearchIndexes checks that applying schema.sql (what builder migrate does) gives
// classes the search's indexes, whether the database is new or was migrated by an earlier
// version, and that applying it again changes nothing.
func TestSchemaSearchIndexes(t *testing.T) {
	schema := templates.MustDefault().Migration(false)
	tests := []struct {
		name  string
		steps []string
	}{
		{"new database", []string{schema}},
		{"new database, migrated twice", []string{schema, schema}},
		{"migrated by an earlier version", []string{schema, olderSearchIndexes, schema}},
		{"migrated by an earlier version, then twice", []string{schema, olderSearchIndexes, schema, schema}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := testkit.NewDatabase(t)
			for _, s := range tt.steps {
				testkit.Exec(t, db, s)
			}
			if diff := cmp.Diff(wantClassIndexes, classIndexes(t, db)); diff != "" {
				t.Errorf("classIndexes(%q) mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// classIndexes returns the definitions of the indexes of classes, sorted.
func classIndexes(t *testing.T, dbURL string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	rows, _ := conn.Query(ctx, `SELECT indexdef FROM pg_indexes WHERE tablename = 'classes' ORDER BY indexname`)
	defs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("list the indexes of classes: %v", err)
	}
	return defs
}

// beforeStudents puts a migrated database back to the schema before signed-in students:
// registrations without test_date and its index.
const beforeStudents = `
DROP VIEW catalogue_registrations; -- versions before test_date had no views
DROP INDEX registrations_student_idx;
ALTER TABLE registrations DROP COLUMN test_date;
INSERT INTO courses (id, name, type) VALUES (1, 'Welding', 'Blended');
INSERT INTO classes (id, course_id, start_date, end_date, cost) VALUES (10, 1, '2027-01-10', '2027-01-12', 100);
INSERT INTO registrations (id, class_id, student_id) VALUES (100, 10, 7);
`

// TestSchemaStudentColumn checks that builder migrate gives registrations test_date (a
// nullable date, D32) and the student index, on a new database and on one migrated before
// they existed, keeping its rows, and that applying it again changes nothing.
func TestSchemaStudentColumn(t *testing.T) {
	schema := templates.MustDefault().Migration(false)
	want := []string{
		"column test_date date YES",
		"CREATE INDEX registrations_student_idx ON public.registrations USING btree (student_id, class_id, id) INCLUDE (test_date) WHERE (student_id IS NOT NULL)",
	}
	tests := []struct {
		name  string
		steps []string
		rows  int
	}{
		{"new database", []string{schema, schema}, 0},
		{"migrated before test_date", []string{schema, beforeStudents, schema, schema}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := testkit.NewDatabase(t)
			for _, s := range tt.steps {
				testkit.Exec(t, db, s)
			}
			got := queryStrings(t, db, `
				SELECT 'column ' || column_name || ' ' || data_type || ' ' || is_nullable
				FROM information_schema.columns WHERE table_name = 'registrations' AND column_name = 'test_date'
				UNION ALL
				SELECT indexdef FROM pg_indexes WHERE indexname = 'registrations_student_idx'
				UNION ALL
				SELECT 'rows ' || count(*) FROM registrations`)
			want := append(want[:len(want):len(want)], fmt.Sprintf("rows %d", tt.rows))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("registrations after migrate (%s) mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// queryStrings returns the one text column of every row of q.
func queryStrings(t *testing.T, dbURL, q string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	rows, _ := conn.Query(ctx, q)
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	return got
}

// TestSchemaAddsTokenRateLimit: a database migrated before api_tokens.rate_limit existed
// gets the column (null for its tokens, positive values only), and migrating again changes
// nothing.
func TestSchemaAddsTokenRateLimit(t *testing.T) {
	schema := templates.MustDefault().Migration(false)
	db := testkit.NewDatabase(t)
	testkit.Exec(t, db, schema+`
ALTER TABLE api_tokens DROP COLUMN rate_limit;
INSERT INTO api_tokens (name, token_hash) VALUES ('older', '\x01');`)
	testkit.Exec(t, db, schema)
	testkit.Exec(t, db, schema)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var limit *int
	if err := conn.QueryRow(ctx, `SELECT rate_limit FROM api_tokens WHERE name = 'older'`).Scan(&limit); err != nil || limit != nil {
		t.Errorf("rate_limit of a token from before = %v, %v; want null", limit, err)
	}
	if _, err := conn.Exec(ctx, `UPDATE api_tokens SET rate_limit = 0`); err == nil {
		t.Errorf("rate_limit 0 was accepted, want the check to refuse it")
	}
}
