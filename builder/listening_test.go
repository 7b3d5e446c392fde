package builder

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestListeningGauge: of two builder serves on one catalogue, the one holding the listener
// lease reports catalogue_builder_listening 1 and the other 0; when the listener stops, the
// other takes over and reports 1. Summed over the builders, 0 is the alert: changes then
// wait for builder.schedule.
func TestListeningGauge(t *testing.T) {
	cfg := freshCfg(t, testkit.NewLocalStore(t))
	ma, mb := NewMetrics(nil), NewMetrics(nil)
	a := startServeWith(t, cfg, ServeOptions{Metrics: ma})
	a.next(t) // the build at start: a listens
	b := startServeWith(t, cfg, ServeOptions{Metrics: mb})
	testkit.WaitFor(t, 5*time.Second, "b to find the lease held", func() bool {
		return countLogs(b.logs, "another builder serve listens for changes; this one builds on the schedule and takes over if it stops") == 1
	})
	if got, other := testutil.ToFloat64(ma.listening), testutil.ToFloat64(mb.listening); got != 1 || other != 0 {
		t.Fatalf("listening: the leaseholder %v, the other %v; want 1 and 0", got, other)
	}
	a.stop()
	if got := testutil.ToFloat64(ma.listening); got != 0 {
		t.Errorf("listening of the builder stopped: %v, want 0 (its connection ended)", got)
	}
	testkit.WaitFor(t, 10*time.Second, "b to take the lease over", func() bool { return testutil.ToFloat64(mb.listening) == 1 })
}

// TestListeningAfterAFailedPosition: a notification whose WAL position cannot be read on a
// connection that still works (here a function in front of pg_current_wal_insert_lsn that
// fails on demand) used to leave that connection listening, the change unbuilt and the gauge
// at 0 for good (pgxlisten logs a handler's error and goes on). The connection is now
// closed and opened again: the change is published by the rebuild, and the gauge is 1.
func TestListeningAfterAFailedPosition(t *testing.T) {
	cfg := freshCfg(t, testkit.NewLocalStore(t))
	testkit.Exec(t, cfg.Database.URL, `CREATE TABLE lsn_broken (broken bool);
		CREATE FUNCTION public.pg_current_wal_insert_lsn() RETURNS pg_lsn LANGUAGE plpgsql AS $$
		BEGIN
			IF EXISTS (SELECT FROM lsn_broken) THEN RAISE EXCEPTION 'the position is broken for this test'; END IF;
			RETURN pg_catalog.pg_current_wal_insert_lsn();
		END $$;
		DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET search_path = public, pg_catalog', current_database()); END $$`)
	m := NewMetrics(nil)
	s := startServeWith(t, cfg, ServeOptions{Metrics: m})
	s.waitServed(t, cfg, expectedDocs(t, cfg.Database.URL), "the build at start")
	testkit.Exec(t, cfg.Database.URL, `INSERT INTO lsn_broken VALUES (true); UPDATE classes SET cost = 4242 WHERE id = 101`)
	testkit.WaitFor(t, 5*time.Second, "the failed position to be logged", func() bool {
		return strings.Contains(s.logs.String(), "the position is broken for this test")
	})
	testkit.Exec(t, cfg.Database.URL, `DELETE FROM lsn_broken`)
	s.waitServed(t, cfg, expectedDocs(t, cfg.Database.URL), "the change whose position failed")
	testkit.WaitFor(t, 5*time.Second, "listening again", func() bool { return testutil.ToFloat64(m.listening) == 1 })
}
