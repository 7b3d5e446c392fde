package templates_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/builder/buildertest"
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
}

// TestSchemaSearchIndexes checks that applying schema.sql (what builder migrate does) gives
// classes the search's indexes, whether the database is new or was migrated by an earlier
// version, and that applying it again changes nothing.
func TestSchemaSearchIndexes(t *testing.T) {
	schema := templates.MustDefault().SQL(templates.Schema)
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
			db := buildertest.NewDatabase(t)
			for _, s := range tt.steps {
				buildertest.Exec(t, db, s)
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
