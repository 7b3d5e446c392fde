package security

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// marker is in every piece of text of a non-public row (course name and description, class
// schedule, the rooms and locations only such classes use) and in no public text, so that
// finding it anywhere a client or the store can see is a leak. Each row's text carries its
// own numbered token (SECRET-C7, SECRET-S12, …) so a failure names the row.
const marker = "SECRET"

// today is the fixed "today" of every dataset: builder and edge both run on this clock.
var today = time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)

// courseTypes are the three course types (spec 2.1).
var courseTypes = []string{"Online", "Brick and Mortar", "Blended"}

// words build course names. Public and non-public courses draw from the same words, so a
// search for a word matches both kinds; none of them contains the marker in any case.
var words = []string{"Welding", "Safety", "Forklift", "Excel", "Leadership", "First Aid",
	"Weaving", "Go", "Python", "Nursing", "HVAC", "Plumbing", "100% Cotton", "Under_score",
	`Back\slash`, "O'Brien's", "Café", "Ünïcode"}

type dsCourse struct {
	id          int64
	name, typ   string
	description *string
	public      bool
}

type dsLocation struct {
	id                              int64
	name, city, state, zip, country string
	secret                          bool // used only by classes no client may see
}

type dsRoom struct {
	id, locationID int64
	name           string
	secret         bool
}

type dsClass struct {
	id, courseID           int64
	roomID                 *int64
	start, end             time.Time
	schedule               *string
	cost                   int64
	seatLimit, downPayment *int64
	public                 bool
}

// dataset is one generated catalogue and what a client may see of it.
type dataset struct {
	seed      uint64
	courses   []dsCourse
	locations []dsLocation
	rooms     []dsRoom
	classes   []dsClass
	regs      []int64 // class id of each registration

	publicCourses  map[int64]bool // ids of public courses
	visibleClasses map[int64]bool // ids of public classes of public courses
}

// genDataset generates a small catalogue from seed: 10-30 courses (about 70 % public) and
// 50-150 classes (about 75 % public). Ids of public and non-public rows are drawn from the
// same range, so only the flags tell them apart. Non-public classes often start soon after
// today and carry many registrations: were they not filtered out, they would be the
// upcoming_class of their course and push their course into popular.
func genDataset(seed uint64) *dataset {
	r := rand.New(rand.NewPCG(seed, 0x5ec))
	ds := &dataset{seed: seed, publicCourses: map[int64]bool{}, visibleClasses: map[int64]bool{}}
	nCourses, nClasses := 10+r.IntN(21), 50+r.IntN(101)
	ids := distinctIDs(r, nCourses+nClasses+15) // and 5 locations with 2 rooms each
	take := func() int64 { id := ids[0]; ids = ids[1:]; return id }

	for i := range nCourses {
		c := dsCourse{id: take(), typ: courseTypes[r.IntN(3)], public: r.IntN(10) < 7}
		word := words[r.IntN(len(words))]
		if c.public {
			c.name = fmt.Sprintf("%s %d", word, i)
			if r.IntN(4) > 0 {
				c.description = ptr(fmt.Sprintf(`<p>%s for "everyone" &amp; more</p>`, word))
			}
			ds.publicCourses[c.id] = true
		} else {
			c.name = fmt.Sprintf("%s %s-C%d", word, marker, i)
			c.description = ptr(fmt.Sprintf("<p>%s-CD%d internal only</p>", marker, i))
		}
		ds.courses = append(ds.courses, c)
	}
	ds.genPlaces(take)
	ds.genClasses(r, take, nClasses)
	return ds
}

// genPlaces makes three public locations with two rooms each, and two secret ones.
func (ds *dataset) genPlaces(take func() int64) {
	for i := range 5 {
		secret := i >= 3
		l := dsLocation{id: take(), name: fmt.Sprintf("Campus %d", i), city: "Springfield", state: "IL",
			zip: "62701", country: "US", secret: secret}
		if secret {
			l.name, l.city = fmt.Sprintf("%s-L%d Hidden", marker, i), fmt.Sprintf("%s-CITY%d", marker, i)
			l.zip, l.country = fmt.Sprintf("%s-Z%d", marker, i), fmt.Sprintf("%s-N%d", marker, i)
			l.state = fmt.Sprintf("%s-ST%d", marker, i)
		}
		ds.locations = append(ds.locations, l)
		for j := range 2 {
			room := dsRoom{id: take(), locationID: l.id, name: fmt.Sprintf("Room %d%c", i, 'A'+j), secret: secret}
			if secret {
				room.name = fmt.Sprintf("%s-R%d%c", marker, i, 'A'+j)
			}
			ds.rooms = append(ds.rooms, room)
		}
	}
}

// genClasses makes n classes over the courses, with registrations.
func (ds *dataset) genClasses(r *rand.Rand, take func() int64, n int) {
	var public, secret []int64
	for _, room := range ds.rooms {
		if room.secret {
			secret = append(secret, room.id)
		} else {
			public = append(public, room.id)
		}
	}
	day := time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC)
	for i := range n {
		co := ds.courses[r.IntN(len(ds.courses))]
		c := dsClass{id: take(), courseID: co.id, cost: int64(100 + r.IntN(5000)), public: r.IntN(4) > 0}
		visible := c.public && co.public
		c.start = day.AddDate(0, 0, r.IntN(486)-120)
		if !visible && r.IntN(2) == 0 {
			c.start = day.AddDate(0, 0, r.IntN(10))
		}
		c.end = c.start.AddDate(0, 0, r.IntN(10))
		rooms := public
		if !visible && r.IntN(2) == 0 {
			rooms = secret
		}
		if r.IntN(5) > 0 {
			c.roomID = ptr(rooms[r.IntN(len(rooms))])
		}
		switch {
		case !visible:
			c.schedule = ptr(fmt.Sprintf("%s-S%d Mon-Fri", marker, i))
		case r.IntN(3) > 0:
			c.schedule = ptr(fmt.Sprintf("Mon-Fri %d-5", 8+r.IntN(3)))
		}
		if r.IntN(2) == 0 {
			c.seatLimit = ptr(int64(5 + r.IntN(20)))
		}
		if r.IntN(3) == 0 {
			c.downPayment = ptr(int64(1000 * (1 + r.IntN(50))))
		}
		regs := r.IntN(8)
		if !visible {
			regs = 10 + r.IntN(40)
		}
		for range regs {
			ds.regs = append(ds.regs, c.id)
		}
		if visible {
			ds.visibleClasses[c.id] = true
		}
		ds.classes = append(ds.classes, c)
	}
}

// distinctIDs returns n distinct ids in random order between 1 and 20 n: public and
// non-public rows share the range.
func distinctIDs(r *rand.Rand, n int) []int64 {
	seen := map[int64]bool{}
	var ids []int64
	for len(ids) < n {
		id := 1 + r.Int64N(int64(20*n))
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

func ptr[T any](v T) *T { return &v }

// load copies ds into the migrated database at dbURL, parents before children.
func (ds *dataset) load(t testing.TB, dbURL string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	regID := int64(0)
	tables := []struct {
		name    string
		columns []string
		rows    [][]any
	}{
		{"courses", []string{"id", "name", "type", "description", "is_public"}, rowsOf(ds.courses, func(c dsCourse) []any {
			return []any{c.id, c.name, c.typ, c.description, c.public}
		})},
		{"locations", []string{"id", "name", "city", "state", "zip", "country"}, rowsOf(ds.locations, func(l dsLocation) []any {
			return []any{l.id, l.name, l.city, l.state, l.zip, l.country}
		})},
		{"rooms", []string{"id", "location_id", "name"}, rowsOf(ds.rooms, func(r dsRoom) []any {
			return []any{r.id, r.locationID, r.name}
		})},
		{"classes", []string{"id", "course_id", "room_id", "start_date", "end_date", "schedule", "cost",
			"seat_limit", "down_payment", "is_public"}, rowsOf(ds.classes, func(c dsClass) []any {
			return []any{c.id, c.courseID, c.roomID, c.start, c.end, c.schedule, c.cost, c.seatLimit, c.downPayment, c.public}
		})},
		{"registrations", []string{"id", "class_id", "student_id"}, rowsOf(ds.regs, func(classID int64) []any {
			regID++
			return []any{regID, classID, regID}
		})},
	}
	for _, tb := range tables {
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{tb.name}, tb.columns, pgx.CopyFromRows(tb.rows)); err != nil {
			t.Fatalf("dataset %d: copy into %s: %v", ds.seed, tb.name, err)
		}
	}
}

func rowsOf[T any](items []T, row func(T) []any) [][]any {
	out := make([][]any, 0, len(items))
	for _, it := range items {
		out = append(out, row(it))
	}
	return out
}
