package templates_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// TestFeedsRefusedAtMigrate: a feed whose columns its table lacks, or whose ids are not
// integers, would make every write to the provider's table fail once its trigger fires;
// builder migrate refuses it instead, naming it, and leaves the triggers as they were.
func TestFeedsRefusedAtMigrate(t *testing.T) {
	notify := templates.MustDefault().SQL(templates.Notify)
	for _, tt := range []struct {
		name, feed, wantErr string
	}{
		{"a watched column misspelt", `UPDATE catalogue_feeds SET watched = '{id,clas_id}' WHERE source = 'registrations'`,
			"catalogue_feeds: registrations names clas_id, which registrations does not have"},
		{"a missing key", `UPDATE catalogue_feeds SET key = 'uuid' WHERE source = 'rooms'`,
			"catalogue_feeds: rooms names uuid, which rooms does not have"},
		{"ids that are not integers", `UPDATE catalogue_feeds SET ids = 'name' WHERE source = 'courses'`,
			"catalogue_feeds: courses.name (ids) is text, not an integer"},
		// Every one at once, not the first of them a run at a time.
		{"two feeds wrong", `UPDATE catalogue_feeds SET ids = 'name' WHERE source = 'courses';
			UPDATE catalogue_feeds SET course_ids = 'schedule' WHERE source = 'classes'`,
			"catalogue_feeds: classes.schedule (course_ids) is text, not an integer; courses.name (ids) is text, not an integer (mapping.sql)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := testkit.NewMigratedDatabase(t)
			testkit.Exec(t, db, tt.feed)
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			if _, err := conn.Exec(ctx, notify); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("notify.sql: %v, want an error with %q", err, tt.wantErr)
			}
			// Refused as a whole: the triggers of the migration before are still there, and
			// a write still works.
			var n int
			if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'catalogue\_notify\_%'`).Scan(&n); err != nil || n != 20 {
				t.Errorf("change triggers after the refusal: %d (%v), want 20", n, err)
			}
			if _, err := conn.Exec(ctx, `INSERT INTO courses (id, name, type) VALUES (1, 'x', 'Online')`); err != nil {
				t.Errorf("a write after the refusal: %v", err)
			}
		})
	}
}

// exampleRows are a few rows of the worked example's own tables.
const exampleRows = `
INSERT INTO courses (id, title, delivery, published) VALUES (1, 'Welding', 'classroom', true), (2, 'Excel', 'online', true);
INSERT INTO venues (id, site, room, city) VALUES (5, 'Main', 'Room A', 'Springfield');
INSERT INTO course_sessions (id, course_id, venue_id, starts_on, ends_on, price, status) VALUES
    (11, 1, 5, '2099-05-03', '2099-05-07', 2500.00, 'published');
INSERT INTO enrolments (id, course_session_id, user_id) VALUES (1, 11, 7), (2, 11, 8);
`

// TestExampleTriggers: migrated with the worked example's mapping (templates/testdata/
// laravel), the change triggers are on the example's tables, and each statement sends what
// the builder reads for the view its table feeds, by the feed's kind; a change of a column
// no document shows (updated_at) sends nothing.
func TestExampleTriggers(t *testing.T) {
	db, _ := testkit.Laravel(t).NewMigratedDatabase(t)
	testkit.Exec(t, db, exampleRows)
	for _, tt := range []struct {
		sql  string
		want []string
	}{
		{`UPDATE enrolments SET deleted_at = now() WHERE id = 1`, []string{`{"table": "registrations", "class_ids": [11]}`}},
		{`UPDATE enrolments SET updated_at = now()`, nil},
		{`UPDATE enrolments SET status = 'cancelled' WHERE id = 2`, []string{`{"table": "registrations", "class_ids": [11]}`}},
		{`UPDATE venues SET city = 'Shelbyville' WHERE id = 5`, []string{`{"table": "rooms", "ids": [5]}`}},
		{`UPDATE course_sessions SET course_id = 2, price = 10 WHERE id = 11`, []string{`{"table": "classes", "ids": [11], "course_ids": [1, 2]}`}},
		{`UPDATE courses SET deleted_at = now() WHERE id = 1`, []string{`{"table": "courses", "ids": [1]}`}},
		{`INSERT INTO course_sessions (id, course_id, starts_on, ends_on, price) VALUES (12, 2, '2099-07-01', '2099-07-02', 50)`,
			[]string{`{"table": "classes", "ids": [12], "course_ids": [2]}`}},
		{`DELETE FROM enrolments`, []string{`{"table": "registrations", "class_ids": [11]}`}},
		{`TRUNCATE venues CASCADE`, []string{`{"table": "rooms", "all": true}`, `{"table": "classes", "all": true}`,
			`{"table": "registrations", "all": true}`}},
	} {
		if diff := cmp.Diff(canonical(t, tt.want), canonical(t, notifications(t, db, tt.sql))); diff != "" {
			t.Errorf("notifications of %q mismatch (-want +got):\n%s", tt.sql, diff)
		}
	}
}

// canonical re-encodes JSON payloads with their keys sorted.
func canonical(t *testing.T, payloads []string) []string {
	t.Helper()
	var out []string
	for _, p := range payloads {
		var v any
		if err := json.Unmarshal([]byte(p), &v); err != nil {
			t.Fatalf("payload %q: %v", p, err)
		}
		b, _ := json.Marshal(v)
		out = append(out, string(b))
	}
	return out
}
