package seed

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// TestMigrateSaysWhereAndWhy: a provider's mapping.sql that fails names the file, the line
// and its text, and what PostgreSQL said besides its message (its hint), and the migration
// is refused as a whole.
func TestMigrateSaysWhereAndWhy(t *testing.T) {
	reference := templates.MustDefault().SQL(templates.Mapping)
	lines := strings.Count(reference, "\n")
	for _, tt := range []struct {
		name, appended string
		want           []string
	}{
		{"a column that does not exist", "\nCREATE VIEW typo AS\n    SELECT prog_no FROM courses;\n",
			[]string{"apply mapping.sql, line " + itoa(lines+3) + " (SELECT prog_no FROM courses;): ", `column "prog_no" does not exist`}},
		{"a view as a feed's source", "\nCREATE VIEW open_courses AS SELECT * FROM courses;\n" +
			"UPDATE catalogue_feeds SET source = 'open_courses' WHERE source = 'courses';\n",
			[]string{"apply search_triggers.sql: ", "catalogue_feeds: open_courses is a view, not a table (mapping.sql)",
				"hint: A feed's source is one of your tables: name the tables the view reads"}},
		{"ids that are not integers", "\nUPDATE catalogue_feeds SET ids = 'name' WHERE source = 'courses';\n",
			[]string{"apply notify.sql: ", "catalogue_feeds: courses.name (ids) is text, not an integer (mapping.sql)",
				"hint: A feed's ids and course_ids are the integer ids its views publish"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, templates.Mapping), []byte(reference+tt.appended), 0o600); err != nil {
				t.Fatal(err)
			}
			tpl, err := templates.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			conn := testkit.Connect(t, testkit.NewDatabase(t))
			err = Migrate(context.Background(), conn, tpl, true)
			var pe *pgconn.PgError
			if !errors.As(err, &pe) {
				t.Fatalf("Migrate: %v, want a PostgreSQL error", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Migrate: %v\nwant it to say %q", err, w)
				}
			}
			var n int
			if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_class WHERE relname LIKE 'catalogue%'`).Scan(&n); err != nil || n != 0 {
				t.Errorf("catalogue relations after the refused migration: %d (%v), want 0", n, err)
			}
		})
	}
}

// TestLineAt: PostgreSQL's position counts characters from 1, so a line after a multibyte
// character is still found.
func TestLineAt(t *testing.T) {
	sql := "-- café\nSELECT x\n  FROM y"
	for _, tt := range []struct {
		position, line int
		text           string
	}{{1, 1, "-- café"}, {9, 2, "SELECT x"}, {16, 2, "SELECT x"}, {20, 3, "FROM y"}} {
		if line, text := lineAt(sql, tt.position); line != tt.line || text != tt.text {
			t.Errorf("lineAt(%d) = %d %q, want %d %q", tt.position, line, text, tt.line, tt.text)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
