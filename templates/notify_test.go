package templates_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/scripts/testkit"
)

// bulk is a catalogue with 10,000 registrations in class 1 and 10,000 classes.
const bulk = `
INSERT INTO courses (id, name, type, is_public) VALUES (1, 'Bulk', 'Online', TRUE);
INSERT INTO classes (id, course_id, start_date, end_date, cost, is_public)
    SELECT g, 1, '2027-01-01', '2027-01-02', 100, TRUE FROM generate_series(1, 10000) g;
INSERT INTO registrations (id, class_id) SELECT g, 1 FROM generate_series(1, 10000) g;
`

// TestNotifyBulkStatements checks what the triggers of notify.sql send for statements that
// touch many rows: one notification per statement, never more than NOTIFY's 8,000 bytes,
// listing the ids when there are at most 1,000 and saying "all" otherwise.
func TestNotifyBulkStatements(t *testing.T) {
	tests := []struct {
		name string
		sql  string
		want []string
	}{
		{"10,000 registrations moved between two classes",
			`UPDATE registrations SET class_id = 2 WHERE class_id = 1`,
			[]string{`{"table": "registrations", "class_ids": [1, 2]}`}},
		{"10,000 classes' cost",
			`UPDATE classes SET cost = cost + 1`,
			[]string{`{"all": true, "table": "classes"}`}},
		{"10,000 registrations' student: nothing a document shows",
			`UPDATE registrations SET student_id = 7`,
			nil},
		{"10,000 registrations added to one class",
			`INSERT INTO registrations (id, class_id) SELECT g, 3 FROM generate_series(10001, 20000) g`,
			[]string{`{"table": "registrations", "class_ids": [3]}`}},
		{"900 new courses whose ids would not fit in 8,000 bytes",
			`INSERT INTO courses (id, name, type) SELECT 1000000000000 + g, 'n', 'Online' FROM generate_series(1, 900) g`,
			[]string{`{"all": true, "table": "courses"}`}},
		{"two statements: two notifications",
			`UPDATE classes SET cost = 5 WHERE id = 1; UPDATE classes SET cost = 5 WHERE id = 2`,
			[]string{`{"ids": [1], "table": "classes", "course_ids": [1]}`, `{"ids": [2], "table": "classes", "course_ids": [1]}`}},
		{"a statement that changes nothing",
			`UPDATE classes SET cost = cost WHERE id < 100`,
			nil},
		{"a rolled-back change",
			`BEGIN; UPDATE classes SET cost = 6 WHERE id = 1; ROLLBACK`,
			nil},
		{"truncate",
			`TRUNCATE registrations`,
			[]string{`{"all": true, "table": "registrations"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := testkit.NewMigratedDatabase(t)
			testkit.Exec(t, db, bulk)
			got := notifications(t, db, tt.sql)
			for _, p := range got {
				if len(p) >= 8000 {
					t.Errorf("a payload of %d bytes, want under NOTIFY's 8,000", len(p))
				}
				if !json.Valid([]byte(p)) {
					t.Errorf("payload %q is not JSON", p)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("notifications of %q mismatch (-want +got):\n%s", tt.sql, diff)
			}
		})
	}
}

// notifications runs sql on db and returns the payloads it caused on catalogue_changes,
// collected up to a marker sent after it.
func notifications(t *testing.T, db, sql string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "LISTEN catalogue_changes"); err != nil {
		t.Fatal(err)
	}
	testkit.Exec(t, db, sql)
	testkit.Exec(t, db, "NOTIFY catalogue_changes, 'marker'")
	var got []string
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			t.Fatalf("wait for notifications (got %q): %v", got, err)
		}
		if n.Payload == "marker" {
			return got
		}
		got = append(got, n.Payload)
	}
}
