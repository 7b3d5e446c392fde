package doctor

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestFullIndexScanFlagged: dates mapped as expressions that no index serves, over
// partial indexes whose predicate (is_public) the search implies. With sequential scans
// off the planner reads such an index whole (no Index Cond) and filters every entry on the
// date: the search's total counts the public classes of a date condition, so it must read
// all 200 classes that way, and the check passed it (a review of a provider's mapping:
// 10,805 rows read twice a search). Both searches with no course filter are flagged, and
// the fix names the expression.
func TestFullIndexScanFlagged(t *testing.T) {
	o := healthy(t, false)
	testkit.Exec(t, o.PrimaryURL, `DROP VIEW catalogue_classes; CREATE VIEW catalogue_classes AS
		SELECT id, course_id, room_id, (start_date::timestamp AT TIME ZONE 'UTC')::date AS start_date,
		(end_date::timestamp AT TIME ZONE 'UTC')::date AS end_date, schedule,
		cost, seat_limit, down_payment, is_public FROM classes`)
	r := run(t, o)
	var out bytes.Buffer
	_ = r.WriteText(&out)
	// As EXPLAIN VERBOSE writes the view's expression, without the alias.
	const expr = `(((start_date)::timestamp without time zone AT TIME ZONE 'UTC'::text))::date`
	for _, name := range []string{"indexes for the class search, no filter (search.sql)", "indexes for the class search by date (search.sql)"} {
		c := find(r, name)
		if c == nil || c.OK || !strings.Contains(c.Detail, "full index scan of classes (200 rows)") ||
			!strings.Contains(c.Fix, "classes: filtered on "+expr) {
			t.Errorf("%s: want failed with a full index scan of classes and a fix naming %s:\n%s", name, expr, out.String())
		}
	}
	for _, c := range r.Checks {
		if !c.OK && !strings.HasPrefix(c.Name, "indexes for") {
			t.Errorf("check %q failed too:\n%s", c.Name, out.String())
		}
	}
}

// TestSeqScanFixNamesColumns: the fix for a sequential scan names what the query filters
// the table on: student.sql reads a student's registrations of a class.
func TestSeqScanFixNamesColumns(t *testing.T) {
	o := healthy(t, false)
	testkit.Exec(t, o.PrimaryURL, `DROP INDEX registrations_student_idx, registrations_class_idx`)
	c := find(run(t, o), "indexes for a signed-in student's class read (student.sql)")
	if c == nil || c.OK {
		t.Fatalf("student.sql without the registrations indexes: %+v, want failed", c)
	}
	_, on, _ := strings.Cut(c.Fix, "registrations: filtered on ")
	on, _, _ = strings.Cut(on, ";")
	on, _, _ = strings.Cut(on, ", joined on")
	got := strings.Split(on, ", ")
	slices.Sort(got)
	if !slices.Equal(got, []string{"class_id", "student_id"}) {
		t.Errorf("fix %q, want registrations filtered on student_id and class_id", c.Fix)
	}
}

// TestTerms: what a condition as EXPLAIN VERBOSE writes it compares of one table.
func TestTerms(t *testing.T) {
	for _, c := range []struct {
		cond, alias string
		want        []string
	}{
		{`((((c.start_date)::timestamp without time zone AT TIME ZONE 'UTC'::text))::date >= '2026-01-01'::date)`, "c",
			[]string{`(((start_date)::timestamp without time zone AT TIME ZONE 'UTC'::text))::date`}},
		{`((r.student_id = '1'::bigint) AND (r.class_id <> '1'::bigint))`, "r", []string{"student_id", "class_id"}},
		{`(ro.id = classes.room_id)`, "classes", []string{"room_id"}},
		{`(ro.id = classes.room_id)`, "ro", []string{"id"}},
		{`classes.is_public`, "classes", []string{"is_public"}},
		{`(NOT co.is_public)`, "co", []string{"NOT is_public"}},
		{`(c.id = ANY ('{1,2}'::bigint[]))`, "c", []string{"id"}},
		{`((c.removed_at IS NULL) AND (c.state = 'open'::text))`, "c", []string{"removed_at", "state"}},
		{`(co.name ~~* '%c.x%'::text)`, "c", nil}, // the alias in a literal is no column
		{`("Registrations".class_id = '1'::bigint)`, "Registrations", []string{"class_id"}},
		{`((c.a = 1) OR (c.b = 2))`, "c", []string{"(a = 1) OR (b = 2)"}},
	} {
		if got := terms(c.cond, c.alias); !slices.Equal(got, c.want) {
			t.Errorf("terms(%q, %q) = %q, want %q", c.cond, c.alias, got, c.want)
		}
	}
}
