package testkit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/trainingco/catalogue/templates"
)

// Schema is a provider's schema that tests run the catalogue against: the reference schema,
// which is the default mapping, or the worked example of templates/testdata/laravel, a
// Laravel application's tables mapped by its own mapping.sql.
type Schema struct {
	Name string
	// Dir is templates.dir: the folder of the mapping; empty for the default one.
	Dir string
	// Tables creates the provider's own tables, before builder migrate; empty for the
	// reference schema, which builder migrate creates.
	Tables string
	// fromReference moves rows loaded into schema "reference" into the provider's tables.
	fromReference string
}

// Reference is the reference schema.
func Reference() Schema { return Schema{Name: "reference"} }

// Laravel is the worked example: courses, course_sessions, venues (rooms with their
// address), enrolments with a status, prices in numeric(10,2), soft deletes.
func Laravel(t testing.TB) Schema {
	t.Helper()
	dir := filepath.Join(RepoRoot(t), "templates", "testdata", "laravel")
	return Schema{Name: "laravel", Dir: dir, Tables: readFile(t, dir, "app", "tables.sql"),
		fromReference: readFile(t, dir, "app", "from_reference.sql")}
}

// Schemas are the schemas every contract test runs against.
func Schemas(t testing.TB) []Schema { return []Schema{Reference(), Laravel(t)} }

// referenceTables holds rows written for the reference schema while they are moved.
const referenceTables = `
CREATE SCHEMA reference;
CREATE TABLE reference.courses (id bigint, name text, type text, description text, is_public boolean DEFAULT false);
CREATE TABLE reference.locations (id bigint, name text, city text, state text, zip text, country text);
CREATE TABLE reference.rooms (id bigint, location_id bigint, name text);
CREATE TABLE reference.classes (id bigint, course_id bigint, room_id bigint, start_date date, end_date date,
    schedule text, cost integer, seat_limit integer, down_payment integer, is_public boolean DEFAULT false);
CREATE TABLE reference.registrations (id bigint, class_id bigint, student_id bigint, test_date date);
SET search_path = reference;
`

// Load returns SQL that puts rows written for the reference schema (INSERTs into courses,
// locations, rooms, classes and registrations) into this schema's tables, as the same
// catalogue: the same bodies must come out of it.
func (s Schema) Load(reference string) string {
	if s.fromReference == "" {
		return reference
	}
	return referenceTables + reference + ";\nRESET search_path;\n" + s.fromReference
}

// Env returns the environment variables that point the binaries at this schema's mapping.
func (s Schema) Env() map[string]string {
	if s.Dir == "" {
		return nil
	}
	return map[string]string{"CATALOGUE_TEMPLATES_DIR": s.Dir}
}

// RepoRoot returns the repository's folder: the nearest one above the test's working folder
// (its package's folder) that holds go.mod. It does not ask the source file's path, which
// the build may trim (make test builds with -trimpath).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testkit: no go.mod above the working folder")
		}
		dir = parent
	}
}

func readFile(t testing.TB, parts ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(parts...))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// NewMigratedDatabase returns a new database holding the schema's own tables, migrated with
// its mapping as builder migrate does (the webhook tables aside), and the mapping's
// templates.
func (s Schema) NewMigratedDatabase(t testing.TB) (string, *templates.Set) {
	t.Helper()
	tpl, err := templates.Load(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	db := NewDatabase(t)
	if s.Tables != "" {
		Exec(t, db, s.Tables)
	}
	Exec(t, db, tpl.Migration(true))
	return db, tpl
}
