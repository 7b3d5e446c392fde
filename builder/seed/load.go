package seed

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Streams of the random generator, one per table (see newRand).
const (
	streamCourses uint64 = iota + 1
	streamLocations
	streamClasses
	streamRegistrations
)

// copyTable loads rows into table with COPY and returns how many were written.
func copyTable(ctx context.Context, tx pgx.Tx, table string, columns []string, rows pgx.CopyFromSource) (int64, error) {
	n, err := tx.CopyFrom(ctx, pgx.Identifier{table}, columns, rows)
	if err != nil {
		return 0, fmt.Errorf("copy into %s: %w", table, err)
	}
	return n, nil
}

// load generates the data of o and copies it in, parents before children so that the foreign
// keys hold at every row.
func load(ctx context.Context, tx pgx.Tx, o Options) (Stats, error) {
	y, m, d := o.Today.Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	courses := genCourses(newRand(o.Seed, streamCourses), o.Courses)
	lr := newRand(o.Seed, streamLocations)
	locs := genLocations(lr, locationCount(o.Courses))
	rooms := genRooms(lr, locs)
	classes := genClasses(newRand(o.Seed, streamClasses), o.Classes, courses, rooms, today)
	regs := newRegistrations(newRand(o.Seed, streamRegistrations), o.Registrations, classes, today)

	var s Stats
	var err error
	steps := []struct {
		n       *int64
		table   string
		columns []string
		rows    pgx.CopyFromSource
	}{
		{&s.Courses, "courses", []string{"id", "name", "type", "description", "is_public"},
			pgx.CopyFromSlice(len(courses), func(i int) ([]any, error) { return courses[i].row(), nil })},
		{&s.Locations, "locations", []string{"id", "name", "city", "state", "zip", "country"},
			pgx.CopyFromSlice(len(locs), func(i int) ([]any, error) { return locs[i].row(), nil })},
		{&s.Rooms, "rooms", []string{"id", "location_id", "name"},
			pgx.CopyFromSlice(len(rooms), func(i int) ([]any, error) { return rooms[i].row(), nil })},
		{&s.Classes, "classes", []string{"id", "course_id", "room_id", "start_date", "end_date", "schedule",
			"cost", "seat_limit", "down_payment", "is_public"},
			pgx.CopyFromSlice(len(classes), func(i int) ([]any, error) { return classes[i].row(), nil })},
		{&s.Registrations, "registrations", []string{"id", "class_id", "student_id", "created_at", "test_date"},
			pgx.CopyFromFunc(regs.row)},
	}
	for _, st := range steps {
		if *st.n, err = copyTable(ctx, tx, st.table, st.columns, st.rows); err != nil {
			return Stats{}, err
		}
	}
	return s, nil
}

func (c course) row() []any {
	return []any{c.id, c.name, c.typ, c.description, c.public}
}

func (l location) row() []any {
	return []any{l.id, l.name, l.city, l.state, l.zip, l.country}
}

func (r room) row() []any {
	return []any{r.id, r.locationID, r.name}
}

func (c class) row() []any {
	return []any{c.id, c.courseID, c.roomID, c.start, c.end, c.schedule, c.cost, c.seatLimit, c.downPayment, c.public}
}
