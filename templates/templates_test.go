package templates_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trainingco/catalogue/templates"
)

// TestLoadDir checks templates.dir: a file replaces the embedded template of its name; a
// file that names no template, or one that is no longer read, is refused with its name.
func TestLoadDir(t *testing.T) {
	tests := []struct {
		file, wantErr string
	}{
		{"search.sql", ""},
		{"mapping.sql", ""},
		{"schema.sql", "templates.dir: schema.sql is no longer used: the provider's schema is mapped in mapping.sql"},
		{"serach.sql", "templates.dir: serach.sql is not a known template"},
		// The names listed are those that may be replaced, in order: the embedded-only
		// ones were listed too, in map order.
		{"maping.sql", "templates.dir: maping.sql is not a known template (those a provider may replace: changes_classes.sql, classes.sql, classes_by_id.sql, courses.sql, courses_by_id.sql, mapping.sql, popularity.sql, "},
		{"count.sql", "templates.dir: count.sql is no longer used: search.sql returns the total on every page, also past the last; remove it"},
		// Always embedded: a copy would be ignored, so it is refused, by name.
		{"token_create.sql", "templates.dir: token_create.sql cannot be replaced"},
		{"replay_lsn.sql", "templates.dir: replay_lsn.sql cannot be replaced"},
		{"builder_lock.sql", "templates.dir: builder_lock.sql cannot be replaced"},
		{"seed_reset.sql", "templates.dir: seed_reset.sql cannot be replaced"},
		// The catalogue's own tables, and the triggers that follow catalogue_feeds.
		{"catalogue.sql", "templates.dir: catalogue.sql cannot be replaced"},
		{"notify.sql", "templates.dir: notify.sql cannot be replaced"},
		{"notify_drop.sql", "templates.dir: notify_drop.sql cannot be replaced"},
		{"search_triggers.sql", "templates.dir: search_triggers.sql cannot be replaced"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, tt.file), []byte("SELECT 1"), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := templates.Load(dir)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("Load with %s: %v", tt.file, err)
		case tt.wantErr == "" && s.SQL(tt.file) != "SELECT 1":
			t.Errorf("Load with %s: the template is %q, want the file's", tt.file, s.SQL(tt.file))
		case tt.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantErr)):
			t.Errorf("Load with %s: error %v, want one starting %q", tt.file, err, tt.wantErr)
		}
	}
}

// TestLoadExample loads the worked example's folder (templates/testdata/laravel): its
// mapping replaces the default one, and its app/ subfolder (the application's own tables)
// is not read as templates.
func TestLoadExample(t *testing.T) {
	s, err := templates.Load(filepath.Join("testdata", "laravel"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.SQL(templates.Mapping), "FROM course_sessions") {
		t.Errorf("mapping.sql is not the example's:\n%s", s.SQL(templates.Mapping))
	}
	if s.SQL(templates.Search) != templates.MustDefault().SQL(templates.Search) {
		t.Error("search.sql differs from the embedded one: the example replaces only the mapping")
	}
}
