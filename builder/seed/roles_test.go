package seed

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// TestMigrateKeepsTheViewsGrants: config/OPERATIONS.md grants the edge and the builder
// SELECT on the catalogue_* views after builder migrate, and an upgrade runs migrate
// again. mapping.sql drops and creates the views, which took the grants away: every
// search and every build failed with "permission denied for view" after the first
// upgrade (found by an operator's review).
func TestMigrateKeepsTheViewsGrants(t *testing.T) {
	ctx := context.Background()
	conn, role := migratedWithRole(t, "seed_reader")
	if _, err := conn.Exec(ctx, "GRANT SELECT ON catalogue_classes, catalogue_rooms TO "+role+
		"; GRANT SELECT (id, name) ON catalogue_courses TO "+role); err != nil {
		t.Fatal(err)
	}
	migrate(t, conn)
	for what, want := range map[string]bool{
		"catalogue_classes": true, "catalogue_rooms": true, "catalogue_registrations": false,
		"catalogue_courses.name": true, "catalogue_courses.description": false,
	} {
		view, col, _ := strings.Cut(what, ".")
		var got bool
		err := conn.QueryRow(ctx, `SELECT CASE WHEN $3 = '' THEN has_table_privilege($1, $2, 'SELECT')
			ELSE has_column_privilege($1, $2, $3, 'SELECT') END`, role, view, col).Scan(&got)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("after a second migrate, %s may read %s: %t, want %t", role, what, got, want)
		}
	}
}

// TestGiveBackLeavesOutWhatIsGone: a grant on a view or a column that the new mapping no
// longer has is left out, and the migration goes on; any other failure stops it.
func TestGiveBackLeavesOutWhatIsGone(t *testing.T) {
	ctx := context.Background()
	conn, role := migratedWithRole(t, "seed_gone")
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		for _, grant := range []string{"GRANT SELECT ON catalogue_gone TO " + role, "GRANT SELECT (gone) ON catalogue_courses TO " + role} {
			if err := giveBack(ctx, tx, grant); err != nil {
				return fmt.Errorf("%s: %w", grant, err)
			}
		}
		if err := giveBack(ctx, tx, "GRANT SELECT ON catalogue_courses TO "+role); err != nil {
			return err
		}
		if err := giveBack(ctx, tx, "GRANT SELECT ON catalogue_courses TO no_such_role_at_all"); err == nil {
			return errors.New("a grant to a role that does not exist was left out; want its error")
		}
		return nil
	})
	var got bool
	if err == nil {
		err = conn.QueryRow(ctx, "SELECT has_table_privilege($1, 'catalogue_courses', 'SELECT')", role).Scan(&got)
	}
	if err != nil || !got {
		t.Errorf("giving back grants with some gone: %v, the grant that holds given: %t; want no error and given", err, got)
	}
}

// TestTriggersRunForTheApplicationsRole: the provider's application writes courses and
// classes with a role that may write those tables and nothing of the catalogue's
// (OPERATIONS.md has the owner role own them). The search trigger wrote
// catalogue_search_changes with the writer's rights: every such write failed with
// "permission denied for table catalogue_search_changes" once builder migrate had run
// (found by an operator's review). The change-capture triggers are on too.
func TestTriggersRunForTheApplicationsRole(t *testing.T) {
	ctx := context.Background()
	conn, role := migratedWithRole(t, "seed_app")
	if _, err := conn.Exec(ctx, "GRANT SELECT, INSERT, UPDATE, DELETE ON courses, classes TO "+role+
		"; GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO "+role); err != nil {
		t.Fatal(err)
	}
	var version int64
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL ROLE "+role); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "INSERT INTO courses (name, type) VALUES ('Intro to Python', 'Online')"); err != nil {
			return fmt.Errorf("insert a course: %w", err)
		}
		_, err := tx.Exec(ctx, "UPDATE courses SET is_public = NOT is_public")
		return err
	})
	if err == nil {
		err = conn.QueryRow(ctx, "SELECT version FROM catalogue_search_version").Scan(&version)
	}
	if err != nil || version != 2 {
		t.Errorf("the application's role writing courses: %v, search version %d; want no error and 2 statements counted", err, version)
	}
}

// migratedWithRole returns a connection to a new migrated database and a role named from
// prefix (newRole).
func migratedWithRole(t *testing.T, prefix string) (*pgx.Conn, string) {
	t.Helper()
	dbURL := testkit.NewDatabase(t)
	conn := testkit.Connect(t, dbURL)
	migrate(t, conn)
	return conn, newRole(t, dbURL, prefix)
}

func migrate(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	if err := Migrate(context.Background(), conn, templates.MustDefault(), true); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
}

// newRole creates a role named from prefix, granted USAGE on the schema public of dbURL's
// database, and drops it (with its grants there) when the test ends: roles belong to the
// whole cluster.
func newRole(t *testing.T, dbURL, prefix string) string {
	t.Helper()
	role := fmt.Sprintf("%s_%d", prefix, time.Now().UnixNano())
	testkit.Exec(t, dbURL, "CREATE ROLE "+role)
	t.Cleanup(func() { testkit.Exec(t, dbURL, "DROP OWNED BY "+role+"; DROP ROLE "+role) })
	testkit.Exec(t, dbURL, "GRANT USAGE ON SCHEMA public TO "+role)
	return role
}
