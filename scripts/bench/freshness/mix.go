package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/scripts/bench/pace"
)

// target is the class the mix changes, with its course and room as they were.
type target struct {
	class, course, room  int64
	courseName, roomName string
	cost, seatLimit      int64
}

// pickTarget finds an upcoming public class of a public in-person course, with a room and
// a seat limit it is at least two seats under, so that every change of the mix shows in
// its documents.
const pickTarget = `
SELECT cl.id, cl.course_id, cl.room_id, co.name, COALESCE(ro.name, ''), cl.cost, cl.seat_limit
FROM classes cl
JOIN courses co ON co.id = cl.course_id AND co.is_public AND co.type <> 'Online'
JOIN rooms ro ON ro.id = cl.room_id
WHERE cl.is_public AND cl.start_date >= CURRENT_DATE + 7 AND cl.seat_limit IS NOT NULL
  AND cl.seat_limit >= (SELECT COUNT(*) FROM registrations rg WHERE rg.class_id = cl.id) + 2
ORDER BY cl.id
LIMIT 1`

// change is one change of the mix: do commits it, alone, and returns when its COMMIT
// returned, the edge path that shows it and what the edge answers there once it is served.
type change struct {
	name string
	do   func(ctx context.Context, conn *pgx.Conn) (committed time.Time, path string, seen func(int, []byte) bool, err error)
}

// logOut receives progress lines; stdout is for the results.
var logOut = os.Stderr

// mix commits the changes of the mix rounds times and returns, by change, the time each
// took to be served.
func mix(ctx context.Context, conn *pgx.Conn, e *edge, o options) (map[string][]time.Duration, error) {
	var t target
	err := conn.QueryRow(ctx, pickTarget).Scan(&t.class, &t.course, &t.room, &t.courseName, &t.roomName, &t.cost, &t.seatLimit)
	if err != nil {
		return nil, fmt.Errorf("pick the mix's class: %w", err)
	}
	fmt.Printf("fresh_class=%d\n", t.class)
	defer t.restore(context.WithoutCancel(ctx), conn)
	lat := map[string][]time.Duration{}
	pacer := pace.New(o.poll)
	for r := range o.rounds {
		for _, c := range t.changes(r) {
			pacer.Wait()
			committed, path, seen, err := c.do(ctx, conn)
			if err != nil {
				return nil, fmt.Errorf("round %d, %s: %w", r+1, c.name, err)
			}
			d, err := e.waitFor(ctx, path, committed, o.timeout, seen)
			if err != nil {
				return nil, fmt.Errorf("round %d, %s: %w", r+1, c.name, err)
			}
			lat[c.name] = append(lat[c.name], d)
			fmt.Fprintf(logOut, "freshness: round %d, %s: served %.3f s after its commit\n", r+1, c.name, d.Seconds())
		}
	}
	return lat, nil
}

// exec runs one statement in its own transaction and returns when its COMMIT returned.
func exec(ctx context.Context, conn *pgx.Conn, sql string, args ...any) (time.Time, error) {
	_, err := conn.Exec(ctx, sql, args...)
	return time.Now(), err
}

// changes returns the mix of round r.
func (t *target) changes(r int) []change {
	classPath := "/public/class/" + strconv.FormatInt(t.class, 10)
	var reg int64
	var seats int64 // open seats before the registration
	status := func(want int) func(int, []byte) bool {
		return func(s int, _ []byte) bool { return s == want }
	}
	return []change{
		{"registration_added", func(ctx context.Context, conn *pgx.Conn) (time.Time, string, func(int, []byte) bool, error) {
			if err := conn.QueryRow(ctx, `SELECT $1::bigint - COUNT(*) FROM registrations WHERE class_id = $2`, t.seatLimit, t.class).Scan(&seats); err != nil {
				return time.Time{}, "", nil, err
			}
			err := conn.QueryRow(ctx, `INSERT INTO registrations (class_id) VALUES ($1) RETURNING id`, t.class).Scan(&reg)
			return time.Now(), classPath, func(s int, b []byte) bool { return s == 200 && isNumber(field(b, "open_seats"), seats-1) }, err
		}},
		{"registration_removed", func(ctx context.Context, conn *pgx.Conn) (time.Time, string, func(int, []byte) bool, error) {
			at, err := exec(ctx, conn, `DELETE FROM registrations WHERE id = $1`, reg)
			return at, classPath, func(s int, b []byte) bool { return s == 200 && isNumber(field(b, "open_seats"), seats) }, err
		}},
		{"class_cost", func(ctx context.Context, conn *pgx.Conn) (time.Time, string, func(int, []byte) bool, error) {
			cost := t.cost + int64(r) + 1
			at, err := exec(ctx, conn, `UPDATE classes SET cost = $1 WHERE id = $2`, cost, t.class)
			return at, classPath, func(s int, b []byte) bool { return s == 200 && isNumber(field(b, "cost"), cost) }, err
		}},
		{"course_renamed", func(ctx context.Context, conn *pgx.Conn) (time.Time, string, func(int, []byte) bool, error) {
			name := fmt.Sprintf("%s (bench %d)", t.courseName, r+1)
			at, err := exec(ctx, conn, `UPDATE courses SET name = $1 WHERE id = $2`, name, t.course)
			return at, "/public/course/" + strconv.FormatInt(t.course, 10),
				func(s int, b []byte) bool { return s == 200 && field(b, "name") == name }, err
		}},
		{"class_hidden", func(ctx context.Context, conn *pgx.Conn) (time.Time, string, func(int, []byte) bool, error) {
			at, err := exec(ctx, conn, `UPDATE classes SET is_public = FALSE WHERE id = $1`, t.class)
			return at, classPath, status(404), err
		}},
		{"class_shown", func(ctx context.Context, conn *pgx.Conn) (time.Time, string, func(int, []byte) bool, error) {
			at, err := exec(ctx, conn, `UPDATE classes SET is_public = TRUE WHERE id = $1`, t.class)
			return at, classPath, status(200), err
		}},
		{"room_renamed", func(ctx context.Context, conn *pgx.Conn) (time.Time, string, func(int, []byte) bool, error) {
			name := fmt.Sprintf("%s (bench %d)", t.roomName, r+1)
			at, err := exec(ctx, conn, `UPDATE rooms SET name = $1 WHERE id = $2`, name, t.room)
			return at, classPath, func(s int, b []byte) bool { return s == 200 && field(b, "location", "room") == name }, err
		}},
		{"new_class", func(ctx context.Context, conn *pgx.Conn) (time.Time, string, func(int, []byte) bool, error) {
			var id int64
			err := conn.QueryRow(ctx, `INSERT INTO classes (id, course_id, room_id, start_date, end_date, schedule, cost, seat_limit, is_public)
				SELECT MAX(id) + 1, $1, $2, CURRENT_DATE + 30, CURRENT_DATE + 31, 'Added by make bench', 100, 10, TRUE FROM classes
				RETURNING id`, t.course, t.room).Scan(&id)
			return time.Now(), "/public/class/" + strconv.FormatInt(id, 10), status(200), err
		}},
	}
}

// restore puts the class, its course and its room back as they were and deletes the
// classes the mix added, so that the next make bench starts from the same data.
func (t *target) restore(ctx context.Context, conn *pgx.Conn) {
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`UPDATE classes SET cost = $1, is_public = TRUE WHERE id = $2`, []any{t.cost, t.class}},
		{`UPDATE courses SET name = $1 WHERE id = $2`, []any{t.courseName, t.course}},
		{`UPDATE rooms SET name = $1 WHERE id = $2`, []any{t.roomName, t.room}},
		{`DELETE FROM classes WHERE schedule = 'Added by make bench'`, nil},
	} {
		if _, err := conn.Exec(ctx, q.sql, q.args...); err != nil {
			fmt.Fprintln(logOut, "freshness: restoring the data:", err)
		}
	}
}
