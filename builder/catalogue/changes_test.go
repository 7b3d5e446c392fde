package catalogue

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/builder/freshness"
	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// changeCases are the kinds of change the freshness issue names, and a few that move a
// row between courses, rooms or locations, applied to fixture (today 2027-03-10). maxClasses
// bounds the class documents the change may re-render: it only ever re-reads the classes
// the change names or that sit in what it names. A change to a room or a location moves no
// registration, so it recounts no course's popularity (noRecount).
var changeCases = []struct {
	name       string
	sql        string
	maxClasses int
	noRecount  bool
}{
	{"registration added", `INSERT INTO registrations (class_id) VALUES (102)`, 1, false},
	{"registration removed (class 101 no longer full)", `DELETE FROM registrations WHERE id = (SELECT min(id) FROM registrations WHERE class_id = 101)`, 1, false},
	{"registrations of a non-public class move popular", `INSERT INTO registrations (class_id) SELECT 9100 FROM generate_series(1, 20)`, 1, false},
	{"registration moved to another class", `UPDATE registrations SET class_id = 501 WHERE id = (SELECT min(id) FROM registrations WHERE class_id = 301)`, 2, false},
	{"class cost", `UPDATE classes SET cost = 999 WHERE id = 101`, 1, false},
	{"class hidden", `UPDATE classes SET is_public = FALSE WHERE id = 101`, 1, false},
	{"class shown", `UPDATE classes SET is_public = TRUE WHERE id = 9500`, 1, false},
	{"class moved to the past", `UPDATE classes SET start_date = '2027-03-01' WHERE id = 104`, 1, false},
	{"class moved to another course", `UPDATE classes SET course_id = 3 WHERE id = 104`, 1, false},
	{"class moved to another room", `UPDATE classes SET room_id = 11 WHERE id = 501`, 1, false},
	{"new class", `INSERT INTO classes (id, course_id, room_id, start_date, end_date, schedule, cost, seat_limit, down_payment, is_public)
		VALUES (601, 4, 11, '2027-03-11', '2027-03-12', 'New', 120, 8, 500, TRUE)`, 1, false},
	{"class deleted", `DELETE FROM registrations WHERE class_id = 102; DELETE FROM classes WHERE id = 102`, 1, false},
	{"course renamed", `UPDATE courses SET name = 'Aardvarks' WHERE id = 5`, 3, false},
	{"course description", `UPDATE courses SET description = '<p>new</p>' WHERE id = 3`, 2, false},
	{"course type", `UPDATE courses SET type = 'Online' WHERE id = 1`, 4, false},
	{"course hidden", `UPDATE courses SET is_public = FALSE WHERE id = 1`, 4, false},
	{"course shown", `UPDATE courses SET is_public = TRUE WHERE id = 9001`, 1, false},
	{"new course", `INSERT INTO courses (id, name, type, description, is_public) VALUES (8, 'Botany', 'Online', NULL, TRUE)`, 0, false},
	{"course deleted", `DELETE FROM courses WHERE id = 4`, 0, false},
	{"room renamed", `UPDATE rooms SET name = 'Room Z' WHERE id = 10`, 8, true},
	{"room moved to another location", `UPDATE rooms SET location_id = 2 WHERE id = 10`, 8, true},
	{"location renamed", `UPDATE locations SET city = 'Capital City' WHERE id = 2`, 1, true},
	{"several changes in one transaction", `BEGIN; UPDATE classes SET cost = 1 WHERE id = 202;
		INSERT INTO registrations (class_id) VALUES (501), (501); UPDATE courses SET name = 'Zebra' WHERE id = 2; COMMIT`, 3, false},
}

// TestRenderChangesMatchesRender applies each change to the fixture and checks, through the
// notifications the real triggers sent, that the snapshot before it patched with a partial
// render (RenderChanges over ReadChanges) is byte for byte the full render of the database
// after it: Render's documents are written out by hand in TestRender.
func TestRenderChangesMatchesRender(t *testing.T) {
	for _, tc := range changeCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dbURL := testkit.NewMigratedDatabase(t)
			testkit.Exec(t, dbURL, fixture)
			before := render(t, readURL(t, dbURL))
			set := notified(t, dbURL, tc.sql)
			if set.All() {
				t.Fatalf("the notifications of %q say everything changed, want a list", tc.sql)
			}
			affected := readChanges(t, dbURL, set)
			if n := len(affected.ClassIDs); n > tc.maxClasses {
				t.Errorf("the change re-reads %d classes %v, want at most %d", n, affected.ClassIDs, tc.maxClasses)
			}
			if tc.noRecount && len(affected.ScoreCourseIDs) > 0 {
				t.Errorf("the change recounts the popularity of courses %v, want none", affected.ScoreCourseIDs)
			}
			partial, err := before.State.RenderChanges(affected)
			if err != nil {
				t.Fatalf("RenderChanges: %v", err)
			}
			after := render(t, readURL(t, dbURL))
			patched := maps.Clone(before.Docs)
			maps.Copy(patched, partial.Docs)
			for _, r := range partial.Removed {
				delete(patched, r)
			}
			if diff := cmp.Diff(stringDocs(after.Docs), stringDocs(patched)); diff != "" {
				t.Errorf("documents after %q: full render (-) against the partial one (+):\n%s", tc.sql, diff)
			}
			// The next partial render starts from the state after the change.
			if diff := cmp.Diff(after.State, partial.State, cmp.AllowUnexported(State{})); diff != "" {
				t.Errorf("state after %q: full render (-) against the partial one (+):\n%s", tc.sql, diff)
			}
		})
	}
}

// TestReadChangesOfNothing checks that a change naming nothing re-reads nothing but the
// course lists' and popular's inputs: no course, no class.
func TestReadChangesOfNothing(t *testing.T) {
	dbURL := testkit.NewMigratedDatabase(t)
	testkit.Exec(t, dbURL, fixture)
	d := readChanges(t, dbURL, &freshness.Changes{})
	if len(d.CourseIDs)+len(d.ClassIDs)+len(d.Courses)+len(d.Classes)+len(d.Upcoming)+len(d.Scores) != 0 {
		t.Errorf("ReadChanges of nothing = %+v, want nothing", d)
	}
}

func stringDocs(docs map[string][]byte) map[string]string {
	out := make(map[string]string, len(docs))
	for k, v := range docs {
		out[k] = string(v)
	}
	return out
}

// readURL reads the catalogue of dbURL as the builder does.
func readURL(t *testing.T, dbURL string) *Data {
	t.Helper()
	var d *Data
	inTx(t, dbURL, func(ctx context.Context, tx pgx.Tx) (err error) {
		d, err = Read(ctx, tx, templates.MustDefault())
		return err
	})
	return d
}

// readChanges reads what set names as the builder does.
func readChanges(t *testing.T, dbURL string, set *freshness.Changes) *Affected {
	t.Helper()
	var d *Affected
	inTx(t, dbURL, func(ctx context.Context, tx pgx.Tx) (err error) {
		d, err = ReadChanges(ctx, tx, templates.MustDefault(), set, today)
		return err
	})
	return d
}

func inTx(t *testing.T, dbURL string, f func(context.Context, pgx.Tx) error) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	defer tx.Rollback(ctx)
	if err := f(ctx, tx); err != nil {
		t.Fatal(err)
	}
}

// notified runs sql on dbURL and returns what the notifications it caused say: a listener
// collects them up to a marker sent after sql has committed.
func notified(t *testing.T, dbURL, sql string) *freshness.Changes {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	listener, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer listener.Close(ctx)
	if _, err := listener.Exec(ctx, "LISTEN "+freshness.Channel); err != nil {
		t.Fatalf("listen: %v", err)
	}
	const marker = "end of test change"
	testkit.Exec(t, dbURL, sql)
	testkit.Exec(t, dbURL, "NOTIFY "+freshness.Channel+", '"+marker+"'")
	set := &freshness.Changes{}
	var payloads []string
	for {
		n, err := listener.WaitForNotification(ctx)
		if err != nil {
			t.Fatalf("wait for notifications (got %q): %v", payloads, err)
		}
		if n.Payload == marker {
			break
		}
		payloads = append(payloads, n.Payload)
		if err := set.Add(n.Payload); err != nil {
			t.Fatalf("notification %q: %v", n.Payload, err)
		}
	}
	if set.Empty() {
		t.Fatalf("%q sent no notification", sql)
	}
	slices.Sort(payloads)
	t.Logf("notifications: %q", payloads)
	return set
}
