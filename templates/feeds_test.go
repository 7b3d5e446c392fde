package templates_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/builder/buildertest"
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
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := buildertest.NewMigratedDatabase(t)
			buildertest.Exec(t, db, tt.feed)
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
