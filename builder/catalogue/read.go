// Package catalogue is the builder's read and render step: it reads the public catalogue from
// the provider's database through the SQL in templates/ (Read) and renders every static JSON
// document of the API from it (Render). Publishing the documents is another package's job.
//
// Only public rows are read (decision D28): the templates select public courses and public
// classes of public courses, and the popularity template returns per-course counts only. So
// nothing of a non-public course or class can reach a rendered document.
package catalogue

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/trainingco/catalogue/builder/freshness"
	"github.com/trainingco/catalogue/templates"
)

// Course is one public course, as templates.Courses returns it.
type Course struct {
	ID          int64   `db:"id"`
	Name        string  `db:"name"`
	Type        string  `db:"type"`
	Description *string `db:"description"` // staff HTML, passed through unchanged; nil is NULL
}

// Class is one public class of a public course, as templates.Classes returns it.
type Class struct {
	ID          int64     `db:"id"`
	CourseID    int64     `db:"course_id"`
	Start       time.Time `db:"start_date"` // a date: midnight UTC
	End         time.Time `db:"end_date"`
	Schedule    *string   `db:"schedule"`
	Cost        int64     `db:"cost"`
	SeatLimit   *int64    `db:"seat_limit"`   // nil: uncapped
	DownPayment *int64    `db:"down_payment"` // cents; nil: payment in full
	SeatsTaken  int64     `db:"seats_taken"`  // registrations of this class

	// The room and its location; all nil when no room is assigned.
	Room         *string `db:"room"`
	LocationName *string `db:"location_name"`
	City         *string `db:"city"`
	State        *string `db:"state"`
	Zip          *string `db:"zip"`
	Country      *string `db:"country"`
}

// Score is the popularity of one public course (D17), as templates.Popularity returns it.
type Score struct {
	CourseID      int64 `db:"course_id"`
	Registrations int64 `db:"registrations"`
}

// Data is everything the static documents are rendered from: one consistent read of the
// public catalogue. Render does not depend on the order of the slices.
type Data struct {
	Courses []Course
	Classes []Class
	Scores  []Score // a public course without a score counts as 0
}

// Read reads everything the static documents need. The caller has opened tx as a read-only
// REPEATABLE READ transaction on the replica, so the whole build sees one state.
func Read(ctx context.Context, tx pgx.Tx, tpl *templates.Set) (*Data, error) {
	var d Data
	var err error
	if d.Courses, err = query[Course](ctx, tx, tpl, templates.Courses); err != nil {
		return nil, err
	}
	if d.Classes, err = query[Class](ctx, tx, tpl, templates.Classes); err != nil {
		return nil, err
	}
	if d.Scores, err = query[Score](ctx, tx, tpl, templates.Popularity); err != nil {
		return nil, err
	}
	return &d, nil
}

// query runs the named template and scans its rows into T by column name, so that a
// provider's replacement template may list its columns in any order.
func query[T any](ctx context.Context, tx pgx.Tx, tpl *templates.Set, name string, args ...any) ([]T, error) {
	rows, err := tx.Query(ctx, tpl.SQL(name), args...)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", name, err)
	}
	out, err := pgx.CollectRows(rows, rowNamed[T](keyColumn(rows.FieldDescriptions())))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w (builder doctor checks the values a build reads)", name, err)
	}
	return out, nil
}

// keyColumn is the position of the column that names a row, its id (a score's course_id),
// among fields; -1 when there is none.
func keyColumn(fields []pgconn.FieldDescription) int {
	for _, name := range []string{"id", "course_id"} {
		if i := slices.IndexFunc(fields, func(f pgconn.FieldDescription) bool { return f.Name == name }); i >= 0 {
			return i
		}
	}
	return -1
}

// rowNamed is pgx.RowToStructByName, whose error names the row it could not read by its key
// column (keyColumn): pgx's names only the column ("cannot scan NULL into *time.Time"), and a
// provider with 100,000 classes needs to know which one has no end date. The key is copied
// before the scan, as a failed scan closes the rows and their buffer is read over.
func rowNamed[T any](key int) pgx.RowToFunc[T] {
	return func(row pgx.CollectableRow) (T, error) {
		var id []byte
		if raw := row.RawValues(); key >= 0 && key < len(raw) {
			id = append(id, raw[key]...)
		}
		v, err := pgx.RowToStructByName[T](row)
		if err != nil && key >= 0 {
			f := row.FieldDescriptions()[key]
			var n any
			if pgtype.NewMap().Scan(f.DataTypeOID, f.Format, id, &n) == nil {
				err = fmt.Errorf("the row whose %s is %v: %w", f.Name, n, err)
			}
		}
		return v, err
	}
}

// ReadChanges reads what ch can affect, for today (ch lists its ids: a Changes that says
// "everything" is answered by a full build, Read): the classes named or in the named
// courses, rooms and locations, every course of those classes with its upcoming class,
// and the popularity of the courses whose registrations may have moved: those whose row
// changed, those of changed classes (old and new) and those of classes whose
// registrations changed. A room or location renamed moves no registration, so it recounts
// none. The caller has opened tx as Read's is. Every query goes by id through an index, so
// the rows read follow the size of the change, not of the catalogue.
func ReadChanges(ctx context.Context, tx pgx.Tx, tpl *templates.Set, ch *freshness.Changes, today time.Time) (*Affected, error) {
	type affected struct {
		ID       int64 `db:"id"`
		CourseID int64 `db:"course_id"`
	}
	// Each list is sorted out of ch's sets once.
	chCourses, chClasses, chRegClasses, chClassCourses := ch.Courses(), ch.Classes(), ch.RegClasses(), ch.ClassCourses()
	named := newIDSet(chClasses, chRegClasses)
	found, err := query[affected](ctx, tx, tpl, templates.ChangesClasses, nonNil(named.sorted()), nonNil(chCourses), nonNil(ch.Rooms()), nonNil(ch.Locations()))
	if err != nil {
		return nil, err
	}
	classes := newIDSet(chClasses, chRegClasses)
	courses := newIDSet(chCourses, chClassCourses)
	scored := newIDSet(chCourses, chClassCourses)
	regClasses := newIDSet(chRegClasses)
	for _, a := range found {
		classes.add(a.ID)
		courses.add(a.CourseID)
		if _, ok := regClasses[a.ID]; ok {
			scored.add(a.CourseID)
		}
	}
	d := &Affected{CourseIDs: courses.sorted(), ScoreCourseIDs: scored.sorted(), ClassIDs: classes.sorted()}
	if d.Courses, err = query[Course](ctx, tx, tpl, templates.CoursesByID, d.CourseIDs); err != nil {
		return nil, err
	}
	if d.Upcoming, err = query[Class](ctx, tx, tpl, templates.Upcoming, d.CourseIDs, today); err != nil {
		return nil, err
	}
	if d.Scores, err = query[Score](ctx, tx, tpl, templates.PopularityByID, nonNil(d.ScoreCourseIDs)); err != nil {
		return nil, err
	}
	if d.Classes, err = query[Class](ctx, tx, tpl, templates.ClassesByID, d.ClassIDs); err != nil {
		return nil, err
	}
	return d, nil
}

// nonNil makes a nil list an empty array argument rather than NULL, for which = ANY is
// NULL rather than false.
func nonNil(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}

// idSet is a set of ids.
type idSet map[int64]struct{}

func newIDSet(lists ...[]int64) idSet {
	s := idSet{}
	for _, l := range lists {
		for _, id := range l {
			s.add(id)
		}
	}
	return s
}

func (s idSet) add(id int64) { s[id] = struct{}{} }

func (s idSet) sorted() []int64 {
	ids := slices.Collect(maps.Keys(s))
	slices.Sort(ids)
	return ids
}
