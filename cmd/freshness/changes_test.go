package freshness

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/cmd/internal/cmdtest"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestMain removes the binaries the tests built (cmdtest.Binaries).
func TestMain(m *testing.M) { cmdtest.Main(m) }

// catalogue is the data of these tests: course 1 (Brick and Mortar) with class 11 in room
// 5 of location 3, capped at 10 seats with 2 registrations; course 2 (Online) with class
// 21. Dates are far in the future, so that "today" does not matter.
const catalogue = `
INSERT INTO locations (id, name, city, state, zip, country) VALUES (3, 'Main', 'Springfield', 'IL', '62701', 'US');
INSERT INTO rooms (id, location_id, name) VALUES (5, 3, 'Room A');
INSERT INTO courses (id, name, type, description, is_public) VALUES
  (1, 'Welding', 'Brick and Mortar', '<p>Hot</p>', TRUE),
  (2, 'Excel', 'Online', NULL, TRUE);
INSERT INTO classes (id, course_id, room_id, start_date, end_date, schedule, cost, seat_limit, down_payment, is_public) VALUES
  (11, 1, 5, '2099-05-03', '2099-05-07', 'Mon-Fri', 2500, 10, NULL, TRUE),
  (21, 2, NULL, '2099-06-01', '2099-06-30', NULL, 300, NULL, NULL, TRUE);
INSERT INTO registrations (id, class_id) VALUES (1, 11), (2, 11);
`

// install migrates a fresh database on the primary, loads catalogue, and returns the
// environment of an installation whose replica is the streaming standby, publishing to st.
func install(t *testing.T, st config.Store, s testkit.Schema) *cmdtest.Env {
	t.Helper()
	primary, standby := testkit.NewReplicatedEmptyDatabase(t)
	e := &cmdtest.Env{DatabaseURL: primary, Store: st, Extra: map[string]string{
		config.EnvName("replica.url"):      standby,
		config.EnvName("builder.schedule"): "@every 1h", // only changes build
		config.EnvName("edge.rate_limit"):  "1000000",
	}}
	maps.Copy(e.Extra, s.Env())
	if s.Tables != "" {
		testkit.Exec(t, primary, s.Tables)
	}
	e.MustBuilder(t, "migrate")
	testkit.Exec(t, primary, s.Load(catalogue))
	testkit.WaitReplayed(t, primary, standby)
	return e
}

// seen is what the edge answers once a change is served: the status and, for a 200, the
// fields of the document that must hold the given values.
type seen struct {
	path   string
	status int
	fields map[string]any
}

// changes are the kinds of change of the freshness issue, applied in order, each written for
// the reference schema and for the worked example (templates/testdata/laravel), whose
// triggers it goes through.
var changes = []struct {
	name    string
	sql     string
	laravel string
	want    seen
}{
	{"registration added", `INSERT INTO registrations (id, class_id) VALUES (3, 11)`,
		`INSERT INTO enrolments (id, course_session_id) VALUES (3, 11)`,
		seen{"/public/class/11", 200, map[string]any{"open_seats": 7.0}}},
	{"registration removed", `DELETE FROM registrations WHERE id = 1`,
		`UPDATE enrolments SET deleted_at = now() WHERE id = 1`, // soft-deleted
		seen{"/public/class/11", 200, map[string]any{"open_seats": 8.0}}},
	{"class cost", `UPDATE classes SET cost = 2600 WHERE id = 11`,
		`UPDATE course_sessions SET price = 2600.00 WHERE id = 11`,
		seen{"/public/class/11", 200, map[string]any{"cost": 2600.0}}},
	{"course renamed", `UPDATE courses SET name = 'Welding II' WHERE id = 1`,
		`UPDATE courses SET title = 'Welding II' WHERE id = 1`,
		seen{"/public/class/11", 200, map[string]any{"course_name": "Welding II"}}},
	{"class hidden", `UPDATE classes SET is_public = FALSE WHERE id = 11`,
		`UPDATE course_sessions SET status = 'cancelled' WHERE id = 11`,
		seen{"/public/class/11", 404, nil}},
	{"class shown again", `UPDATE classes SET is_public = TRUE WHERE id = 11`,
		`UPDATE course_sessions SET status = 'published' WHERE id = 11`,
		seen{"/public/class/11", 200, map[string]any{"cost": 2600.0}}},
	{"room renamed", `UPDATE rooms SET name = 'Room B' WHERE id = 5`,
		`UPDATE venues SET room = 'Room B' WHERE id = 5`,
		seen{"/public/class/11", 200, map[string]any{"location.room": "Room B"}}},
	{"new class", `INSERT INTO classes (id, course_id, start_date, end_date, cost, is_public) VALUES (12, 2, '2099-07-01', '2099-07-02', 50, TRUE)`,
		`INSERT INTO course_sessions (id, course_id, starts_on, ends_on, price, status) VALUES (12, 2, '2099-07-01', '2099-07-02', 50, 'published')`,
		seen{"/public/class/12", 200, map[string]any{"cost": 50.0, "course_name": "Excel"}}},
	{"location renamed", `UPDATE locations SET city = 'Shelbyville' WHERE id = 3`,
		`UPDATE venues SET city = 'Shelbyville' WHERE id = 5`, // a venue is its own location
		seen{"/public/class/11", 200, map[string]any{"location.city": "Shelbyville"}}},
}

// TestEveryChangeReachesTheEdge runs builder serve and an edge with their default freshness
// settings (the edge polls its store every second) and commits each kind of change on the
// primary: each is served by the edge within 15 s (it takes about a second).
//
// It runs once per kind of store on the reference schema, and once on the worked example of
// a provider's own schema with a local store.
func TestEveryChangeReachesTheEdge(t *testing.T) {
	stores := testkit.Stores(t)
	for name, s := range map[string]struct {
		store  config.Store
		schema testkit.Schema
	}{
		"local": {stores["local"], testkit.Reference()}, "s3": {stores["s3"], testkit.Reference()},
		"laravel": {testkit.NewLocalStore(t), testkit.Laravel(t)},
	} {
		t.Run(name, func(t *testing.T) {
			e := install(t, s.store, s.schema)
			serve := e.StartServe(t, nil)
			serve.WaitLog(t, "published snapshot", 1, time.Minute, nil)
			token := e.Token(t, "freshness")
			edge := e.StartEdge(t, nil)
			waitServed(t, edge, token, seen{"/public/class/11", 200, map[string]any{"open_seats": 8.0}}, time.Now())
			for _, c := range changes {
				sql := c.sql
				if s.schema.Name == "laravel" {
					sql = c.laravel
				}
				committed := commit(t, e.DatabaseURL, sql)
				took := waitServed(t, edge, token, c.want, committed)
				t.Logf("%s: served %v after its commit", c.name, took.Round(time.Millisecond))
			}
			if err := serve.Stop(); err != nil {
				t.Errorf("builder serve after SIGTERM: %v", err)
			}
		})
	}
}

// commit runs sql on dbURL and returns when it has committed.
func commit(t *testing.T, dbURL, sql string) time.Time {
	t.Helper()
	testkit.Exec(t, dbURL, sql)
	return time.Now()
}

// waitServed polls the edge until it answers w, and returns the time since since.
func waitServed(t *testing.T, edge *cmdtest.Edge, token string, w seen, since time.Time) time.Duration {
	t.Helper()
	deadline := since.Add(15 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		r := edge.Get(t, "/api/v2"+w.path, token)
		last = fmt.Sprintf("%d %s", r.StatusCode, r.Data)
		if r.StatusCode == w.status && hasFields(r.Data, w.fields) {
			return time.Since(since)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("GET %s: not %d %v within 15 s; last answer: %s", w.path, w.status, w.fields, last)
	return 0
}

// hasFields reports whether the JSON object body has every field of want; a key a.b names
// field b of object a.
func hasFields(body []byte, want map[string]any) bool {
	var doc map[string]any
	if len(want) == 0 {
		return true
	}
	if json.Unmarshal(body, &doc) != nil {
		return false
	}
	for k, v := range want {
		var got any = doc
		for _, part := range splitDots(k) {
			m, ok := got.(map[string]any)
			if !ok {
				return false
			}
			got = m[part]
		}
		if got != v {
			return false
		}
	}
	return true
}

func splitDots(k string) []string { return strings.Split(k, ".") }

// classCost returns the cost of class 11 on dbURL.
func classCost(t *testing.T, dbURL string) int64 {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var c int64
	if err := conn.QueryRow(ctx, `SELECT cost FROM classes WHERE id = 11`).Scan(&c); err != nil {
		t.Fatal(err)
	}
	return c
}
