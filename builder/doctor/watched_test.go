package doctor

import (
	"bytes"
	"strings"
	"testing"

	"github.com/trainingco/catalogue/scripts/testkit"
)

// unwatchedWait ends the detail of a failed watched columns check with one column.
const unwatchedWait = ": an UPDATE of it alone sets off no build, and waits for builder.schedule"

// TestWatchedColumns: a feed's watched list must name every column of its table that
// catalogue_courses, catalogue_classes and catalogue_rooms read, and its ids: an UPDATE of
// another sends no notification (notify.sql), and the change waits for builder.schedule.
// catalogue_registrations is exempt (a registration shows only as the seat it takes), but
// not a registrations table the other views read. The rooms read from the class row are
// TestRoomsOnTheClassRow's.
func TestWatchedColumns(t *testing.T) {
	for _, c := range []struct {
		name, sql string
		detail    string // the failed check's detail; empty: it passes
		fix       string // in its fix
	}{
		{"the default mapping", "", "", ""},
		{"a class's cost not watched", `UPDATE catalogue_feeds SET watched = array_remove(watched, 'cost') WHERE source = 'classes'`,
			"classes.cost, which catalogue_classes reads, is not in the watched columns of catalogue_feeds row classes" + unwatchedWait,
			"set watched of catalogue_feeds row classes to '{id,course_id,room_id,start_date,end_date,schedule,seat_limit,down_payment,is_public,cost}' in mapping.sql, then run builder migrate"},
		{"an empty watched list (any column)", `UPDATE catalogue_feeds SET watched = '{}' WHERE source = 'classes'`, "", ""},
		{"registrations watching only class_id", `UPDATE catalogue_feeds SET watched = '{class_id}' WHERE source = 'registrations'`, "", ""},
		{"registrations without their ids", `UPDATE catalogue_feeds SET watched = '{id}' WHERE source = 'registrations'`,
			"registrations.class_id, the row's ids, is not in the watched columns of catalogue_feeds row registrations" + unwatchedWait,
			"set watched of catalogue_feeds row registrations to '{id,class_id}' in mapping.sql"},
		{"registrations that a classes view reads", `DROP VIEW catalogue_classes; CREATE VIEW catalogue_classes AS
			SELECT id, course_id, room_id, start_date, end_date, schedule, cost, seat_limit, down_payment, is_public FROM classes
			WHERE id NOT IN (SELECT class_id FROM registrations WHERE student_id = 0)`,
			"registrations.student_id, which catalogue_classes reads, is not in the watched columns of catalogue_feeds row registrations" + unwatchedWait,
			"set watched of catalogue_feeds row registrations to '{id,class_id,student_id}' in mapping.sql"},
		{"a mixed-case column through another view", `ALTER TABLE courses RENAME COLUMN name TO "Title";
			CREATE VIEW lms_courses AS SELECT id, "Title", type, description, is_public FROM courses;
			DROP VIEW catalogue_courses; CREATE VIEW catalogue_courses AS
			SELECT id, "Title" AS name, type, description, is_public FROM lms_courses;
			UPDATE catalogue_feeds SET watched = '{id,type,description,is_public}', searched = NULL WHERE source = 'courses'`,
			`courses."Title", which catalogue_courses reads, is not in the watched columns of catalogue_feeds row courses` + unwatchedWait,
			"set watched of catalogue_feeds row courses to '{id,type,description,is_public,Title}' in mapping.sql"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := healthy(t, false)
			if c.sql != "" {
				testkit.Exec(t, o.PrimaryURL, c.sql)
			}
			r := run(t, o)
			var out bytes.Buffer
			_ = r.WriteText(&out)
			got := find(r, "watched columns")
			switch {
			case got == nil:
				t.Errorf("no check %q:\n%s", "watched columns", out.String())
			case c.detail == "" && !got.OK:
				t.Errorf("watched columns = %+v, want passed", *got)
			case c.detail != "" && (got.OK || got.Detail != c.detail || !strings.Contains(got.Fix, c.fix)):
				t.Errorf("watched columns = %+v\nwant failed with the detail %q and a fix holding %q", *got, c.detail, c.fix)
			}
		})
	}
}
