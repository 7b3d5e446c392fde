package index_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/edge/search/index"
	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// TestLoadEmptyCatalogue checks that a catalogue without public courses still gives an index
// at the database's version, in which nothing matches.
func TestLoadEmptyCatalogue(t *testing.T) {
	db := testkit.NewMigratedDatabase(t)
	testkit.Exec(t, db, `INSERT INTO courses (id, name, type, is_public) VALUES (1, 'Hidden', 'Online', false);
		INSERT INTO classes (id, course_id, start_date, end_date, cost, is_public) VALUES (1, 1, '2027-01-01', '2027-01-01', 1, true)`)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	ix, err := index.Load(ctx, conn, templates.MustDefault().SQL(templates.SearchIndex))
	if err != nil {
		t.Fatal(err)
	}
	if ix.Version() != 2 {
		t.Errorf("the index is at version %d, want 2 (two inserts)", ix.Version())
	}
	ids, total, ok := ix.Page(index.Query{Limit: 25}, nil)
	if len(ids) != 0 || total != 0 || !ok {
		t.Errorf("Page of an empty index = %v, %d, %v; want [], 0, true", ids, total, ok)
	}
}
