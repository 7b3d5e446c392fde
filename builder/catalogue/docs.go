package catalogue

import (
	"strconv"
	"time"
)

// The JSON shapes of the documents (spec sections 2 and 4). They are structs, not maps, so
// that fields come out in the order the spec lists them, and every nullable field is a
// pointer without omitempty, so that null is written rather than left out.

// courseList is GET /public/courses: {"data": [...]}.
type courseList struct {
	Data []listItem `json:"data"`
}

// listItem is one course in the course list.
type listItem struct {
	ID            int64         `json:"id"`
	Name          string        `json:"name"`
	UpcomingClass *listUpcoming `json:"upcoming_class"`
}

// listUpcoming is the upcoming-class summary of the course list (spec 2.3): no class id.
type listUpcoming struct {
	Start          string  `json:"start"`
	End            string  `json:"end"`
	Type           string  `json:"type"`
	City           *string `json:"city"`
	State          *string `json:"state"`
	Cost           int64   `json:"cost"`
	AvailableSeats *int64  `json:"available_seats"`
}

// popularItem is one course of GET /public/popular, a bare array.
type popularItem struct {
	ID            int64            `json:"id"`
	Name          string           `json:"name"`
	UpcomingClass *popularUpcoming `json:"upcoming_class"`
}

// popularUpcoming is the upcoming-class summary of popular (spec 2.3): no location, no type.
type popularUpcoming struct {
	ID             int64  `json:"id"`
	Cost           int64  `json:"cost"`
	Start          string `json:"start"`
	End            string `json:"end"`
	AvailableSeats *int64 `json:"available_seats"`
}

// courseDoc is GET /public/course/{id} (spec 2.1, 4.5).
type courseDoc struct {
	ID          int64   `json:"id"`
	Name        string  `json:"name"`
	Type        string  `json:"type"`
	Description *string `json:"description"`
}

// classDoc is GET /public/class/{id} (spec 2.4, 4.6). It has no id of its own.
type classDoc struct {
	CourseID    int64   `json:"course_id"`
	CourseName  string  `json:"course_name"`
	CourseType  string  `json:"course_type"`
	Start       string  `json:"start"`
	End         string  `json:"end"`
	Schedule    *string `json:"schedule"`
	Cost        int64   `json:"cost"`
	CanRegister bool    `json:"can_register"`
	Location    any     `json:"location"` // the string "online" or a locationDoc (D19)
	DownPayment *string `json:"down_payment"`
	// Per-person fields: always null with an API token (spec 4.6), and the static documents
	// serve only API tokens.
	RegistrationID  *int64  `json:"registration_id"`
	PrevRegTestDate *string `json:"prev_reg_test_date"`
	OpenSeats       *int64  `json:"open_seats"`
}

// locationDoc is the location object of the class detail (D19).
type locationDoc struct {
	Name    *string `json:"name"`
	Room    *string `json:"room"`
	City    *string `json:"city"`
	State   *string `json:"state"`
	Zip     *string `json:"zip"`
	Country *string `json:"country"`
}

// typeOnline is the course type whose classes have no place (spec 2.2, D5, D19).
const typeOnline = "Online"

// locationOnline is the location of a class of an Online course (D19).
const locationOnline = "online"

// date formats a date as the API writes it.
func date(t time.Time) string { return t.Format(time.DateOnly) }

// upcoming reports whether c starts today or later (D2).
func upcoming(c *Class, today time.Time) bool { return !c.Start.Before(today) }

// openSeats is the seat limit minus registrations, never below 0; nil when uncapped (D6).
func openSeats(c *Class) *int64 {
	if c.SeatLimit == nil {
		return nil
	}
	n := max(*c.SeatLimit-c.SeatsTaken, 0)
	return &n
}

// canRegister is D5: Online, or not started with seats remaining.
func canRegister(course *Course, c *Class, today time.Time) bool {
	if course.Type == typeOnline {
		return true
	}
	open := openSeats(c)
	return upcoming(c, today) && (open == nil || *open > 0)
}

// newListUpcoming summarises c for the course list; an Online course has no city or state.
func newListUpcoming(course *Course, c *Class) *listUpcoming {
	u := &listUpcoming{
		Start: date(c.Start), End: date(c.End), Type: course.Type,
		Cost: c.Cost, AvailableSeats: openSeats(c),
	}
	if course.Type != typeOnline {
		u.City, u.State = c.City, c.State
	}
	return u
}

// newPopularUpcoming summarises c for popular.
func newPopularUpcoming(c *Class) *popularUpcoming {
	return &popularUpcoming{
		ID: c.ID, Cost: c.Cost, Start: date(c.Start), End: date(c.End),
		AvailableSeats: openSeats(c),
	}
}

// newCourseDoc is the single-course document.
func newCourseDoc(c *Course) courseDoc {
	return courseDoc{ID: c.ID, Name: c.Name, Type: c.Type, Description: c.Description}
}

// newClassDoc is the single-class document.
func newClassDoc(course *Course, c *Class, today time.Time) classDoc {
	d := classDoc{
		CourseID: course.ID, CourseName: course.Name, CourseType: course.Type,
		Start: date(c.Start), End: date(c.End), Schedule: c.Schedule, Cost: c.Cost,
		CanRegister: canRegister(course, c, today),
		Location:    locationOnline,
		OpenSeats:   openSeats(c),
	}
	if course.Type != typeOnline {
		d.Location = locationDoc{
			Name: c.LocationName, Room: c.Room, City: c.City,
			State: c.State, Zip: c.Zip, Country: c.Country,
		}
	}
	if c.DownPayment != nil {
		s := strconv.FormatInt(*c.DownPayment, 10) // D20: cents as a decimal string
		d.DownPayment = &s
	}
	return d
}
