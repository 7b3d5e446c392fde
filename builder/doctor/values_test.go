package doctor

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// fixOf returns the part of a columns check's fix about column col ("col: …"), or "".
func fixOf(c *Check, col string) string {
	for _, f := range strings.Split(c.Fix, "; ") {
		if strings.HasPrefix(f, col+": ") {
			return f
		}
	}
	return ""
}

// TestTimestampDateFix: a timestamp start_date's fix gives the day the provider wrote. A
// timestamp without time zone is a local time: its day is col::date, while (col AT TIME ZONE
// zone)::date turns it into an instant and takes that instant's day in the session's zone
// (UTC here), so a class starting 2027-07-15 00:30 in London was published as starting
// 2027-07-14. A timestamptz is an instant: its day is its day in the provider's zone.
func TestTimestampDateFix(t *testing.T) {
	o := healthy(t, false)
	testkit.Exec(t, o.PrimaryURL, `ALTER TABLE classes ADD COLUMN begins timestamp;
		UPDATE classes SET begins = start_date + time '12:00'; UPDATE classes SET begins = '2027-07-15 00:30' WHERE id = 1`)
	view := func(startDate string) string {
		return `DROP VIEW catalogue_classes; CREATE VIEW catalogue_classes AS SELECT id, course_id, room_id, ` + startDate +
			` AS start_date, end_date, schedule, cost, seat_limit, down_payment, is_public FROM classes`
	}
	for _, c := range []struct {
		name, startDate, want, not string
	}{
		{"timestamp without time zone", "begins", "start_date: a timestamp is not a date: map it as col::date", "AT TIME ZONE '"},
		{"timestamptz", "begins AT TIME ZONE 'Europe/London'",
			"start_date: a timestamptz is not a date: map it as (col AT TIME ZONE 'the provider''s zone')::date", "map it as col::date"},
	} {
		testkit.Exec(t, o.PrimaryURL, view(c.startDate))
		got := find(run(t, o), "columns of catalogue_classes")
		if got == nil || got.OK || !strings.HasPrefix(fixOf(got, "start_date"), c.want) || strings.Contains(got.Fix, c.not) {
			t.Errorf("a %s start_date: columns of catalogue_classes = %+v, want failed with a fix starting %q, without %q",
				c.name, got, c.want, c.not)
		}
	}
	// Mapped as the fix says, the view passes and gives the day the provider wrote.
	testkit.Exec(t, o.PrimaryURL, view("begins::date"))
	if c := find(run(t, o), "columns of catalogue_classes"); c == nil || !c.OK {
		t.Errorf("mapped as col::date: %+v, want passed", c)
	}
	var got time.Time
	conn := testkit.Connect(t, o.PrimaryURL)
	if err := conn.QueryRow(context.Background(), `SELECT start_date FROM catalogue_classes WHERE id = 1`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if d := got.Format(time.DateOnly); d != "2027-07-15" {
		t.Errorf("mapped as col::date, a class starting 2027-07-15 00:30 starts on %s", d)
	}
}

// TestIntegerFixes: an integer column's fix follows what the column means. down_payment is
// an amount in cents (public-catalogue-api.md 2.4), so a numeric amount in whole units is
// round(col * 100): round(col) published 100.50 as 101 cents. cost's unit the contract does
// not say, so a numeric price is rounded as it is. An id is no price: its fix is a cast.
func TestIntegerFixes(t *testing.T) {
	o := healthy(t, false)
	testkit.Exec(t, o.PrimaryURL, `ALTER TABLE classes ADD COLUMN fee numeric(10,2), ADD COLUMN deposit numeric(10,2);
		UPDATE classes SET fee = 499.99, deposit = 100.50;
		DROP VIEW catalogue_classes; CREATE VIEW catalogue_classes AS
		SELECT id::numeric AS id, course_id, room_id, start_date, end_date, schedule, fee AS cost, seat_limit, deposit AS down_payment,
		is_public FROM classes`)
	c := find(run(t, o), "columns of catalogue_classes")
	if c == nil || c.OK {
		t.Fatalf("columns of catalogue_classes = %+v, want failed on id, cost and down_payment", c)
	}
	for col, want := range map[string]string{
		"id":           "id: cast it in the mapping (col::bigint)",
		"cost":         "cost: a numeric price in whole units: round(col)::integer",
		"down_payment": "down_payment: an amount in cents (public-catalogue-api.md 2.4): one in whole units is round(col * 100)::bigint",
	} {
		if got := fixOf(c, col); !strings.HasPrefix(got, want) {
			t.Errorf("%s's fix is %q, want it to start %q", col, got, want)
		}
	}
	if n := strings.Count(c.Fix, "price"); n != 1 {
		t.Errorf("fix %q speaks of a price %d times, want once (cost's)", c.Fix, n)
	}
	// Mapped as the fix says, the view passes and gives 100.50 as 10050 cents.
	testkit.Exec(t, o.PrimaryURL, `DROP VIEW catalogue_classes; CREATE VIEW catalogue_classes AS
		SELECT id::numeric::bigint AS id, course_id, room_id, start_date, end_date, schedule, round(fee)::integer AS cost, seat_limit,
		round(deposit * 100)::bigint AS down_payment, is_public FROM classes`)
	if c := find(run(t, o), "columns of catalogue_classes"); c == nil || !c.OK {
		t.Errorf("mapped as the fixes say: %+v, want passed", c)
	}
	var cents int64
	conn := testkit.Connect(t, o.PrimaryURL)
	if err := conn.QueryRow(context.Background(), `SELECT down_payment FROM catalogue_classes WHERE id = 1`).Scan(&cents); err != nil {
		t.Fatal(err)
	}
	if cents != 10050 {
		t.Errorf("a down payment of 100.50 mapped as the fix says is %d cents, want 10050", cents)
	}
}

// TestStudentValues: catalogue_registrations' student_id and test_date are read by no build,
// only by a signed-in student's class read on the edge (student.sql). A mapping whose values
// do not convert (learner codes cast to bigint, dates in two formats) passed doctor and every
// build, and that read then failed (503); doctor reads the values and names the column and
// the error, and the view mapped as its fix says passes and answers the read.
func TestStudentValues(t *testing.T) {
	o := healthy(t, false)
	testkit.Exec(t, o.PrimaryURL, `ALTER TABLE registrations ADD COLUMN learner_code text, ADD COLUMN exam_on text;
		UPDATE registrations SET learner_code = 'L' || lpad(student_id::text, 4, '0');
		UPDATE registrations SET exam_on = '14/03/2027' WHERE id = 1; UPDATE registrations SET exam_on = '2027-06-02' WHERE id = 2;
		DROP VIEW catalogue_registrations; CREATE VIEW catalogue_registrations AS
		SELECT id, class_id, learner_code::bigint AS student_id, to_date(exam_on, 'DD/MM/YYYY') AS test_date FROM registrations`)
	conn := testkit.Connect(t, o.PrimaryURL)
	student := func() error {
		var reg *int64
		var prev *time.Time
		return conn.QueryRow(context.Background(), templates.MustDefault().SQL(templates.Student), "1", 2, 1).Scan(&reg, &prev)
	}
	if err := student(); err == nil {
		t.Fatal("student.sql reads learner codes cast to bigint, want it to fail as the edge's read does")
	}
	c := find(run(t, o), "values the builder reads")
	for _, want := range []string{`catalogue_registrations.student_id: ERROR: invalid input syntax for type bigint: "L0`, // the first row read
		`catalogue_registrations.test_date: ERROR: date/time field value out of range: "2027-06-02"`, "student.sql"} {
		if c == nil || c.OK || !strings.Contains(c.Detail, want) {
			t.Errorf("values the builder reads = %+v, want failed with %q in its detail", c, want)
		}
	}
	// The fix converts each format the column holds: a date in the other one is not lost.
	if c == nil || !strings.Contains(c.Fix, "one WHEN for each format the column holds") {
		t.Errorf("values the builder reads = %+v, want a test_date fix converting each format", c)
	}
	testkit.Exec(t, o.PrimaryURL, `DROP VIEW catalogue_registrations; CREATE VIEW catalogue_registrations AS
		SELECT id, class_id, NULLIF(regexp_replace(learner_code, '\D', '', 'g'), '')::bigint AS student_id,
		CASE WHEN exam_on ~ '^\d\d/\d\d/\d{4}$' THEN to_date(exam_on, 'DD/MM/YYYY')
		     WHEN exam_on ~ '^\d{4}-\d\d-\d\d$' THEN to_date(exam_on, 'YYYY-MM-DD') END AS test_date FROM registrations`)
	if c := find(run(t, o), "values the builder reads"); c == nil || !c.OK {
		t.Errorf("mapped as the fix says: %+v, want passed", c)
	}
	var both int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM catalogue_registrations
		WHERE (id, test_date) IN ((1, date '2027-03-14'), (2, date '2027-06-02'))`).Scan(&both); err != nil || both != 2 {
		t.Errorf("test dates in both formats after the fix: %d of 2 (%v)", both, err)
	}
	if err := student(); err != nil {
		t.Errorf("mapped as the fix says, student.sql fails: %v", err)
	}
}

// TestRoomWithoutRow: a public class whose room_id is no row of catalogue_rooms (a rooms
// view that leaves out retired rooms, and a classes view that does not) was published with
// no room and no location, as a class with no room assigned is; doctor names how many and
// the first. A class with no room (NULL) or a class that is not public is not counted.
func TestRoomWithoutRow(t *testing.T) {
	o := healthy(t, false)
	testkit.Exec(t, o.PrimaryURL, `INSERT INTO rooms (id, location_id, name) VALUES (11, 1, 'Hall');
		ALTER TABLE classes ALTER COLUMN room_id DROP NOT NULL;
		UPDATE classes SET room_id = 11 WHERE id IN (6, 4, 9); UPDATE classes SET is_public = FALSE WHERE id = 9;
		UPDATE classes SET room_id = NULL WHERE id = 3;
		DROP VIEW catalogue_rooms; CREATE VIEW catalogue_rooms AS
		SELECT ro.id, ro.name, ro.location_id, lo.name AS location_name, lo.city, lo.state, lo.zip, lo.country
		FROM rooms ro JOIN locations lo ON lo.id = ro.location_id WHERE ro.id <> 11`)
	r := run(t, o)
	var out bytes.Buffer
	_ = r.WriteText(&out)
	want := "catalogue_classes: 2 public classes whose room_id is no row of catalogue_rooms (id 4 first)"
	c := find(r, "values the builder reads")
	if c == nil || c.OK || !strings.Contains(c.Detail, want+": they are published without their room and location") || !strings.Contains(c.Fix, "room_id") {
		t.Errorf("a rooms view leaving out a room of public classes: want values the builder reads failed with %q, what it does, "+
			"and a fix about room_id:\n%s", want, out.String())
	}
	// Its fix is this problem's alone: nothing about dates, costs or repeated ids.
	for _, other := range []string{"dates", "cost", "one row per"} {
		if c != nil && strings.Contains(c.Fix+c.Detail, other) {
			t.Errorf("the check's fix or detail speaks of %q, a problem it did not find:\n%s", other, out.String())
		}
	}
	for _, o := range r.Checks {
		if !o.OK && o.Name != "values the builder reads" {
			t.Errorf("check %q failed too:\n%s", o.Name, out.String())
		}
	}
}

// TestUnsizedPadding: a character column of no declared width (COALESCE over a char(6) and a
// literal) has no character_maximum_length: doctor failed to read it ("cannot scan NULL into
// *int") and said nothing of its values, which a build published padded ("R1    "). Its
// padded values are found and the column named, and mapped as the fix says it passes.
func TestUnsizedPadding(t *testing.T) {
	o := healthy(t, false)
	rooms := func(name string) string {
		return `DROP VIEW catalogue_rooms; CREATE VIEW catalogue_rooms AS
			SELECT ro.id, ` + name + ` AS name, ro.location_id, lo.name AS location_name, lo.city, lo.state, lo.zip, lo.country
			FROM rooms ro JOIN locations lo ON lo.id = ro.location_id`
	}
	testkit.Exec(t, o.PrimaryURL, `ALTER TABLE rooms ADD COLUMN code char(6); UPDATE rooms SET code = 'R1';
		INSERT INTO rooms (id, location_id, name) VALUES (11, 1, 'Hall');`+rooms("COALESCE(ro.code, 'TBA')"))
	c := find(run(t, o), "padded values")
	want := "catalogue_rooms.name: 1 values padded with blanks"
	if c == nil || c.OK || !strings.Contains(c.Detail, want) || !strings.Contains(c.Fix, "map each as col::text") {
		t.Errorf("padded values = %+v, want failed with %q in its detail and a fix", c, want)
	}
	testkit.Exec(t, o.PrimaryURL, rooms("COALESCE(ro.code, 'TBA')::text"))
	if c := find(run(t, o), "padded values"); c == nil || !c.OK {
		t.Errorf("mapped as col::text: %+v, want passed", c)
	}
}

// TestEveryServedProblemHasARemedy: each problem servedValues can report says what it does
// and how to fix it (servedRemedies), so that none is reported without a fix.
func TestEveryServedProblemHasARemedy(t *testing.T) {
	whats := regexp.MustCompile(`'catalogue_\w+', '([^']+)'`).FindAllStringSubmatch(servedValues, -1)
	if len(whats) < 8 {
		t.Fatalf("found %d problems in servedValues, want its 8", len(whats))
	}
	for _, w := range whats {
		if r, ok := servedRemedies[w[1]]; !ok || r.why == "" || r.fix == "" {
			t.Errorf("servedValues' problem %q has no remedy", w[1])
		}
	}
}

// TestShiftedLocalDay: a start_date mapped (begins AT TIME ZONE 'Europe/London')::date over a
// timestamp without time zone (the fix doctor gave before 50e5179) is a date, so the columns
// check passes it, but it is the session's day of that instant: a class at 2027-07-15 00:30
// reads 2027-07-14 under UTC. The days check fails it, naming the column and begins::date;
// begins::date, a timestamptz shifted, and a timestamp of UTC times shifted twice pass.
func TestShiftedLocalDay(t *testing.T) {
	o := healthy(t, false)
	testkit.Exec(t, o.PrimaryURL, `ALTER TABLE classes ADD COLUMN begins timestamp, ADD COLUMN begins_at timestamptz;
		UPDATE classes SET begins = start_date + time '12:00', begins_at = start_date + time '12:00';
		UPDATE classes SET begins = '2027-07-15 00:30' WHERE id = 1`)
	view := func(startDate string) string {
		return `DROP VIEW catalogue_classes; CREATE VIEW catalogue_classes AS SELECT c.id, c.course_id, c.room_id, ` + startDate +
			` AS start_date, c.end_date, c.schedule, c.cost, c.seat_limit, c.down_payment, c.is_public FROM classes c`
	}
	testkit.Exec(t, o.PrimaryURL, view("(c.begins AT TIME ZONE 'Europe/London')::date"))
	var day string
	conn := testkit.Connect(t, o.PrimaryURL)
	if _, err := conn.Exec(context.Background(), `SET TIME ZONE 'UTC'`); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(context.Background(), `SELECT start_date::text FROM catalogue_classes WHERE id = 1`).Scan(&day); err != nil || day != "2027-07-14" {
		t.Fatalf("the shifted day under UTC: %q (%v), want 2027-07-14 (the case this check is for)", day, err)
	}
	r := run(t, o)
	var out bytes.Buffer
	_ = r.WriteText(&out)
	c := find(r, "days of catalogue_classes")
	want := "start_date is (classes.begins AT TIME ZONE 'Europe/London')::date over a timestamp without time zone"
	if c == nil || c.OK || !strings.Contains(c.Detail, want) || !strings.Contains(c.Fix, "map start_date as classes.begins::date") {
		t.Errorf("a local time shifted: want days of catalogue_classes failed with %q and begins::date as its fix:\n%s", want, out.String())
	}
	if cols := find(r, "columns of catalogue_classes"); cols == nil || !cols.OK {
		t.Errorf("columns of catalogue_classes: %+v, want passed (start_date is a date)", cols)
	}
	for _, ok := range []string{"c.begins::date", "(c.begins_at AT TIME ZONE 'Europe/London')::date",
		"(c.begins AT TIME ZONE 'UTC' AT TIME ZONE 'Europe/London')::date"} {
		testkit.Exec(t, o.PrimaryURL, view(ok))
		if c := find(run(t, o), "days of catalogue_classes"); c == nil || !c.OK {
			t.Errorf("start_date as %s: %+v, want passed", ok, c)
		}
	}
}

// TestShiftedDayForms: EXPLAIN writes a zone shift as AT TIME ZONE from PostgreSQL 15 on
// and as timezone() before; both are read, a shift of a shift (UTC times) is neither.
func TestShiftedDayForms(t *testing.T) {
	for _, tt := range []struct {
		expr, alias, col, zone string
	}{
		{`((c.begins AT TIME ZONE 'Europe/London'::text))::date`, "c", "begins", "Europe/London"},
		{`(timezone('Europe/London'::text, c.begins))::date`, "c", "begins", "Europe/London"},
		{`(("S"."Begins At" AT TIME ZONE 'America/St_Johns'::text))::date`, `"S"`, `"Begins At"`, "America/St_Johns"},
		{`(((c.begins AT TIME ZONE 'UTC'::text) AT TIME ZONE 'Europe/London'::text))::date`, "", "", ""},
		{`(c.begins)::date`, "", "", ""},
	} {
		m := submatches(shiftedDay, tt.expr)
		if m["alias"] != tt.alias || m["col"] != tt.col || m["zone"] != tt.zone {
			t.Errorf("%s: %v, want alias %q, column %q, zone %q", tt.expr, m, tt.alias, tt.col, tt.zone)
		}
	}
}
