package search

import (
	"time"

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

// row is one class of a search page as templates.Search returns it.
type row struct {
	id, courseID int64
	course, typ  string
	start, end   time.Time
	city, state  pgtype.Text // NULL for online classes and classes without a room
	cost         int64
	seats        pgtype.Int8 // available seats; NULL when uncapped
}

// item is r as the response shows it: full when capped and no seat is left (D6), an
// uncapped class never; available seats never below 0.
func (r *row) item() item {
	it := item{ID: r.id, CourseID: r.courseID, Course: r.course, Start: day(r.start), End: day(r.end),
		Type: r.typ, City: text(r.city), State: text(r.state), Cost: r.cost}
	if r.seats.Valid {
		seats := max(r.seats.Int64, 0)
		it.Full, it.Seats = seats == 0, &seats
	}
	return it
}

// text is t as a JSON string or null.
func text(t pgtype.Text) *string {
	if !t.Valid {
		return nil
	}
	return &t.String
}
