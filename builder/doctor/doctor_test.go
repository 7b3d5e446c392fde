package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// data is a small catalogue and one API token. With LargeTable at 100, a sequential scan of
// classes (200 rows) or registrations (400) is flagged; courses is read whole by the search
// (the name filter) and 2 rows long.
const data = `
INSERT INTO locations (id, name, city, state, zip, country) VALUES (1, 'Main', 'Springfield', 'IL', '62701', 'US');
INSERT INTO rooms (id, location_id, name) VALUES (10, 1, 'Room A');
INSERT INTO courses (id, name, type, description, is_public) VALUES
  (1, 'Go', 'Online', NULL, TRUE), (2, 'SQL', 'Brick and Mortar', '<p>x</p>', TRUE);
INSERT INTO classes (id, course_id, room_id, start_date, end_date, schedule, cost, seat_limit, down_payment, is_public)
SELECT i, 1 + i % 2, 10, DATE '2027-01-01' + i, DATE '2027-01-02' + i, NULL, 100, 10, NULL, TRUE
FROM generate_series(1, 200) AS i;
INSERT INTO registrations (id, class_id, student_id) SELECT i, 1 + i % 200, i FROM generate_series(1, 400) AS i;
`

// token is an active API token, and statistics for the planner.
const token = `
INSERT INTO api_tokens (name, token_hash) VALUES ('site', '\x00');
ANALYZE;
`

// healthy returns the options of an installation where every check passes: the reference
// schema with data and a token, a replica that is the streaming standby, a local store.
// Without replica, the database is only the primary (replica.url unset: a check that
// passes), which spares the wait for the standby where the replica is not what is broken.
func healthy(t *testing.T, replica bool) Options {
	t.Helper()
	var primary, standby string
	if replica {
		primary, standby = testkit.NewReplicatedDatabase(t)
	} else {
		primary = testkit.NewMigratedDatabase(t)
	}
	testkit.Exec(t, primary, data+token)
	return Options{
		PrimaryURL: primary, ReplicaURL: standby,
		Store:    store.Options(testkit.NewLocalStore(t)),
		Timezone: "America/Chicago", Listen: true, LargeTable: 100,
		// The shared standby of a loaded test machine can fall seconds behind; a lag is
		// not what these tests break.
		ReplicaLag: 30 * time.Second,
	}
}

func run(t *testing.T, o Options) Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return Run(ctx, o)
}

func TestHealthy(t *testing.T) {
	o := healthy(t, true)
	o.Store = store.Options(testkit.NewS3Store(t))
	o.RedisURL = os.Getenv("CATALOGUE_TEST_REDIS_URL")
	r := run(t, o)
	var out bytes.Buffer
	if err := r.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if !r.OK || strings.Contains(out.String(), "✗") {
		t.Errorf("a healthy installation fails:\n%s", out.String())
	}
	for _, name := range []string{"primary database", "replica lag", "mapping on the replica", "store writable", "store pointer", "time zone",
		"columns of catalogue_classes", "course types", "values the builder reads", "ids", "visibility", "searched columns", "feeds", "triggers on registrations", "API tokens"} {
		if find(r, name) == nil {
			t.Errorf("no check %q in:\n%s", name, out.String())
		}
	}
	if o.RedisURL != "" && find(r, "redis") == nil {
		t.Errorf("edge.redis_url set, but no redis check:\n%s", out.String())
	}
}

// TestHealthyExample: the worked example of a provider's own schema (templates/testdata/
// laravel) passes every check with the same data, its indexes included: its mapping's views
// keep the queries off sequential scans of its tables.
// TestWebhookFeedsWithPublicURL: with edge.public_url set, endpoints pass the check that
// their messages name the feeds by absolute URLs; without endpoints there is nothing to check.
func TestWebhookFeedsWithPublicURL(t *testing.T) {
	o := healthy(t, false)
	if c := find(run(t, o), "webhook feed URLs"); c == nil || !c.OK || c.Detail != "no enabled webhook endpoint" {
		t.Errorf("without endpoints: %+v", c)
	}
	testkit.Exec(t, o.PrimaryURL, `INSERT INTO webhook_endpoints (url, secret) VALUES ('https://partner.example/hooks', 'whsec_x')`)
	o.PublicURL = "https://api.example.com"
	want := "1 enabled webhook endpoints; messages name the feeds under https://api.example.com"
	if c := find(run(t, o), "webhook feed URLs"); c == nil || !c.OK || c.Detail != want {
		t.Errorf("with edge.public_url: %+v, want a pass saying %q", c, want)
	}
}

func TestHealthyExample(t *testing.T) {
	s := testkit.Laravel(t)
	db, tpl := s.NewMigratedDatabase(t)
	testkit.Exec(t, db, s.Load(data))
	testkit.Exec(t, db, token)
	r := run(t, Options{PrimaryURL: db, Store: store.Options(testkit.NewLocalStore(t)),
		Timezone: "UTC", Listen: true, LargeTable: 100, Templates: tpl})
	var out bytes.Buffer
	_ = r.WriteText(&out)
	if !r.OK {
		t.Errorf("the example fails:\n%s", out.String())
	}
	for _, name := range []string{"triggers on course_sessions", "triggers on enrolments", "triggers on venues"} {
		if find(r, name) == nil {
			t.Errorf("no check %q:\n%s", name, out.String())
		}
	}
	// Without the example's indexes on enrolments, the seats are counted by reading it whole.
	testkit.Exec(t, db, `DROP INDEX enrolments_seat_idx, enrolments_student_idx`)
	r = run(t, Options{PrimaryURL: db, Store: store.Options(testkit.NewLocalStore(t)),
		Timezone: "UTC", Listen: true, LargeTable: 100, Templates: tpl})
	out.Reset()
	_ = r.WriteText(&out)
	if c := find(r, "indexes for a signed-in student's class read (student.sql)"); c == nil || c.OK ||
		!strings.Contains(c.Detail, "sequential scan of enrolments (400 rows)") {
		t.Errorf("the example without its indexes on enrolments:\n%s", out.String())
	}
}

// TestFinds breaks one thing at a time in a healthy installation: the check that must
// find it fails, says what it found and what to do, and the report is not OK.
func TestFinds(t *testing.T) {
	for _, c := range []struct {
		name   string
		sql    string                     // run on the primary
		change func(*testing.T, *Options) // or a change of the options
		check  string                     // the check that fails
		detail string                     // in its detail
		also   string                     // the start of the names of other checks that may fail with it
	}{
		{"a missing mapped column", `DROP VIEW catalogue_classes; CREATE VIEW catalogue_classes AS
			SELECT id, course_id, room_id, start_date, end_date, cost, seat_limit, down_payment, is_public FROM classes`, nil,
			"columns of catalogue_classes", "missing schedule", "indexes"},
		{"a date that is a timestamp", `DROP VIEW catalogue_classes; CREATE VIEW catalogue_classes AS
			SELECT id, course_id, room_id, start_date::timestamp AS start_date, end_date, schedule, cost, seat_limit, down_payment, is_public FROM classes`, nil,
			"columns of catalogue_classes", "start_date is timestamp without time zone, not a date", "indexes"},
		{"a date that is text", `DROP VIEW catalogue_classes; CREATE VIEW catalogue_classes AS
			SELECT id, course_id, room_id, start_date::text AS start_date, end_date, schedule, cost, seat_limit, down_payment, is_public FROM classes`, nil,
			"columns of catalogue_classes", "start_date is text, not a date", "indexes"},
		{"an id that is not an integer", `DROP VIEW catalogue_courses; CREATE VIEW catalogue_courses AS
			SELECT id::text AS id, name, type, description, is_public FROM courses`, nil,
			"columns of catalogue_courses", "id is text, not an integer", "indexes"},
		{"a fixed-width text (char(n))", `DROP VIEW catalogue_courses; CREATE VIEW catalogue_courses AS
			SELECT id, name, type::char(20) AS type, description, is_public FROM courses`, nil,
			"padded values", "catalogue_courses.type: 2 values shorter than char(20)", ""}, // Online and Brick and Mortar
		{"a missing mapped name", `DROP VIEW catalogue_rooms`, nil,
			"columns of catalogue_rooms", "catalogue_rooms does not exist", "indexes"},
		{"a table missing from the feeds", `DELETE FROM catalogue_feeds WHERE kind = 'registrations'`, nil,
			"feeds", "no table feeds registrations", "tables the views read"},
		{"no table feeding rooms", `DELETE FROM catalogue_feeds WHERE kind IN ('rooms', 'locations')`, nil,
			"feeds", "no table feeds rooms", "tables the views read"},
		{"a type outside the three", `ALTER TABLE courses DROP CONSTRAINT courses_type_check; UPDATE courses SET type = 'Webinar' WHERE id = 2`, nil,
			"course types", `"Webinar" (1 courses)`, ""},
		{"a missing index (sequential scan)", `DROP INDEX registrations_student_idx, registrations_class_idx`, nil,
			"indexes for a signed-in student's class read (student.sql)", "sequential scan of registrations (400 rows)", "indexes for"},
		{"a missing trigger", `DROP TRIGGER catalogue_notify_update ON rooms`, nil,
			"triggers on rooms", "missing or disabled: catalogue_notify_update", ""},
		{"a disabled trigger", `ALTER TABLE classes DISABLE TRIGGER catalogue_search_changed`, nil,
			"triggers on classes", "missing or disabled: catalogue_search_changed", ""},
		{"a public class without an end date", `ALTER TABLE classes ALTER COLUMN end_date DROP NOT NULL;
			UPDATE classes SET end_date = NULL WHERE id IN (7, 5)`, nil,
			"values the builder reads", "catalogue_classes: 2 public classes without a start_date or an end_date, or with an infinite one (id 5 first)", ""},
		{"a class ending at infinity", `UPDATE classes SET end_date = 'infinity' WHERE id = 8`, nil,
			"values the builder reads", "catalogue_classes: 1 public classes without a start_date or an end_date, or with an infinite one (id 8 first)", ""},
		{"a public class without a cost", `ALTER TABLE classes ALTER COLUMN cost DROP NOT NULL; UPDATE classes SET cost = NULL WHERE id = 9`, nil,
			"values the builder reads", "catalogue_classes: 1 public classes without a cost (id 9 first)", ""},
		{"a mapping that repeats a room", `DROP VIEW catalogue_rooms; CREATE VIEW catalogue_rooms AS
			SELECT r.id, r.name, l.id AS location_id, l.name AS location_name, l.city, l.state, l.zip, l.country
			FROM rooms r JOIN locations l ON l.id = r.location_id CROSS JOIN generate_series(1, 2)`, nil,
			"values the builder reads", "catalogue_rooms: 1 ids on more than one row (id 10 first)", "indexes"},
		{"a mapping that repeats a registration", `DROP VIEW catalogue_registrations; CREATE VIEW catalogue_registrations AS
			SELECT r.id, r.class_id, r.student_id, r.test_date FROM registrations r CROSS JOIN generate_series(1, 2)`, nil,
			"values the builder reads", "catalogue_registrations: 400 ids on more than one row (each counted as a seat taken) (id 1 first)", "indexes"},
		{"a public course with a NULL id", `DROP VIEW catalogue_courses; CREATE VIEW catalogue_courses AS
			SELECT NULLIF(id, 2) AS id, name, type, description, is_public FROM courses`, nil,
			"ids", "catalogue_courses: 1 courses with a NULL id", "visibility"}, // its classes have no course
		{"two classes with a NULL id", `DROP VIEW catalogue_classes; CREATE VIEW catalogue_classes AS
			SELECT CASE WHEN id IN (5, 6) THEN NULL ELSE id END AS id, course_id, room_id, start_date, end_date, schedule,
			cost, seat_limit, down_payment, is_public FROM classes`, nil,
			"ids", "catalogue_classes: 2 classes with a NULL id", "indexes"},
		{"a class with a NULL course_id", `ALTER TABLE classes ALTER COLUMN course_id DROP NOT NULL;
			UPDATE classes SET course_id = NULL WHERE id = 3`, nil,
			"ids", "catalogue_classes: 1 classes with a NULL course_id", ""},
		{"a nameless public course with a NULL id", `INSERT INTO courses (id, name, type, is_public) VALUES (3, 'Rust', 'Online', TRUE);
			DROP VIEW catalogue_courses; CREATE VIEW catalogue_courses AS
			SELECT NULLIF(id, 3) AS id, NULLIF(name, 'Rust') AS name, type, description, is_public FROM courses`, nil,
			"values the builder reads", "catalogue_courses: 1 public courses without a name: a build", "ids"},
		{"course ids below 1", `INSERT INTO courses (id, name, type, is_public) VALUES (0, 'Zero', 'Online', TRUE), (-5, 'Minus', 'Online', FALSE)`, nil,
			"ids", "catalogue_courses: 2 courses with an id below 1, whose single read is 404 (D15) (id -5 first)", ""},
		{"a class id above 2^53-1", `INSERT INTO classes (id, course_id, room_id, start_date, end_date, cost, seat_limit, is_public)
			VALUES (9007199254740991, 1, 10, '2027-06-01', '2027-06-02', 100, 10, TRUE), (9007199254740992, 1, 10, '2027-06-01', '2027-06-02', 100, 10, TRUE)`, nil,
			"ids", "catalogue_classes: 1 classes with an id above 2^53-1, which JavaScript reads inexactly (id 9007199254740992 first)", ""},
		{"a courses view that filters (classes without their course)", `DROP VIEW catalogue_courses; CREATE VIEW catalogue_courses AS
			SELECT id, name, type, description, is_public FROM courses WHERE id <> 2`, nil,
			"visibility", "catalogue_classes: 100 classes whose course_id is no row of catalogue_courses (id 1 first)", ""},
		{"a course whose is_public is NULL", `ALTER TABLE courses ALTER COLUMN is_public DROP NOT NULL; UPDATE courses SET is_public = NULL WHERE id = 2`, nil,
			"visibility", "catalogue_courses: 1 courses whose is_public is NULL (id 2 first)", ""},
		{"a view reading a table no feed names", `CREATE TABLE sites (id bigint PRIMARY KEY, town text);
			DROP VIEW catalogue_rooms; CREATE VIEW catalogue_rooms AS
			SELECT r.id, r.name, l.id AS location_id, l.name AS location_name, s.town AS city, l.state, l.zip, l.country
			FROM rooms r JOIN locations l ON l.id = r.location_id LEFT JOIN sites s ON s.id = l.id`, nil,
			"tables the views read", "catalogue_rooms reads sites, which no catalogue_feeds row names", "indexes"},
		{"a searched list missing a column the search matches on", `UPDATE catalogue_feeds SET searched = '{id,course_id,start_date,is_public}'
			WHERE source = 'classes'`, nil,
			"searched columns", "catalogue_classes reads classes.end_date, which the class search matches on", ""},
		{"a view filtered on a column not searched", `ALTER TABLE courses ADD COLUMN deleted_at timestamptz;
			DROP VIEW catalogue_courses; CREATE VIEW catalogue_courses AS
			SELECT id, name, type, description, is_public FROM courses WHERE deleted_at IS NULL;
			UPDATE catalogue_feeds SET watched = watched || '{deleted_at}' WHERE source = 'courses'`, nil,
			"searched columns", "catalogue_courses reads courses.deleted_at, which", "indexes"},
		// A partial index implies the view's condition: a plan scanning it writes no
		// condition, and the column would go unseen (the planner takes it with sequential
		// and bitmap scans disabled).
		{"a view filtered on a column not searched, with an index on it", `ALTER TABLE courses ADD COLUMN deleted_at timestamptz;
			DROP VIEW catalogue_courses; CREATE VIEW catalogue_courses AS
			SELECT id, name, type, description, is_public FROM courses WHERE deleted_at IS NULL;
			UPDATE catalogue_feeds SET watched = watched || '{deleted_at}' WHERE source = 'courses';
			CREATE INDEX ON courses (id, name, type, is_public) WHERE deleted_at IS NULL; ANALYZE courses;
			DO $$ BEGIN
				EXECUTE format('ALTER DATABASE %I SET enable_seqscan = off', current_database());
				EXECUTE format('ALTER DATABASE %I SET enable_bitmapscan = off', current_database());
			END $$`, nil,
			"searched columns", "catalogue_courses reads courses.deleted_at, which", "indexes"},
		{"a course name read from a table fed as another kind", `CREATE TABLE titles (course_id bigint PRIMARY KEY, title text);
			INSERT INTO titles SELECT id, name FROM courses;
			INSERT INTO catalogue_feeds (source, kind, ids, key) VALUES ('titles', 'registrations', 'course_id', 'course_id');
			DROP VIEW catalogue_courses; CREATE VIEW catalogue_courses AS
			SELECT id, (SELECT t.title FROM titles t WHERE t.course_id = courses.id) AS name, type, description, is_public FROM courses`, nil,
			"searched columns", "catalogue_courses reads titles.course_id, titles.title (titles feeds registrations, which keeps no search version)", "triggers on titles"},
		{"no token", `UPDATE api_tokens SET revoked_at = now()`, nil,
			"API tokens", "no active API token", ""},
		{"webhooks without edge.public_url", `INSERT INTO webhook_endpoints (url, secret) VALUES ('https://partner.example/hooks', 'whsec_x')`, nil,
			"webhook feed URLs", "1 enabled webhook endpoints get messages whose feed URLs are paths, which partners cannot fetch: edge.public_url is not set", ""},
		{"an unreachable replica", "", func(t *testing.T, o *Options) { o.ReplicaURL = closedPort(t) },
			"replica database", "cannot connect", ""},
		{"a replica role that cannot read the mapping", "", func(t *testing.T, o *Options) { o.ReplicaURL = asNewRole(t, o.PrimaryURL, o.ReplicaURL) },
			"mapping on the replica", "replica.url cannot read catalogue_courses: ERROR: permission denied", ""},
		{"an unwritable local store", "", func(t *testing.T, o *Options) { o.Store = store.Options(unwritableFolder(t)) },
			"store writable", "create", ""},
		{"an unwritable S3 store", "", func(t *testing.T, o *Options) {
			o.Store = store.Options(testkit.NewS3Store(t))
			t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong")
		},
			"store writable", "create", "store pointer"},
		{"an unreachable primary", "", func(t *testing.T, o *Options) { o.PrimaryURL = closedPort(t) },
			"primary database", "cannot connect", ""},
		{"an unreachable Redis", "", func(t *testing.T, o *Options) { o.RedisURL = "redis://127.0.0.1:1/0" },
			"redis", "connection refused", ""},
		{"an unknown time zone", "", func(t *testing.T, o *Options) { o.Timezone = "Mars/Olympus" },
			"time zone", `"Mars/Olympus"`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(c.name, "S3") { // t.Setenv is not for parallel tests
				t.Parallel()
			}
			o := healthy(t, c.name == "an unreachable primary" || strings.Contains(c.name, "replica role"))
			if c.sql != "" {
				testkit.Exec(t, o.PrimaryURL, c.sql)
			}
			if c.change != nil {
				c.change(t, &o)
			}
			r := run(t, o)
			var out bytes.Buffer
			_ = r.WriteText(&out)
			got := find(r, c.check)
			switch {
			case r.OK:
				t.Errorf("report OK:\n%s", out.String())
			case got == nil:
				t.Errorf("no check %q:\n%s", c.check, out.String())
			case got.OK || !strings.Contains(got.Detail, c.detail) || got.Fix == "":
				t.Errorf("check %q = %+v, want failed with %q in its detail and a fix:\n%s", c.check, *got, c.detail, out.String())
			}
			if c.name == "an unreachable primary" {
				if rc := find(r, "replica database"); rc == nil || !rc.OK {
					t.Errorf("the replica's check without the primary: %+v\n%s", rc, out.String())
				}
			}
			for _, o := range r.Checks {
				if !o.OK && o.Name != c.check && (c.also == "" || !strings.HasPrefix(o.Name, c.also)) {
					t.Errorf("check %q failed too:\n%s", o.Name, out.String())
				}
			}
		})
	}
}

func TestJSON(t *testing.T) {
	r := Report{Checks: []Check{{Name: "a", OK: true, Detail: "fine"}, {Name: "b", Detail: "broken", Fix: "mend"}}}
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := `{"ok":false,"checks":[{"name":"a","ok":true,"detail":"fine"},{"name":"b","ok":false,"detail":"broken","fix":"mend"}]}`
	var w map[string]any
	_ = json.Unmarshal([]byte(want), &w)
	if b1, b2 := mustJSON(got), mustJSON(w); b1 != b2 {
		t.Errorf("JSON %s, want %s", b1, b2)
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func find(r Report, name string) *Check {
	for i := range r.Checks {
		if r.Checks[i].Name == name {
			return &r.Checks[i]
		}
	}
	return nil
}

// closedPort returns a PostgreSQL URL on a loopback port nothing listens on.
// asNewRole creates a login role on primary that has been granted nothing, waits for the
// standby to have it, and returns standby's URL with that role: one that connects but reads
// no view of the mapping.
func asNewRole(t *testing.T, primary, standby string) string {
	t.Helper()
	role := fmt.Sprintf("doctor_ro_%d", time.Now().UnixNano())
	testkit.Exec(t, primary, "CREATE ROLE "+role+" LOGIN")
	t.Cleanup(func() { testkit.Exec(t, primary, "DROP ROLE IF EXISTS "+role) })
	testkit.WaitReplayed(t, primary, standby)
	u, err := url.Parse(standby)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	return u.String()
}

func closedPort(t *testing.T) string {
	t.Helper()
	return "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable&connect_timeout=2"
}

// unwritableFolder is a local store whose folder cannot be created: its parent is a file
// (root ignores permissions, not that).
func unwritableFolder(t *testing.T) config.Store {
	t.Helper()
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return config.Store{URL: "file://" + f + "/catalogue"}
}

// TestReplicaLagOutcomes: the replica check says what it found: the streaming standby
// replays the primary's mark (and how fast), a replica.url that is the primary under another
// URL passes as read as it is, and any other database fails (config/OPERATIONS.md: the
// replica must be a physical standby; an operator's review). The check waits through
// freshness.WaitReplayOn, the wait builder serve makes before a build.
func TestReplicaLagOutcomes(t *testing.T) {
	o := healthy(t, true)
	r := run(t, o)
	if c := find(r, "replica lag"); c == nil || !c.OK || !strings.HasPrefix(c.Detail, "replayed the primary's position within ") {
		t.Errorf("the streaming standby: %+v, want a pass that says it replayed the primary's position", c)
	}
	o.ReplicaURL = o.PrimaryURL + "&application_name=doctor-test" // the primary, under another URL
	r = run(t, o)
	want := "replica.url is the primary's database under another URL: it is read as it is"
	if c := find(r, "replica lag"); c == nil || !c.OK || c.Detail != want {
		t.Errorf("the primary under another URL: %+v, want a pass saying %q", c, want)
	}
	// Another database of the mapping, neither a standby nor the primary: a logical replica
	// or a copy, which a build reads before it has the change (it passed as read as it is).
	o.ReplicaURL = testkit.NewMigratedDatabase(t)
	r = run(t, o)
	if c := find(r, "replica lag"); c == nil || c.OK || !strings.Contains(c.Detail, "neither a standby") || c.Fix == "" {
		t.Errorf("a replica.url that is another database: %+v, want failed as neither a standby nor the primary", c)
	}
}

// TestStoreFixSaysWhatFailed: the store check's fix follows what failed: a store that does
// not answer is a wrong endpoint or a stopped service (it spoke of rights to grant, as for
// a refused key); a refused key may be a wrong key as much as a missing right.
func TestStoreFixSaysWhatFailed(t *testing.T) {
	closed := testkit.NewS3Store(t)
	closed.Endpoint = "http://127.0.0.1:1"
	wrongKey := testkit.NewS3Store(t)
	for _, c := range []struct {
		name string
		st   config.Store
		env  string // AWS_SECRET_ACCESS_KEY when set
		fix  string
	}{
		{"nothing answers", closed, "", "nothing answers there: check store.endpoint"},
		{"a wrong key", wrongKey, "wrong", "check that AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are a key of the store"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.env != "" {
				t.Setenv("AWS_SECRET_ACCESS_KEY", c.env)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			checks := checkStore(ctx, store.Options(c.st))
			if checks[0].OK || !strings.HasPrefix(checks[0].Fix, c.fix) {
				t.Errorf("store writable = %+v, want failed with a fix starting %q", checks[0], c.fix)
			}
		})
	}
}

// TestUUIDIdFix: for a uuid id, the fix is one PostgreSQL can do: "cast it in the mapping
// (col::bigint)" is refused ("cannot cast type uuid to bigint").
func TestUUIDIdFix(t *testing.T) {
	o := healthy(t, false)
	testkit.Exec(t, o.PrimaryURL, `DROP VIEW catalogue_courses; CREATE VIEW catalogue_courses AS
		SELECT md5(id::text)::uuid AS id, name, type, description, is_public FROM courses`)
	c := find(run(t, o), "columns of catalogue_courses")
	want := "id: a uuid cannot be cast to an integer: map an integer key of the row instead"
	if c == nil || c.OK || !strings.Contains(c.Detail, "id is uuid, not an integer") || !strings.Contains(c.Fix, want) {
		t.Errorf("columns of catalogue_courses = %+v, want failed on the uuid id with a fix holding %q", c, want)
	}
}

// TestFixedWidthFix: a char(n) column's fix drops the padding the builder would publish
// ("Online              " is none of the course types): mapped as its fix says, the view
// passes and gives the values unpadded. A char(n) column whose values fill it passes, and
// builds read it (CheckContract): refusing the type stopped every build of a provider with
// a char(2) country (a review of the check).
func TestFixedWidthFix(t *testing.T) {
	o := healthy(t, false)
	testkit.Exec(t, o.PrimaryURL, `DROP VIEW catalogue_courses; CREATE VIEW catalogue_courses AS
		SELECT id, name, type::char(20) AS type, description, is_public FROM courses`)
	c := find(run(t, o), "padded values")
	want := "map each as col::text (or rtrim(col)) in its view"
	if c == nil || c.OK || !strings.Contains(c.Fix, want) {
		t.Fatalf("padded values = %+v, want failed with a fix holding %q", c, want)
	}
	testkit.Exec(t, o.PrimaryURL, `DROP VIEW catalogue_courses; CREATE VIEW catalogue_courses AS
		SELECT id, name, type::char(20)::text AS type, description, is_public FROM courses;
		DROP VIEW catalogue_rooms; CREATE VIEW catalogue_rooms AS
		SELECT ro.id, ro.name, ro.location_id, lo.name AS location_name, lo.city, lo.state, lo.zip, lo.country::char(2) AS country
		FROM rooms ro JOIN locations lo ON lo.id = ro.location_id`)
	r := run(t, o)
	if c := find(r, "padded values"); c == nil || !c.OK || c.Detail != "1 char(n) columns, none holding a value shorter than n" {
		t.Errorf("mapped as col::text, with a char(2) country: %+v, want passed", c)
	}
	if err := CheckContract(context.Background(), testkit.Connect(t, o.PrimaryURL)); err != nil {
		t.Errorf("CheckContract with a char(2) country: %v, want none", err)
	}
	var got string
	conn := testkit.Connect(t, o.PrimaryURL)
	if err := conn.QueryRow(context.Background(), `SELECT type FROM catalogue_courses WHERE id = 1`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "Online" {
		t.Errorf("mapped as col::text, course 1's type is %q, want %q", got, "Online")
	}
}

// TestMixedCaseTables: tables whose names need quoting ("Course") are explained like any
// other: their sizes were looked up unquoted, so "Course" was looked for as course, and
// every query reading it failed with "EXPLAIN failed: no rows in result set" though the
// build works. courses is read whole by the search, registrations without its indexes too.
func TestMixedCaseTables(t *testing.T) {
	o := healthy(t, false)
	testkit.Exec(t, o.PrimaryURL, `ALTER TABLE courses RENAME TO "Course";
		UPDATE catalogue_feeds SET source = '"Course"' WHERE source = 'courses'`)
	r := run(t, o)
	var out bytes.Buffer
	_ = r.WriteText(&out)
	if !r.OK {
		t.Errorf("a table named \"Course\" fails:\n%s", out.String())
	}
	testkit.Exec(t, o.PrimaryURL, `ALTER TABLE registrations RENAME TO "Registrations";
		UPDATE catalogue_feeds SET source = '"Registrations"' WHERE source = 'registrations';
		DROP INDEX registrations_student_idx, registrations_class_idx`)
	r = run(t, o)
	out.Reset()
	_ = r.WriteText(&out)
	want := `sequential scan of "Registrations" (400 rows)`
	if c := find(r, "indexes for a signed-in student's class read (student.sql)"); c == nil || c.OK || c.Detail != want {
		t.Errorf("\"Registrations\" without its indexes: want the student.sql check failed with %q:\n%s", want, out.String())
	}
}

// TestVisibilityFix: classes whose course the courses view filters out are counted in the
// search's total (search.sql, as the edge runs it without its index) but never listed;
// with the visibility check's fix applied to the classes view, doctor passes and the total
// is the number of classes the pages list.
func TestVisibilityFix(t *testing.T) {
	o := healthy(t, false)
	testkit.Exec(t, o.PrimaryURL, `DROP VIEW catalogue_courses; CREATE VIEW catalogue_courses AS
		SELECT id, name, type, description, is_public FROM courses WHERE id <> 2`)
	want := "WHERE EXISTS (SELECT 1 FROM catalogue_courses co WHERE co.id = course_id)"
	if c := find(run(t, o), "visibility"); c == nil || c.OK || !strings.Contains(c.Fix, want) {
		t.Fatalf("visibility = %+v, want failed with a fix holding %q", c, want)
	}
	if listed, total := searchAll(t, o.PrimaryURL); listed != 100 || total != 200 {
		t.Errorf("the filtering courses view: search.sql lists %d classes of a total of %d, want 100 of 200 (the miscount checked for)", listed, total)
	}
	testkit.Exec(t, o.PrimaryURL, `DROP VIEW catalogue_classes; CREATE VIEW catalogue_classes AS
		SELECT id, course_id, room_id, start_date, end_date, schedule, cost, seat_limit, down_payment, is_public FROM classes
		`+want)
	if r := run(t, o); !r.OK {
		var out bytes.Buffer
		_ = r.WriteText(&out)
		t.Errorf("with the fix, doctor fails:\n%s", out.String())
	}
	if listed, total := searchAll(t, o.PrimaryURL); listed != 100 || total != 100 {
		t.Errorf("with the fix: search.sql lists %d classes of a total of %d, want 100 of 100", listed, total)
	}
}

// searchAll runs search.sql without filters on one page large enough for every class, and
// returns how many classes it lists and the total it reports.
func searchAll(t *testing.T, db string) (listed, total int64) {
	t.Helper()
	rows, err := testkit.Connect(t, db).Query(context.Background(), templates.MustDefault().SQL(templates.Search),
		"2026-01-01", nil, nil, nil, nil, nil, 1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		if v[0] != nil {
			listed++
		}
		total = v[len(v)-1].(int64)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return listed, total
}

// TestRoomsOnTheClassRow: a mapping whose rooms are read from the table of the classes (the
// address on the class row) needs no table feeding rooms, and can have none, as a table
// feeds one kind (catalogue_feeds.source is its key): doctor passes it once the classes
// feed watches the address. A change to that table notifies the classes on its rows, whose
// documents carry the room; one of an unwatched column notifies nothing.
func TestRoomsOnTheClassRow(t *testing.T) {
	o := healthy(t, false)
	testkit.Exec(t, o.PrimaryURL, `ALTER TABLE classes ADD COLUMN venue text, ADD COLUMN city text, ADD COLUMN state text;
		DROP VIEW catalogue_rooms, catalogue_classes;
		CREATE VIEW catalogue_classes AS SELECT id, course_id, id AS room_id, start_date, end_date, schedule, cost, seat_limit,
			down_payment, is_public FROM classes;
		CREATE VIEW catalogue_rooms AS SELECT id, venue AS name, id AS location_id, venue AS location_name, city, state,
			NULL::text AS zip, 'US'::text AS country FROM classes;
		DELETE FROM catalogue_feeds WHERE kind IN ('rooms', 'locations')`)
	r := run(t, o)
	var out bytes.Buffer
	_ = r.WriteText(&out)
	const wait = " is not in the watched columns of catalogue_feeds row classes"
	want := "classes.venue, which catalogue_rooms reads," + wait + "; classes.city, which catalogue_rooms reads," + wait +
		"; classes.state, which catalogue_rooms reads," + wait + ": an UPDATE of them alone sets off no build, and waits for builder.schedule"
	fix := "set watched of catalogue_feeds row classes to " +
		"'{id,course_id,room_id,start_date,end_date,schedule,cost,seat_limit,down_payment,is_public,venue,city,state}' in mapping.sql"
	if c := find(r, "watched columns"); c == nil || c.OK || c.Detail != want || !strings.Contains(c.Fix, fix) {
		t.Errorf("rooms read from the classes' table, whose feed does not watch them: want watched columns failed with %q, "+
			"and a fix holding %q:\n%s", want, fix, out.String())
	}
	for _, c := range r.Checks {
		if !c.OK && c.Name != "watched columns" {
			t.Errorf("check %q failed too:\n%s", c.Name, out.String())
		}
	}
	testkit.Exec(t, o.PrimaryURL, `UPDATE catalogue_feeds SET watched = watched || '{venue,city,state}' WHERE source = 'classes'`)
	r = run(t, o)
	out.Reset()
	_ = r.WriteText(&out)
	if !r.OK {
		t.Errorf("rooms read from the classes' table, watched by its feed, fail:\n%s", out.String())
	}
}

// TestTextDateFix: a text start_date's fix is one PostgreSQL can do ("(col AT TIME ZONE
// …)::date" fails on text), and the view mapped as it says passes.
func TestTextDateFix(t *testing.T) {
	o := healthy(t, false)
	testkit.Exec(t, o.PrimaryURL, `DROP VIEW catalogue_classes; CREATE VIEW catalogue_classes AS
		SELECT id, course_id, room_id, to_char(start_date, 'YYYY-MM-DD') AS start_date, end_date, schedule, cost, seat_limit,
		down_payment, is_public FROM classes`)
	c := find(run(t, o), "columns of catalogue_classes")
	want := "start_date: a text value is not a date: map it as to_date(col, 'YYYY-MM-DD')"
	if c == nil || c.OK || !strings.Contains(c.Fix, want) {
		t.Fatalf("columns of catalogue_classes = %+v, want failed with a fix holding %q", c, want)
	}
	testkit.Exec(t, o.PrimaryURL, `DROP VIEW catalogue_classes; CREATE VIEW catalogue_classes AS
		SELECT id, course_id, room_id, to_date(to_char(start_date, 'YYYY-MM-DD'), 'YYYY-MM-DD') AS start_date, end_date, schedule,
		cost, seat_limit, down_payment, is_public FROM classes`)
	if c := find(run(t, o), "columns of catalogue_classes"); c == nil || !c.OK {
		t.Errorf("mapped as to_date(col, 'YYYY-MM-DD'): %+v, want passed", c)
	}
}

// TestUnfedTableFix: the fix for a table no feed names says what can be done with it: a
// materialized view cannot be fed (migrate fails: it "cannot have triggers"), and a feed's
// ids must be the view's ids for its kind, so a table without such a column (orders,
// joined to registrations by order) cannot be fed either.
func TestUnfedTableFix(t *testing.T) {
	for _, c := range []struct {
		name, sql string
		want      []string // in the fix
	}{
		{"a materialized view", `CREATE MATERIALIZED VIEW sites AS SELECT id, city FROM locations;
			DROP VIEW catalogue_rooms; CREATE VIEW catalogue_rooms AS
			SELECT r.id, r.name, l.id AS location_id, l.name AS location_name, s.city, l.state, l.zip, l.country
			FROM rooms r JOIN locations l ON l.id = r.location_id JOIN sites s ON s.id = l.id`,
			[]string{"sites is a materialized view, which cannot be fed", "REFRESH MATERIALIZED VIEW", "builder run", "builder.schedule"}},
		// Its triggers fire only for changes made through it on this server, never for
		// those made in its own, which a feed would then never hear of.
		{"a foreign table", `CREATE FOREIGN DATA WRAPPER elsewhere; CREATE SERVER there FOREIGN DATA WRAPPER elsewhere;
			CREATE FOREIGN TABLE sites (id bigint, city text) SERVER there;
			DROP VIEW catalogue_rooms; CREATE VIEW catalogue_rooms AS
			SELECT r.id, r.name, l.id AS location_id, l.name AS location_name, s.city, l.state, l.zip, l.country
			FROM rooms r JOIN locations l ON l.id = r.location_id JOIN sites s ON s.id = l.id`,
			[]string{"sites is a foreign table, which cannot be fed", "changes made in its own server", "builder run", "builder.schedule"}},
		{"a table joined to registrations", `CREATE TABLE orders (id bigint PRIMARY KEY, paid boolean NOT NULL);
			ALTER TABLE registrations ADD COLUMN order_id bigint;
			DROP VIEW catalogue_registrations; CREATE VIEW catalogue_registrations AS
			SELECT r.id, r.class_id, r.student_id, r.test_date FROM registrations r LEFT JOIN orders o ON o.id = r.order_id
			WHERE o.paid IS NOT FALSE`,
			[]string{"orders: kind registrations, with ids a column of it holding the class_id of the registrations it changes",
				"A table without such a column (orders joined to registrations by order) cannot be fed", "builder.schedule"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := healthy(t, false)
			testkit.Exec(t, o.PrimaryURL, c.sql)
			got := find(run(t, o), "tables the views read")
			if got == nil || got.OK {
				t.Fatalf("tables the views read = %+v, want failed", got)
			}
			for _, w := range c.want {
				if !strings.Contains(got.Fix, w) {
					t.Errorf("fix %q, want it to hold %q", got.Fix, w)
				}
			}
		})
	}
}
