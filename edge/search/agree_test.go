package search_test

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trainingco/catalogue/edge/search"
	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// randomSeed fills a migrated database with a catalogue drawn by PostgreSQL's random() from
// a fixed seed: 300 courses (a tenth not public, names from a few words, some with
// characters other than ASCII, some with %, _ and \), 20,000 classes over 400 days around
// 2027-03-10 (a tenth not public, some without a room, half capped), registrations, and a
// few classes starting or ending at infinity.
const randomSeed = `
SELECT setseed(0.15);
INSERT INTO locations (id, name, city, state) VALUES (1, 'North', 'Springfield', 'IL'), (2, 'South', 'Shelbyville', NULL);
INSERT INTO rooms (id, location_id, name) VALUES (1, 1, 'A'), (2, 2, 'B'), (3, 2, 'C');
INSERT INTO courses (id, name, type, is_public)
SELECT i,
       (ARRAY['Welding', 'Online', 'Safety', 'Résumé', '100% Cotton_Weaving\Basics', 'Level 1', 'C#', 'POTTERY'])[1 + floor(random() * 8)::int]
       || ' ' || (ARRAY['Basics', 'Writing', 'Café', 'for Beginners', 'Lab', 'ServSafe®'])[1 + floor(random() * 6)::int],
       (ARRAY['Online', 'Brick and Mortar', 'Blended'])[1 + floor(random() * 3)::int],
       random() < 0.9
FROM generate_series(1, 300) i;
INSERT INTO classes (id, course_id, room_id, start_date, end_date, cost, seat_limit, is_public)
SELECT i, 1 + floor(random() * 300)::int,
       (ARRAY[NULL, 1, 2, 3])[1 + floor(random() * 4)::int],
       d, d + floor(random() * 30)::int, 100 + i % 7,
       CASE WHEN random() < 0.5 THEN floor(random() * 4)::int END,
       random() < 0.9
FROM generate_series(1, 20000) i, LATERAL (SELECT DATE '2027-03-10' + floor(random() * 400 - 150)::int + i * 0 AS d) x;
INSERT INTO classes (id, course_id, start_date, end_date, cost, is_public) VALUES
  (30001, 1, '-infinity', '-infinity', 1, true), (30002, 2, '2027-03-11', 'infinity', 1, true),
  (30003, 3, 'infinity', 'infinity', 1, true), (30004, 4, '-infinity', 'infinity', 1, true);
INSERT INTO registrations (class_id) SELECT 1 + floor(random() * 20000)::int FROM generate_series(1, 30000);
`

// TestIndexAgreesWithTheReplica checks that a search through the index answers exactly what
// the search in the replica alone (search.sql) answers, body for body or error for error,
// on many drawn searches of a random catalogue.
func TestIndexAgreesWithTheReplica(t *testing.T) {
	db := testkit.NewMigratedDatabase(t)
	testkit.Exec(t, db, randomSeed)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pool, err := pgxpool.New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	searcher := func(index bool) *search.Searcher {
		s := search.New(search.Options{Pool: pool, Templates: templates.MustDefault(), Timeout: 10 * time.Second,
			Index: index, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		s.Start(ctx)
		return s
	}
	indexed, replica := searcher(true), searcher(false)
	names := courseNames(t, pool)
	r := rand.New(rand.NewPCG(15, 2))
	pages, failures := 0, 0
	for range 400 {
		today, p := drawSearch(r, names)
		want, wantErr := replica.Search(ctx, today, p)
		got, gotErr := indexed.Search(ctx, today, p)
		switch {
		case (wantErr == nil) != (gotErr == nil):
			t.Fatalf("search %+v on %s: error %v through the index, %v in the replica", p, today.Format(time.DateOnly), gotErr, wantErr)
		case wantErr != nil:
			failures++ // a class at infinity on the page: both refuse it
		case string(got.Body()) != string(want.Body()):
			t.Fatalf("search %+v on %s:\nthrough the index %s\nin the replica    %s", p, today.Format(time.DateOnly), got.Body(), want.Body())
		case strings.HasPrefix(string(want.Body()), `{"data":[{`):
			pages++
		}
	}
	t.Logf("%d searches with classes, %d refused (a date at infinity)", pages, failures)
	if pages < 200 || failures > 40 {
		t.Errorf("%d searches with classes and %d refused of 400: the draw should give mostly classes", pages, failures)
	}
}

func courseNames(t *testing.T, pool *pgxpool.Pool) []string {
	rows, _ := pool.Query(context.Background(), "SELECT name FROM courses ORDER BY id")
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// drawSearch draws a search like a search box's: a substring of a course name in either
// case, or a course id (some not public, some unknown), date filters, today moving, pages.
func drawSearch(r *rand.Rand, names []string) (time.Time, search.Params) {
	day := func() time.Time { return time.Date(2027, 3, 10+r.IntN(400)-200, 0, 0, 0, 0, time.UTC) }
	today := time.Date(2027, 3, 10, 0, 0, 0, 0, time.UTC)
	if r.IntN(5) == 0 {
		today = day()
	}
	p := search.Params{Limit: []int64{1, 10, 25, 50}[r.IntN(4)]}
	p.Offset = p.Limit * int64(r.IntN(6))
	switch r.IntN(10) {
	case 0:
		p.CourseID = int64(1 + r.IntN(310))
	case 1:
	default:
		name := []rune(names[r.IntN(len(names))])
		n := 1 + r.IntN(min(8, len(name)))
		at := r.IntN(len(name) - n + 1)
		p.Search = strings.TrimSpace(string(name[at : at+n]))
		if r.IntN(2) == 0 {
			p.Search = strings.ToUpper(p.Search)
		}
	}
	for _, f := range []*time.Time{&p.Start, &p.End, &p.Date} {
		if r.IntN(4) == 0 {
			*f = day()
		}
	}
	return today, p
}
