package search

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// page is the body of a search response (D10).
type page struct {
	Data     []item `json:"data"`
	Total    int64  `json:"total"`
	LastPage int64  `json:"last_page"`
}

// item is one class of a page (spec 4.3, D29), its fields in the spec's order. id and
// course_id are decimal strings; schedule is always null.
type item struct {
	ID       int64   `json:"id,string"`
	CourseID int64   `json:"course_id,string"`
	Course   string  `json:"course"`
	Start    day     `json:"start"`
	End      day     `json:"end"`
	Type     string  `json:"type"`
	City     *string `json:"city"`
	State    *string `json:"state"`
	Schedule *string `json:"schedule"`
	Cost     int64   `json:"cost"`
	Full     bool    `json:"full"`
	Seats    *int64  `json:"available_seats"` // null when uncapped
}

// day is a date written as "YYYY-MM-DD".
type day time.Time

func (d day) MarshalJSON() ([]byte, error) {
	return time.Time(d).AppendFormat([]byte{'"'}, `2006-01-02"`), nil
}

// row is one class of a search page as templates.Search and templates.SearchPage return it.
// Every column may be NULL: a page without classes is one row of NULLs beside the total
// (search.sql) or the version (search_page.sql).
type row struct {
	id, courseID, cost pgtype.Int8
	course, typ        pgtype.Text
	start, end         pgtype.Date
	city, state        pgtype.Text // NULL for online classes and classes without a room
	seats              pgtype.Int8 // available seats; NULL when uncapped
}

// columns are the destinations of the row's columns, in the templates' order.
func (r *row) columns() []any {
	return []any{&r.id, &r.courseID, &r.course, &r.start, &r.end, &r.typ, &r.city, &r.state, &r.cost, &r.seats}
}

// scanPage reads rows into the destinations that columns gives for a row (row.columns and
// those of the query's other columns), appending each class to pg.Data.
func scanPage(rows pgx.Rows, pg *page, columns func(*row) []any) error {
	defer rows.Close()
	var r row
	dst := columns(&r)
	for rows.Next() {
		if err := rows.Scan(dst...); err != nil {
			return err
		}
		if !r.id.Valid {
			continue // no class: the row of an empty page
		}
		it, err := r.item()
		if err != nil {
			return err
		}
		pg.Data = append(pg.Data, it)
	}
	return rows.Err()
}

// item is r as the response shows it: full when capped and no seat is left (D6), an
// uncapped class never; available seats never below 0.
func (r *row) item() (item, error) {
	if r.start.InfinityModifier != pgtype.Finite || r.end.InfinityModifier != pgtype.Finite {
		return item{}, fmt.Errorf("class %d: a date at infinity has no YYYY-MM-DD form", r.id.Int64)
	}
	it := item{ID: r.id.Int64, CourseID: r.courseID.Int64, Course: r.course.String, Start: day(r.start.Time),
		End: day(r.end.Time), Type: r.typ.String, City: text(r.city), State: text(r.state), Cost: r.cost.Int64}
	if r.seats.Valid {
		seats := max(r.seats.Int64, 0)
		it.Full, it.Seats = seats == 0, &seats
	}
	return it, nil
}

// text is t as a JSON string or null.
func text(t pgtype.Text) *string {
	if !t.Valid {
		return nil
	}
	return &t.String
}
