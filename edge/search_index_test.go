package edge

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestSearchIndexFollowsTheReplica checks what a search answers while the replica changes
// under the index: a change the index does not hold (a cost, a registration) is served at
// once from the index's page; a change it holds (a class's date, a course's name) is served
// at once too, from the replica alone, while the index is read again, and then from the new
// index.
func TestSearchIndexFollowsTheReplica(t *testing.T) {
	env := newSearchEnv(t, searchSeed, searchOpts{edit: func(c *config.Config) { c.Edge.SearchCache = 0 }})
	const weld = "/api/v2/public/classes?search=weld"
	item9Moved := `{"id":"9","course_id":"1","course":"Welding Basics","start":"2027-04-02","end":"2027-04-03","type":"Brick and Mortar","city":"Springfield","state":"IL","schedule":null,"cost":401,"full":true,"available_seats":0}`
	item10Booked := `{"id":"10","course_id":"1","course":"Welding Basics","start":"2027-04-01","end":"2027-04-03","type":"Brick and Mortar","city":"Springfield","state":"IL","schedule":null,"cost":500,"full":false,"available_seats":6}`
	steps := []struct {
		name   string
		change string // SQL run first
		target string
		want   string
		result string // what the index did for the search
	}{
		{"before any change", "", weld, page(4, 1, item11, item9, item10, item13), "used"},
		{"a cost and a registration: live from the index's page",
			"UPDATE classes SET cost = 401 WHERE id = 9; INSERT INTO registrations (class_id) VALUES (10)",
			weld, page(4, 1, item11, item9Dearer, item10Booked, item13), "used"},
		{"a date: from the replica at once",
			"UPDATE classes SET start_date = '2027-04-02', end_date = '2027-04-03' WHERE id = 9",
			weld, page(4, 1, item11, item10Booked, item13, item9Moved), "outdated"},
		{"then from the index read again", "", weld, page(4, 1, item11, item10Booked, item13, item9Moved), "used"},
		{"a course renamed: from the replica at once",
			"UPDATE courses SET name = 'Brazing Basics' WHERE id = 1", weld, page(0, 1), "outdated"},
		{"then from the index read again", "", weld, page(0, 1), "used"},
	}
	for _, st := range steps {
		if st.change != "" {
			testkit.Exec(t, env.dbURL, st.change)
		}
		if st.result == "used" {
			env.waitIndexCurrent(t)
		}
		before := env.indexSearches(t)
		got := env.get(http.MethodGet, st.target, nil)
		if diff := cmp.Diff(okSearchAge(st.want, "0"), got); diff != "" {
			t.Errorf("%s: GET %q mismatch (-want +got):\n%s", st.name, st.target, diff)
		}
		after := env.indexSearches(t)
		if after[st.result] != before[st.result]+1 {
			t.Errorf("%s: searches by what the index did went from %v to %v, want one more %q", st.name, before, after, st.result)
		}
	}
}

// waitIndexCurrent waits until the server's index has been read at the replica's current
// version: until a search of its own through the index is used.
func (env *searchEnv) waitIndexCurrent(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		before := env.indexSearches(t)["used"]
		env.get(http.MethodGet, "/api/v2/public/course/999/classes", nil)
		if env.indexSearches(t)["used"] > before {
			return
		}
	}
	t.Fatal("the index did not catch up with the replica within 10 s")
}
