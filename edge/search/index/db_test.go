package index_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/trainingco/catalogue/builder/buildertest"
	"github.com/trainingco/catalogue/edge/search/index"
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

// TestIndexAgreesWithSearchSQL checks that a page found in the index and read with
// search_page.sql is exactly what search.sql returns, rows and total, on many drawn
// searches of a random catalogue; and that search_page.sql returns no class when the
// version it is given is not the database's.
func TestIndexAgreesWithSearchSQL(t *testing.T) {
	db := buildertest.NewMigratedDatabase(t)
	buildertest.Exec(t, db, randomSeed)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tpl := templates.MustDefault()
	ix, err := index.Load(ctx, conn, tpl.SQL(templates.SearchIndex))
	if err != nil {
		t.Fatal(err)
	}
	names := courseNames(t, conn)
	r := rand.New(rand.NewPCG(15, 2))
	answered := 0
	for range 600 {
		q := drawQuery(r, names)
		want := sqlPage(t, conn, tpl, q)
		ids, total, ok := ix.Page(q, nil)
		if !ok {
			if !strings.ContainsFunc(q.Search, func(r rune) bool { return r >= 0x80 }) {
				t.Fatalf("the index did not answer %+v", q)
			}
			continue
		}
		answered++
		got := indexPage(t, conn, tpl.SQL(templates.SearchPage), ids, ix.Version(), total)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("search %+v: the index's page mismatch (-search.sql +index):\n%s", q, diff)
		}
	}
	if answered < 500 {
		t.Errorf("the index answered %d searches of 600, want most", answered)
	}
	rows, _ := conn.Query(ctx, tpl.SQL(templates.SearchPage), []int64{1, 2, 3}, ix.Version()+1)
	n, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*int64, error) {
		var version int64
		var id *int64
		return id, row.Scan(&version, &id, nil, nil, nil, nil, nil, nil, nil, nil, nil)
	})
	if err != nil || len(n) != 1 || n[0] != nil {
		t.Errorf("search_page.sql at another version returned %v, %v; want one row without a class", n, err)
	}
}

// TestLoadEmptyCatalogue checks that a catalogue without public courses still gives an index
// at the database's version, in which nothing matches.
func TestLoadEmptyCatalogue(t *testing.T) {
	db := buildertest.NewMigratedDatabase(t)
	buildertest.Exec(t, db, `INSERT INTO courses (id, name, type, is_public) VALUES (1, 'Hidden', 'Online', false);
		INSERT INTO classes (id, course_id, start_date, end_date, cost, is_public) VALUES (1, 1, '2027-01-01', '2027-01-01', 1, true)`)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	ix, err := index.Load(ctx, conn, templates.MustDefault().SQL(templates.SearchIndex))
	if err != nil {
		t.Fatal(err)
	}
	if ix.Version() != 2 {
		t.Errorf("the index is at version %d, want 2 (two inserts)", ix.Version())
	}
	ids, total, ok := ix.Page(index.Query{Limit: 25}, nil)
	if len(ids) != 0 || total != 0 || !ok {
		t.Errorf("Page of an empty index = %v, %d, %v; want [], 0, true", ids, total, ok)
	}
}

func courseNames(t *testing.T, conn *pgx.Conn) []string {
	rows, _ := conn.Query(context.Background(), "SELECT name FROM courses ORDER BY id")
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// drawQuery draws a search like a search box's: a substring of a course name in either
// case, or a course id (some not public, some unknown), date filters, today moving, pages.
func drawQuery(r *rand.Rand, names []string) index.Query {
	day := func() time.Time { return time.Date(2027, 3, 10+r.IntN(400)-200, 0, 0, 0, 0, time.UTC) }
	q := index.Query{Today: time.Date(2027, 3, 10, 0, 0, 0, 0, time.UTC), Limit: []int64{1, 10, 25, 50}[r.IntN(4)]}
	q.Offset = q.Limit * int64(r.IntN(6))
	if r.IntN(5) == 0 {
		q.Today = day()
	}
	switch r.IntN(10) {
	case 0:
		q.CourseID = int64(1 + r.IntN(310))
	case 1:
	default:
		name := []rune(names[r.IntN(len(names))])
		n := 1 + r.IntN(min(8, len(name)))
		at := r.IntN(len(name) - n + 1)
		q.Search = strings.TrimSpace(string(name[at : at+n]))
		if r.IntN(2) == 0 {
			q.Search = strings.ToUpper(q.Search)
		}
	}
	for _, f := range []*time.Time{&q.Start, &q.End, &q.Date} {
		if r.IntN(4) == 0 {
			*f = day()
		}
	}
	return q
}

// row is one class of a page, as both queries return it.
type row struct {
	ID, CourseID int64
	Course, Type string
	Start, End   string
	City, State  *string
	Cost         int64
	Seats        *int64
}

type page struct {
	Rows  []row
	Total int64
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// sqlPage runs search.sql for q as the edge binds it.
func sqlPage(t *testing.T, conn *pgx.Conn, tpl *templates.Set, q index.Query) page {
	t.Helper()
	args := []any{q.Today, nil, nil, nil, nil, nil, q.Limit, q.Offset}
	for i, d := range []time.Time{q.Start, q.End, q.Date} {
		if !d.IsZero() {
			args[1+i] = d
		}
	}
	if q.Search != "" {
		args[4] = likeEscaper.Replace(q.Search)
	}
	if q.CourseID != 0 {
		args[5] = q.CourseID
	}
	rows, _ := conn.Query(context.Background(), tpl.SQL(templates.Search), append([]any{pgx.QueryExecModeExec}, args...)...)
	var p page
	for rows.Next() {
		var r row
		var id, courseID, cost *int64
		var course, typ *string
		var start, end pgtype.Date
		if err := rows.Scan(&id, &courseID, &course, &start, &end, &typ, &r.City, &r.State, &cost, &r.Seats, &p.Total); err != nil {
			t.Fatal(err)
		}
		if id != nil {
			r.ID, r.CourseID, r.Course, r.Type, r.Cost = *id, *courseID, *course, *typ, *cost
			r.Start, r.End = dateText(start), dateText(end)
			p.Rows = append(p.Rows, r)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("search.sql for %+v: %v", q, err)
	}
	return p
}

// indexPage reads the index's page with search_page.sql and checks its version.
func indexPage(t *testing.T, conn *pgx.Conn, sql string, ids []int64, version, total int64) page {
	t.Helper()
	if ids == nil {
		ids = []int64{}
	}
	rows, _ := conn.Query(context.Background(), sql, ids, version)
	p := page{Total: total}
	for rows.Next() {
		var r row
		var v int64
		var id, courseID, cost *int64
		var course, typ *string
		var start, end pgtype.Date
		if err := rows.Scan(&v, &id, &courseID, &course, &start, &end, &typ, &r.City, &r.State, &cost, &r.Seats); err != nil {
			t.Fatal(err)
		}
		if v != version {
			t.Fatalf("search_page.sql read version %d, the index %d", v, version)
		}
		if id != nil {
			r.ID, r.CourseID, r.Course, r.Type, r.Cost = *id, *courseID, *course, *typ, *cost
			r.Start, r.End = dateText(start), dateText(end)
			p.Rows = append(p.Rows, r)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("search_page.sql: %v", err)
	}
	if len(p.Rows) != len(ids) {
		t.Fatalf("search_page.sql returned %d classes of %d", len(p.Rows), len(ids))
	}
	return p
}

// dateText writes a date as the test compares it, infinity included.
func dateText(d pgtype.Date) string {
	switch d.InfinityModifier {
	case pgtype.Infinity:
		return "infinity"
	case pgtype.NegativeInfinity:
		return "-infinity"
	}
	return d.Time.Format(time.DateOnly)
}
