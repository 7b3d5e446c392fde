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
		{"serach.sql", "templates.dir: serach.sql is not a known template"},
		{"count.sql", "templates.dir: count.sql is no longer used: search.sql returns the total on every page, also past the last; remove it"},
		// Always embedded: a copy would be ignored, so it is refused, by name.
		{"token_create.sql", "templates.dir: token_create.sql cannot be replaced"},
		{"replay_lsn.sql", "templates.dir: replay_lsn.sql cannot be replaced"},
		{"builder_lock.sql", "templates.dir: builder_lock.sql cannot be replaced"},
		{"seed_reset.sql", "templates.dir: seed_reset.sql cannot be replaced"},
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
