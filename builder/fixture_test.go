package builder

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/publish"
	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// fixture is a small catalogue with non-public rows that carry distinctive markers
// (secrets below): a non-public course with a public class, a non-public class of a public
// course in a room and location no public class uses.
//
// Public: course 1 (Online, class 101), course 2 (Brick and Mortar, classes 102 upcoming and
// 103 past). "Today" in these tests is 2027-03-01.
const fixture = `
INSERT INTO locations (id, name, city, state, zip, country) VALUES
  (1, 'Main Campus', 'Springfield', 'IL', '62701', 'US'),
  (2, 'ZZSECRETLOC Hidden Campus', 'ZZSECRETCITY', 'ZZ', '00000', 'ZZ');
INSERT INTO rooms (id, location_id, name) VALUES (10, 1, 'Room A'), (20, 2, 'ZZSECRETROOM');
INSERT INTO courses (id, name, type, description, is_public) VALUES
  (1, 'Go Fundamentals', 'Online', '<p>Learn Go</p>', TRUE),
  (2, 'Databases', 'Brick and Mortar', '<p>Learn SQL</p>', TRUE),
  (777001, 'ZZSECRETCOURSE Layoffs Briefing', 'Blended', 'ZZSECRETDESC confidential', FALSE);
INSERT INTO classes (id, course_id, room_id, start_date, end_date, schedule, cost, seat_limit, down_payment, is_public) VALUES
  (101, 1, NULL, '2027-04-01', '2027-04-30', 'Self paced', 100, NULL, NULL, TRUE),
  (102, 2, 10, '2027-05-03', '2027-05-07', 'Mon-Fri 9-5', 2500, 12, 30000, TRUE),
  (103, 2, 10, '2026-01-05', '2026-01-09', NULL, 2400, 12, NULL, TRUE),
  (777002, 2, 20, '2027-06-01', '2027-06-02', 'ZZSECRETSCHED internal', 9191919, 5, NULL, FALSE),
  (777004, 777001, 20, '2027-06-03', '2027-06-04', 'ZZSECRETSCHED2', 8181818, NULL, NULL, TRUE);
INSERT INTO registrations (id, class_id, student_id) VALUES
  (1, 101, 1), (2, 102, 2), (3, 777002, 3), (4, 777002, 4), (5, 777004, 5);
`

// secrets are strings of the non-public rows that no stored object may contain (D28).
var secrets = []string{"ZZSECRET", "777001", "777002", "777004", "9191919", "8181818"}

// routes are the documents of the fixture: the seven course lists (every non-empty set of
// types), popular, two courses and three classes.
var routes = []string{
	"/public/class/101",
	"/public/class/102",
	"/public/class/103",
	"/public/course/1",
	"/public/course/2",
	"/public/courses",
	"/public/courses?type=Blended",
	"/public/courses?type=Blended&type=Brick and Mortar",
	"/public/courses?type=Blended&type=Online",
	"/public/courses?type=Brick and Mortar",
	"/public/courses?type=Brick and Mortar&type=Online",
	"/public/courses?type=Online",
	"/public/popular",
}

// today is the fixed "today" of these tests.
var today = time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)

// newFixture returns a configuration whose database holds the fixture, for each kind of
// store (the store does not exist yet).
func newFixture(t *testing.T) map[string]config.Config {
	t.Helper()
	cfgs := make(map[string]config.Config)
	for name, st := range testkit.Stores(t) {
		dbURL := testkit.NewMigratedDatabase(t)
		testkit.Exec(t, dbURL, fixture)
		cfg := config.Default()
		cfg.Database.URL = dbURL
		cfg.Store = st
		cfgs[name] = cfg
	}
	return cfgs
}

// clock returns a clock that starts at today and moves one second at every reading, so that
// the snapshot ids of successive runs sort in run order.
func clock() func() time.Time {
	var mu sync.Mutex
	t := today
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

// mustRun runs one build with the clock now and returns its result.
func mustRun(t *testing.T, cfg config.Config, now func() time.Time) publish.Result {
	t.Helper()
	res, err := Run(context.Background(), cfg, RunOptions{Now: now})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func mustOpenStore(t *testing.T, cfg config.Config) store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), store.Options(cfg.Store))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	return s
}
