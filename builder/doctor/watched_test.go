package doctor

import (
	"bytes"
	"strings"
	"testing"

	"github.com/trainingco/catalogue/scripts/testkit"
)

// unwatchedWait ends the detail of a failed watched columns check with one column.
const unwatchedWait = ": an UPDATE of it alone sets off no build, and waits for builder.schedule"

// registrationsByStatus keeps a cancelled registration out of catalogue_registrations, as
// the Laravel example does (templates/testdata/laravel).
const registrationsByStatus = `ALTER TABLE registrations ADD COLUMN status text NOT NULL DEFAULT 'confirmed';
	DROP VIEW catalogue_registrations; CREATE VIEW catalogue_registrations AS
	SELECT id, class_id, student_id, test_date FROM registrations WHERE status <> 'cancelled'`

// TestWatchedColumns: a feed's watched list must name every column of its table that
// catalogue_courses, catalogue_classes and catalogue_rooms read, and its ids: an UPDATE of
// another sends no notification (notify.sql), and the change waits for builder.schedule.
// Of what catalogue_registrations reads, only the columns that feed nothing but its
// student_id and test_date are exempt (a signed-in student's live read shows them, no
// published document): what decides its rows is watched, or a cancelled registration keeps
// its seat until the schedule (a review of 8e6055a: a view filtered on status <> 'cancelled'
// passed). A registrations table the other views read is not exempt. The rooms read from
// the class row are TestRoomsOnTheClassRow's.
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
		{"registrations watching only class_id", `UPDATE catalogue_feeds SET watched = '{class_id}' WHERE source = 'registrations'`,
			"registrations.id, which catalogue_registrations reads, is not in the watched columns of catalogue_feeds row registrations" + unwatchedWait,
			"set watched of catalogue_feeds row registrations to '{class_id,id}' in mapping.sql"},
		{"registrations without their ids", `UPDATE catalogue_feeds SET watched = '{id}' WHERE source = 'registrations'`,
			"registrations.class_id, which catalogue_registrations reads (the row's ids), is not in the watched columns of catalogue_feeds row registrations" + unwatchedWait,
			"set watched of catalogue_feeds row registrations to '{id,class_id}' in mapping.sql"},
		{"registrations filtered on a status not watched", registrationsByStatus,
			"registrations.status, which catalogue_registrations reads, is not in the watched columns of catalogue_feeds row registrations" + unwatchedWait,
			"set watched of catalogue_feeds row registrations to '{id,class_id,status}' in mapping.sql"},
		{"registrations filtered on a status watched", registrationsByStatus +
			`; UPDATE catalogue_feeds SET watched = '{id,class_id,status}' WHERE source = 'registrations'`, "", ""},
		// A partial index on the view's condition: an index scan of it leaves the condition
		// out of the plan (the planner takes one with sequential and bitmap scans disabled).
		{"registrations filtered on a status not watched, with an index on it", registrationsByStatus +
			`; CREATE INDEX ON registrations (class_id, id) WHERE status <> 'cancelled'; ANALYZE registrations;
			DO $$ BEGIN
				EXECUTE format('ALTER DATABASE %I SET enable_seqscan = off', current_database());
				EXECUTE format('ALTER DATABASE %I SET enable_bitmapscan = off', current_database());
			END $$`,
			"registrations.status, which catalogue_registrations reads, is not in the watched columns of catalogue_feeds row registrations" + unwatchedWait,
			"'{id,class_id,status}'"},
		{"a student's columns under other names and through expressions", `ALTER TABLE registrations RENAME COLUMN student_id TO user_id;
			ALTER TABLE registrations ADD COLUMN guest_id bigint, ADD COLUMN exam_on date;
			DROP VIEW catalogue_registrations; CREATE VIEW catalogue_registrations AS
			SELECT id, class_id, COALESCE(user_id, guest_id) AS student_id, COALESCE(exam_on, test_date) AS test_date FROM registrations`, "", ""},
		{"a student's column that also decides the seats", `DROP VIEW catalogue_registrations; CREATE VIEW catalogue_registrations AS
			SELECT id, class_id, student_id, test_date FROM registrations WHERE student_id IS NOT NULL`,
			"registrations.student_id, which catalogue_registrations reads, is not in the watched columns of catalogue_feeds row registrations" + unwatchedWait,
			"'{id,class_id,student_id}'"},
		{"registrations joined to a table of their own", `CREATE TABLE enrolment_states (registration_id bigint PRIMARY KEY, cancelled boolean NOT NULL);
			INSERT INTO catalogue_feeds (source, kind, ids, key, watched) VALUES ('enrolment_states', 'registrations', 'registration_id', 'registration_id', '{registration_id}');
			DROP VIEW catalogue_registrations; CREATE VIEW catalogue_registrations AS
			SELECT r.id, r.class_id, r.student_id, r.test_date FROM registrations r
			JOIN enrolment_states s ON s.registration_id = r.id AND NOT s.cancelled`,
			"enrolment_states.cancelled, which catalogue_registrations reads, is not in the watched columns of catalogue_feeds row enrolment_states" + unwatchedWait,
			"'{registration_id,cancelled}'"},
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
