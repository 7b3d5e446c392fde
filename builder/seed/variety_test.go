package seed

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestSeedVariety checks that the sample data holds every kind of row the catalogue's rules
// distinguish, so that demos and tests built on it exercise them.
func TestSeedVariety(t *testing.T) {
	conn := seeded(t, small)
	rows, err := conn.Query(context.Background(), `
		SELECT 'non-public course', EXISTS (SELECT 1 FROM courses WHERE NOT is_public)
		UNION ALL SELECT 'public course', EXISTS (SELECT 1 FROM courses WHERE is_public)
		UNION ALL SELECT 'type Online', EXISTS (SELECT 1 FROM courses WHERE type = 'Online')
		UNION ALL SELECT 'type Brick and Mortar', EXISTS (SELECT 1 FROM courses WHERE type = 'Brick and Mortar')
		UNION ALL SELECT 'type Blended', EXISTS (SELECT 1 FROM courses WHERE type = 'Blended')
		UNION ALL SELECT 'HTML description', EXISTS (SELECT 1 FROM courses WHERE description LIKE '<p>%</p>%')
		UNION ALL SELECT 'course without classes', EXISTS (SELECT 1 FROM courses c WHERE NOT EXISTS (SELECT 1 FROM classes WHERE course_id = c.id))
		UNION ALL SELECT 'non-public class', EXISTS (SELECT 1 FROM classes WHERE NOT is_public)
		UNION ALL SELECT 'capped class', EXISTS (SELECT 1 FROM classes WHERE seat_limit IS NOT NULL)
		UNION ALL SELECT 'uncapped class', EXISTS (SELECT 1 FROM classes WHERE seat_limit IS NULL)
		UNION ALL SELECT 'class with a room', EXISTS (SELECT 1 FROM classes WHERE room_id IS NOT NULL)
		UNION ALL SELECT 'class without a room', EXISTS (SELECT 1 FROM classes WHERE room_id IS NULL)
		UNION ALL SELECT 'class with a schedule', EXISTS (SELECT 1 FROM classes WHERE schedule IS NOT NULL)
		UNION ALL SELECT 'class without a schedule', EXISTS (SELECT 1 FROM classes WHERE schedule IS NULL)
		UNION ALL SELECT 'class with a down payment', EXISTS (SELECT 1 FROM classes WHERE down_payment IS NOT NULL)
		UNION ALL SELECT 'class without a down payment', EXISTS (SELECT 1 FROM classes WHERE down_payment IS NULL)
		UNION ALL SELECT 'past class', EXISTS (SELECT 1 FROM classes WHERE start_date < $1)
		UNION ALL SELECT 'class starting today or later', EXISTS (SELECT 1 FROM classes WHERE start_date >= $1)
		UNION ALL SELECT 'dates within -120..+365 days', NOT EXISTS (SELECT 1 FROM classes WHERE start_date < $1::date - 120 OR start_date > $1::date + 365 OR end_date < start_date)
		UNION ALL SELECT 'full class', EXISTS (SELECT 1 FROM classes c WHERE seat_limit <= (SELECT count(*) FROM registrations WHERE class_id = c.id))
		UNION ALL SELECT 'capped class with seats left', EXISTS (SELECT 1 FROM classes c WHERE seat_limit > (SELECT count(*) FROM registrations WHERE class_id = c.id))
		UNION ALL SELECT 'registrations before today', NOT EXISTS (SELECT 1 FROM registrations WHERE created_at >= $1)
		UNION ALL SELECT 'registration with a test date', EXISTS (SELECT 1 FROM registrations WHERE test_date IS NOT NULL)
		UNION ALL SELECT 'registration of a past class without a test date', EXISTS (SELECT 1 FROM registrations r JOIN classes c ON c.id = r.class_id WHERE r.student_id IS NOT NULL AND c.end_date < $1 AND r.test_date IS NULL)
		UNION ALL SELECT 'test dates 1..30 days after the class, with a student', NOT EXISTS (SELECT 1 FROM registrations r JOIN classes c ON c.id = r.class_id WHERE r.test_date IS NOT NULL AND (r.student_id IS NULL OR r.test_date NOT BETWEEN c.end_date + 1 AND c.end_date + 30))
		UNION ALL SELECT 'a student with test dates in two classes of one course', EXISTS (SELECT 1 FROM registrations r JOIN classes c ON c.id = r.class_id WHERE r.test_date IS NOT NULL GROUP BY r.student_id, c.course_id HAVING count(DISTINCT r.class_id) > 1)
		UNION ALL SELECT 'location with all fields', EXISTS (SELECT 1 FROM locations WHERE name <> '' AND city <> '' AND state <> '' AND zip <> '' AND country <> '')`,
		today)
	if err != nil {
		t.Fatalf("query the seeded data: %v", err)
	}
	got := map[string]bool{}
	want := map[string]bool{}
	for rows.Next() {
		var what string
		var holds bool
		if err := rows.Scan(&what, &holds); err != nil {
			t.Fatalf("read the seeded data: %v", err)
		}
		got[what] = holds
		want[what] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read the seeded data: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Seed(%+v) variety mismatch (-want +got):\n%s", small, diff)
	}
}

// fingerprint returns an md5 of the ordered rows of each seeded table.
func fingerprint(t *testing.T, conn *pgx.Conn) []string {
	t.Helper()
	var sums [5]string
	err := conn.QueryRow(context.Background(), `SELECT
		(SELECT md5(COALESCE(string_agg(t::text, E'\n' ORDER BY t.id), '')) FROM courses t),
		(SELECT md5(COALESCE(string_agg(t::text, E'\n' ORDER BY t.id), '')) FROM locations t),
		(SELECT md5(COALESCE(string_agg(t::text, E'\n' ORDER BY t.id), '')) FROM rooms t),
		(SELECT md5(COALESCE(string_agg(t::text, E'\n' ORDER BY t.id), '')) FROM classes t),
		(SELECT md5(COALESCE(string_agg(t::text, E'\n' ORDER BY t.id), '')) FROM registrations t)`).
		Scan(&sums[0], &sums[1], &sums[2], &sums[3], &sums[4])
	if err != nil {
		t.Fatalf("fingerprint the tables: %v", err)
	}
	return sums[:]
}

func TestSeedIsDeterministic(t *testing.T) {
	a := fingerprint(t, seeded(t, small))
	b := fingerprint(t, seeded(t, small))
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two seeds with %+v differ (-first +second):\n%s", small, diff)
	}
	other := small
	other.Seed++
	c := fingerprint(t, seeded(t, other))
	for i, table := range []string{"courses", "locations", "rooms", "classes", "registrations"} {
		if a[i] == c[i] {
			t.Errorf("%s: seeds %d and %d gave identical rows, want different data", table, small.Seed, other.Seed)
		}
	}
}

func TestSeedRefusesDataWithoutReset(t *testing.T) {
	ctx := context.Background()
	conn := seeded(t, small)
	if _, err := conn.Exec(ctx, `INSERT INTO api_tokens (name, token_hash) VALUES ('kept', '\x00')`); err != nil {
		t.Fatalf("insert a token: %v", err)
	}
	again := Options{Courses: 5, Classes: 10, Registrations: 20, Seed: 1, Today: today}
	if _, err := Seed(ctx, conn, again); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("Seed on a seeded database error = %v, want ErrNotEmpty", err)
	}
	if diff := cmp.Diff(Stats{Courses: 60, Locations: 3, Rooms: counts(t, conn).Rooms, Classes: 1500, Registrations: 12000}, counts(t, conn)); diff != "" {
		t.Errorf("rows after a refused Seed mismatch (-want +got):\n%s", diff)
	}
	again.Reset = true
	if _, err := Seed(ctx, conn, again); err != nil {
		t.Fatalf("Seed with Reset: %v", err)
	}
	if diff := cmp.Diff(fingerprint(t, seeded(t, Options{Courses: 5, Classes: 10, Registrations: 20, Seed: 1, Today: today})), fingerprint(t, conn)); diff != "" {
		t.Errorf("Seed with Reset differs from a seed of an empty database (-empty +reset):\n%s", diff)
	}
	var tokens int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM api_tokens`).Scan(&tokens); err != nil || tokens != 1 {
		t.Errorf("api_tokens after Seed with Reset = %d (%v), want the 1 token kept", tokens, err)
	}
}

// TestSeedAdvancesSequences checks that rows inserted without an id after a seed get fresh ids.
func TestSeedAdvancesSequences(t *testing.T) {
	ctx := context.Background()
	conn := seeded(t, small)
	var ids [4]int64
	err := conn.QueryRow(ctx, `WITH
		c AS (INSERT INTO courses (name, type) VALUES ('Intro to SQL', 'Online') RETURNING id),
		l AS (INSERT INTO locations (name) VALUES ('Annex') RETURNING id),
		k AS (INSERT INTO classes (course_id, start_date, end_date, cost) SELECT id, $1, $1, 10 FROM c RETURNING id),
		r AS (INSERT INTO registrations (class_id) SELECT id FROM k RETURNING id)
		SELECT (SELECT id FROM c), (SELECT id FROM l), (SELECT id FROM k), (SELECT id FROM r)`, today).
		Scan(&ids[0], &ids[1], &ids[2], &ids[3])
	if err != nil {
		t.Fatalf("insert rows without ids after Seed: %v", err)
	}
	if diff := cmp.Diff([4]int64{61, 4, 1501, 12001}, ids); diff != "" {
		t.Errorf("ids of rows inserted after Seed(%+v) mismatch (-want +got):\n%s", small, diff)
	}
}

func TestSeedRejectsBadOptions(t *testing.T) {
	conn := testkit.Connect(t, testkit.NewMigratedDatabase(t))
	tests := []struct {
		name string
		o    Options
	}{
		{"negative count", Options{Courses: -1, Today: today}},
		{"classes without courses", Options{Classes: 3, Today: today}},
		{"registrations without classes", Options{Courses: 3, Registrations: 3, Today: today}},
		{"no today", Options{Courses: 3, Classes: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Seed(context.Background(), conn, tt.o); err == nil {
				t.Errorf("Seed(%+v) succeeded, want an error", tt.o)
			}
		})
	}
	if diff := cmp.Diff(Stats{}, counts(t, conn)); diff != "" {
		t.Errorf("rows after refused seeds mismatch (-want +got):\n%s", diff)
	}
}
