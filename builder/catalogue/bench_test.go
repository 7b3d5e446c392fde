package catalogue

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// The size the build must handle well within its minute: 2,000 courses, 100,000 classes,
// 1,000,000 registrations.
const (
	benchCourses       = 2000
	benchClasses       = 100_000
	benchRegistrations = 1_000_000
)

// benchSeed fills a database at the target size with generate_series: a tenth of courses
// and classes are not public, a fifth of classes have no room, a third are uncapped.
var benchSeed = fmt.Sprintf(`
INSERT INTO locations (id, name, city, state, zip, country)
SELECT i, 'Site ' || i, 'City ' || i, 'ST', lpad(i::text, 5, '0'), 'US' FROM generate_series(1, 50) AS i;
INSERT INTO rooms (id, location_id, name) SELECT i, 1 + i %% 50, 'Room ' || i FROM generate_series(1, 500) AS i;
INSERT INTO courses (id, name, type, description, is_public)
SELECT i, 'Course ' || md5(i::text),
       (ARRAY['Online', 'Brick and Mortar', 'Blended'])[1 + i %% 3],
       '<p>' || repeat('Learn <b>things</b> & more. ', 20) || '</p>', i %% 10 <> 0
FROM generate_series(1, %[1]d) AS i;
INSERT INTO classes (id, course_id, room_id, start_date, end_date, schedule, cost, seat_limit, down_payment, is_public)
SELECT i, 1 + i %% %[1]d, CASE WHEN i %% 5 = 0 THEN NULL ELSE 1 + i %% 500 END,
       DATE '2026-01-01' + (i %% 730), DATE '2026-01-03' + (i %% 730), 'Mon-Fri 9am-5pm',
       100 + i %% 900, CASE WHEN i %% 3 = 0 THEN NULL ELSE 5 + i %% 30 END,
       CASE WHEN i %% 2 = 0 THEN 10000 ELSE NULL END, i %% 10 <> 0
FROM generate_series(1, %[2]d) AS i;
INSERT INTO registrations (id, class_id, student_id)
SELECT i, 1 + (i::BIGINT * 7919) %% %[2]d, i FROM generate_series(1, %[3]d) AS i;
ANALYZE;
`, benchCourses, benchClasses, benchRegistrations)

// BenchmarkRead reads the full-size catalogue from a real PostgreSQL: first straight after
// the bulk load (analyzed, not yet vacuumed, so index-only scans still visit the heap), then
// after VACUUM, as autovacuum leaves a replica in steady state.
func BenchmarkRead(b *testing.B) {
	dbURL := testkit.NewMigratedDatabase(b)
	testkit.Exec(b, dbURL, benchSeed)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		b.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	b.Run("fresh", func(b *testing.B) { benchRead(b, conn) })
	testkit.Exec(b, dbURL, "VACUUM ANALYZE")
	b.Run("vacuumed", func(b *testing.B) { benchRead(b, conn) })
}

func benchRead(b *testing.B, conn *pgx.Conn) {
	ctx := context.Background()
	tpl := templates.MustDefault()
	for b.Loop() {
		tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		if err != nil {
			b.Fatalf("begin: %v", err)
		}
		d, err := Read(ctx, tx, tpl)
		_ = tx.Rollback(ctx)
		if err != nil {
			b.Fatalf("Read: %v", err)
		}
		b.ReportMetric(float64(len(d.Classes)), "classes")
	}
}

// benchData is a synthetic catalogue of the target size, without a database.
func benchData() *Data {
	types := []string{"Online", "Brick and Mortar", "Blended"}
	desc := "<p>" + strings.Repeat("Learn <b>things</b> & more. ", 20) + "</p>"
	d := &Data{}
	for i := range int64(benchCourses) {
		d.Courses = append(d.Courses, Course{ID: i + 1, Name: fmt.Sprintf("Course %x", i*2654435761), Type: types[i%3], Description: &desc})
		d.Scores = append(d.Scores, Score{CourseID: i + 1, Registrations: (i * 7919) % 1000})
	}
	str := func(s string) *string { return &s }
	for i := range int64(benchClasses) {
		c := Class{
			ID: i + 1, CourseID: 1 + i%benchCourses, Cost: 100 + i%900, SeatsTaken: i % 20,
			Start:    time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(i%730)),
			End:      time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(i%730)),
			Schedule: str("Mon-Fri 9am-5pm"),
		}
		if i%3 != 0 {
			limit := 5 + i%30
			c.SeatLimit = &limit
		}
		if i%5 != 0 {
			c.Room, c.LocationName, c.City = str("Room 1"), str("Site 1"), str("City 1")
			c.State, c.Zip, c.Country = str("ST"), str("00001"), str("US")
		}
		d.Classes = append(d.Classes, c)
	}
	return d
}

// BenchmarkRender renders the full-size synthetic catalogue.
func BenchmarkRender(b *testing.B) {
	d := benchData()
	day := time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		r, err := Render(d, day)
		if err != nil {
			b.Fatalf("Render: %v", err)
		}
		b.ReportMetric(float64(r.Counts.Documents), "docs")
	}
}
