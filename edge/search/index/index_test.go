package index

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
)

// class is one class of a test catalogue, as the index holds it.
type class struct {
	id         int64
	course     int
	start, end int32
}

// catalogue is a test catalogue: courses (as the database would lower their names) and
// their classes.
type catalogue struct {
	courses []course // lo and hi unused
	classes []class
}

// index builds the Index of c the way Load does, from rows in any class order.
func (c catalogue) index(t testing.TB, fold *string) *Index {
	t.Helper()
	ix := newIndex()
	for i := range c.courses {
		co := c.courses[i]
		var ids []int64
		var starts, ends []int32
		for _, cl := range c.classes {
			if cl.course == i {
				ids, starts, ends = append(ids, cl.id), append(starts, cl.start), append(ends, cl.end)
			}
		}
		typ := map[bool]string{true: "Online", false: "Blended"}[co.online]
		title := strings.ToUpper(co.name)
		r := row{version: 7, id: &co.id, title: &title, typ: &typ, name: &co.name, ids: ids, starts: starts, ends: ends, fold: fold}
		if err := ix.addRow(&r); err != nil {
			t.Fatal(err)
		}
	}
	return ix
}

// want is the spec's search (4.3, 4.4; D4, D11, D12) written out plainly over c: every
// class that matches, sorted, then the page cut from it.
func (c catalogue) want(q Query) (page []int64, total int64) {
	var all []class
	for _, cl := range c.classes {
		co := c.courses[cl.course]
		switch {
		case q.CourseID != 0 && co.id != q.CourseID:
		case !strings.Contains(co.name, strings.ToLower(q.Search)):
		case !co.online && cl.start < day(q.Today):
		case !q.Start.IsZero() && cl.start < day(q.Start):
		case !q.End.IsZero() && cl.start > day(q.End):
		case !q.Date.IsZero() && (cl.start > day(q.Date) || cl.end < day(q.Date)):
		default:
			all = append(all, cl)
		}
	}
	slices.SortFunc(all, func(a, b class) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.id, b.id))
	})
	for i := q.Offset; i < int64(len(all)) && i < q.Offset+q.Limit; i++ {
		page = append(page, all[i].id)
	}
	return page, int64(len(all))
}

var asciiLower = "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz"

// Days of the test catalogues: 2027-01-01 is day 17897.
const day0 = 20819

func date(d int32) time.Time { return time.Unix(int64(d)*86400, 0).UTC() }

// randomCatalogue draws a catalogue in which many classes share start dates (ties broken by
// id) and a few start or end at infinity.
func randomCatalogue(r *rand.Rand) catalogue {
	words := []string{"pottery", "online", "weaving", "c# basics", "100% cotton_weave", "level 1", "résumé"}
	var c catalogue
	nCourses := 1 + r.IntN(40)
	for i := range nCourses {
		name := words[r.IntN(len(words))] + " " + words[r.IntN(len(words))]
		c.courses = append(c.courses, course{id: int64(1 + i*3 + r.IntN(3)), name: name, online: r.IntN(3) == 0})
	}
	for i := range r.IntN(400) {
		start := day0 + int32(r.IntN(60)) - 30
		end := start + int32(r.IntN(20))
		switch r.IntN(50) {
		case 0:
			start, end = minDay, minDay
		case 1:
			end = maxDay
		case 2:
			start, end = maxDay, maxDay
		}
		c.classes = append(c.classes, class{id: int64(1000 - i), course: r.IntN(nCourses), start: start, end: end})
	}
	r.Shuffle(len(c.classes), func(i, j int) { c.classes[i], c.classes[j] = c.classes[j], c.classes[i] })
	return c
}

func randomQuery(r *rand.Rand, c catalogue) Query {
	q := Query{Today: date(day0), Limit: int64(1 + r.IntN(12)), Offset: int64(r.IntN(40))}
	if r.IntN(4) == 0 {
		q.Today = date(day0 + int32(r.IntN(80)) - 40)
	}
	if r.IntN(3) == 0 {
		name := c.courses[r.IntN(len(c.courses))].name
		n := 1 + r.IntN(min(len(name), 8))
		at := r.IntN(len(name) - n + 1)
		q.Search = strings.ToUpper(name[at : at+n])
		if r.IntN(2) == 0 {
			q.Search = strings.ToLower(q.Search)
		}
	}
	if r.IntN(5) == 0 {
		q.CourseID = int64(r.IntN(len(c.courses)*3 + 2))
	}
	for _, f := range []*time.Time{&q.Start, &q.End, &q.Date} {
		if r.IntN(3) == 0 {
			*f = date(day0 + int32(r.IntN(80)) - 40)
		}
	}
	return q
}

// TestPageMatchesTheSpec compares the index's pages and totals with want on many random
// catalogues and searches.
func TestPageMatchesTheSpec(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 1))
	checked := 0
	for range 300 {
		c := randomCatalogue(r)
		ix := c.index(t, &asciiLower)
		for range 100 {
			q := randomQuery(r, c)
			classes, total, ok := ix.Page(q, nil)
			page := ids(classes)
			if strings.ContainsFunc(q.Search, func(r rune) bool { return r >= 0x80 }) {
				if ok {
					t.Fatalf("Page(%+v) answered a search that is not ASCII", q)
				}
				continue
			}
			wantPage, wantTotal := c.want(q)
			if !ok || total != wantTotal || !slices.Equal(page, wantPage) {
				t.Fatalf("Page(%+v) = %v, %d, %v; want %v, %d, true", q, page, total, ok, wantPage, wantTotal)
			}
			checked++
		}
	}
	t.Logf("%d searches checked", checked)
}

// TestPageFold checks when the index leaves a name search to the database: a search that is
// not ASCII, and every search with a letter when the database lowers letters its own way or
// could not say (NULL: not UTF-8). Searches without letters stay with the index.
func TestPageFold(t *testing.T) {
	c := catalogue{
		courses: []course{{id: 1, name: "c# basics"}, {id: 2, name: "résumé writing"}},
		classes: []class{{id: 10, course: 0, start: day0, end: day0}, {id: 20, course: 1, start: day0, end: day0}},
	}
	turkish := strings.Replace(asciiLower, "i", "ı", 1)
	tests := []struct {
		fold   *string
		search string
		want   []int64 // nil: not ok
	}{
		{&asciiLower, "C# BASICS", []int64{10}},
		{&asciiLower, "Writing", []int64{20}},
		{&asciiLower, "#", []int64{10}},
		{&asciiLower, "RÉSUMÉ", nil},
		{&asciiLower, "é", nil},
		{&turkish, "basics", nil},
		{&turkish, "#", []int64{10}},
		{nil, "basics", nil},
		{nil, "", []int64{10, 20}},
	}
	for _, tt := range tests {
		ix := c.index(t, tt.fold)
		classes, _, ok := ix.Page(Query{Search: tt.search, Today: date(day0), Limit: 25}, nil)
		page := ids(classes)
		if !ok {
			page = nil
		}
		if diff := gocmp.Diff(tt.want, page); diff != "" {
			fold := "NULL"
			if tt.fold != nil {
				fold = *tt.fold
			}
			t.Errorf("fold %q: Page(search %q) mismatch (-want +got):\n%s", fold, tt.search, diff)
		}
	}
}

// TestAddRowRefuses checks that rows the index cannot use are refused, not half taken.
func TestAddRowRefuses(t *testing.T) {
	id1, id2, typ, name := int64(1), int64(2), "Blended", "x"
	course := func(version int64, id *int64) *row {
		return &row{version: version, id: id, title: &name, typ: &typ, name: &name}
	}
	tests := []struct {
		name  string
		rows  func(ix *Index) error
		wants string
	}{
		{"two versions", func(ix *Index) error {
			_ = ix.addRow(course(1, &id1))
			return ix.addRow(course(2, &id2))
		}, "versions 1 and 2"},
		{"ids not ascending", func(ix *Index) error {
			_ = ix.addRow(course(1, &id2))
			return ix.addRow(course(1, &id1))
		}, "ascending id order"},
		{"arrays of other lengths", func(ix *Index) error {
			r := course(1, &id1)
			r.ids, r.starts, r.ends = []int64{5}, []int32{1, 2}, []int32{1}
			return ix.addRow(r)
		}, "1 ids, 2 starts and 1 ends"},
		{"no name", func(ix *Index) error {
			r := course(1, &id1)
			r.title = nil
			return ix.addRow(r)
		}, "no name or type"},
	}
	for _, tt := range tests {
		err := tt.rows(newIndex())
		if err == nil || !strings.Contains(err.Error(), tt.wants) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.wants)
		}
	}
}

// ids are the ids of classes.
func ids(classes []Class) []int64 {
	var out []int64
	for _, c := range classes {
		out = append(out, c.ID)
	}
	return out
}

func ExampleIndex_Page() {
	c := catalogue{
		courses: []course{{id: 1, name: "pottery"}, {id: 2, name: "online pottery", online: true}},
		classes: []class{
			{id: 10, course: 0, start: day0 - 5, end: day0 - 4}, // past, in person: out
			{id: 11, course: 0, start: day0 + 3, end: day0 + 4},
			{id: 20, course: 1, start: day0 - 9, end: day0 - 2}, // past, online: in
			{id: 21, course: 1, start: day0 + 3, end: day0 + 9},
		},
	}
	ix := c.index(&testing.T{}, &asciiLower)
	page, total, ok := ix.Page(Query{Search: "Pottery", Today: date(day0), Limit: 2, Offset: 1}, nil)
	for _, c := range page {
		fmt.Println(c.ID, c.CourseID, c.Course, c.Type, c.Start.Format(time.DateOnly), c.End.Format(time.DateOnly))
	}
	fmt.Println(total, ok)
	// Output:
	// 11 1 POTTERY Blended 2027-01-04 2027-01-05
	// 21 2 ONLINE POTTERY Online 2027-01-04 2027-01-10
	// 3 true
}
