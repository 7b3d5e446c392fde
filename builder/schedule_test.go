package builder

import (
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/freshness"
	"github.com/trainingco/catalogue/config"
)

// TestScheduleHasMidnight: besides builder.schedule, serve builds just after midnight in
// the configured time zone, when upcoming classes and can_register move with the day.
func TestScheduleHasMidnight(t *testing.T) {
	cfg := config.Default()
	cfg.Database.URL = "postgres://unused@127.0.0.1:1/x"
	cfg.Timezone = "America/Chicago"
	cfg.Builder.Schedule = "@every 7h"
	s, err := newServeLoop(cfg, ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.schedule(&freshness.Queue{})
	if err != nil {
		t.Fatal(err)
	}
	chicago, _ := time.LoadLocation("America/Chicago")
	if c.Location().String() != chicago.String() {
		t.Errorf("the schedule runs in %v, want timezone %v", c.Location(), chicago)
	}
	before := time.Date(2027, 3, 1, 23, 59, 30, 0, chicago)
	want := time.Date(2027, 3, 2, 0, 0, 0, 0, chicago)
	var nexts []time.Time
	for _, e := range c.Entries() {
		nexts = append(nexts, e.Schedule.Next(before))
	}
	found := false
	for _, n := range nexts {
		found = found || n.Equal(want)
	}
	if len(nexts) != 2 || !found {
		t.Errorf("the schedule's next runs after %v are %v, want builder.schedule's and %v", before, nexts, want)
	}
}
