package builder

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/builder/catalogue"
	"github.com/trainingco/catalogue/builder/freshness"
	"github.com/trainingco/catalogue/builder/publish"
	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/webhook/queue"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// freshCfg returns a configuration for serve over the fixture: the primary holds it, the
// streaming standby is the replica, and only changes (not the hourly schedule) make builds.
func freshCfg(t *testing.T, st config.Store) config.Config {
	t.Helper()
	primary, standby := testkit.NewReplicatedDatabase(t)
	testkit.Exec(t, primary, fixture)
	testkit.WaitReplayed(t, primary, standby)
	cfg := config.Default()
	cfg.Database.URL, cfg.Replica.URL = primary, standby
	cfg.Store = st
	cfg.Builder.Schedule = "@every 1h"
	cfg.Builder.Debounce, cfg.Builder.MaxDelay = 50*time.Millisecond, 300*time.Millisecond
	// Under make test every package creates databases at once, and the standby can fall
	// seconds behind replaying them: a test must not see the bound pass by accident.
	cfg.Builder.ReplicaWait = time.Minute
	return cfg
}

// served is one publication of a running serve.
type served struct {
	res publish.Result
	err error
}

// serving is builder serve running in the background.
type serving struct {
	runs   chan served
	cancel context.CancelFunc
	done   chan struct{}
	logs   *syncBuffer
}

// startServe runs Serve with cfg until the test ends; progress, when set, sees every
// build's phases.
func startServe(t *testing.T, cfg config.Config, progress func(publish.Progress)) *serving {
	t.Helper()
	return startServeWith(t, cfg, ServeOptions{Progress: progress})
}

// startServeWith is startServe with more options (its own Logger, Now and AfterRun are
// replaced).
func startServeWith(t *testing.T, cfg config.Config, opts ServeOptions) *serving {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &serving{runs: make(chan served, 100), cancel: cancel, done: make(chan struct{}), logs: &syncBuffer{}}
	opts.Logger = slog.New(slog.NewJSONHandler(s.logs, nil))
	opts.Now = func() time.Time { return today }
	opts.AfterRun = func(res publish.Result, err error) { s.runs <- served{res, err} }
	go func() {
		defer close(s.done)
		err := Serve(ctx, cfg, opts)
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("serve's log:\n%s", s.logs.buf.String())
		}
	})
	return s
}

// stop stops serve as SIGTERM does and waits for it to return.
func (s *serving) stop() {
	s.cancel()
	<-s.done
}

// next returns serve's next build, failing the test after 20 seconds without one.
func (s *serving) next(t *testing.T) served {
	t.Helper()
	select {
	case r := <-s.runs:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("no build within 20 s")
		return served{}
	}
}

// waitServed waits until a publication of serve holds want, and returns it.
func (s *serving) waitServed(t *testing.T, cfg config.Config, want map[string]string, what string) publish.Result {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		r := s.next(t)
		if r.err != nil {
			t.Logf("a build failed: %v", r.err)
			continue
		}
		if cmp.Equal(want, storeDocs(t, cfg)) {
			return r.res
		}
	}
	t.Fatalf("%s: not published within 20 s; store (-want +got):\n%s", what, cmp.Diff(want, storeDocs(t, cfg)))
	return publish.Result{}
}

// expectedDocs renders the whole catalogue as the primary holds it now, through the path a
// full build takes (whose documents TestRender in package catalogue checks by hand).
func expectedDocs(t *testing.T, dbURL string) map[string]string {
	t.Helper()
	var data *catalogue.Data
	err := readTx(context.Background(), dbURL, func(tx pgx.Tx) (err error) {
		data, err = catalogue.Read(context.Background(), tx, templates.MustDefault())
		return err
	})
	if err != nil {
		t.Fatalf("read %s: %v", dbURL, err)
	}
	r, err := catalogue.Render(data, today)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	out := make(map[string]string, len(r.Docs))
	for k, v := range r.Docs {
		out[k] = string(v)
	}
	return out
}

// storeDocs returns every document of the store's current snapshot, each checked against
// its hash: a snapshot that is not whole fails the test.
func storeDocs(t *testing.T, cfg config.Config) map[string]string {
	t.Helper()
	ctx := context.Background()
	st := mustOpenStore(t, cfg)
	m, err := snapshot.ReadCurrent(ctx, st)
	if err != nil {
		t.Fatalf("ReadCurrent: %v", err)
	}
	out := make(map[string]string, len(m.Documents))
	for route, e := range m.Documents {
		b, err := snapshot.ReadDocument(ctx, st, e)
		if err != nil {
			t.Fatalf("snapshot %s is not whole: %s: %v", m.ID, route, err)
		}
		out[route] = string(b)
	}
	return out
}

// freshChanges are the changes of the freshness issue's mix, applied to fixture in order.
var freshChanges = []struct{ name, sql string }{
	{"registration added", `INSERT INTO registrations (id, class_id, student_id) VALUES (100, 102, 9)`},
	{"registration removed", `DELETE FROM registrations WHERE id = 100`},
	{"class cost", `UPDATE classes SET cost = 2600 WHERE id = 102`},
	{"course renamed", `UPDATE courses SET name = 'Databases II' WHERE id = 2`},
	{"class hidden", `UPDATE classes SET is_public = FALSE WHERE id = 102`},
	{"class shown again", `UPDATE classes SET is_public = TRUE WHERE id = 102`},
	{"room renamed", `UPDATE rooms SET name = 'Room B' WHERE id = 10`},
	{"new class", `INSERT INTO classes (id, course_id, room_id, start_date, end_date, schedule, cost, seat_limit, down_payment, is_public)
		VALUES (104, 2, 10, '2027-03-02', '2027-03-03', 'Tue-Wed', 1900, 8, NULL, TRUE)`},
}

// TestServePublishesEveryKindOfChange runs serve against the primary and its streaming
// standby and commits each kind of change in turn: each is published, by a build that
// rendered only what the change affects, as a full build of the database would publish it.
func TestServePublishesEveryKindOfChange(t *testing.T) {
	for name, st := range testkit.Stores(t) {
		t.Run(name, func(t *testing.T) {
			cfg := freshCfg(t, st)
			s := startServe(t, cfg, nil)
			first := s.waitServed(t, cfg, expectedDocs(t, cfg.Database.URL), "the build at start")
			if b := first.Manifest.Build; b.Trigger != snapshot.TriggerStart || b.Incremental {
				t.Errorf("first build = %+v, want a full build at start", b)
			}
			before := expectedDocs(t, cfg.Database.URL)
			for _, c := range freshChanges {
				began := time.Now()
				testkit.Exec(t, cfg.Database.URL, c.sql)
				after := expectedDocs(t, cfg.Database.URL)
				res := s.waitServed(t, cfg, after, c.name)
				// The incremental build announces in the feeds exactly the courses and classes
				// whose single read changed or went (D36), after the position before it.
				if diff := cmp.Diff(feedDiff(before, after), res.Feed, cmpopts.IgnoreFields(publish.FeedChanges{}, "After")); diff != "" {
					t.Errorf("%s: feed changes (-whole catalogue compared +announced):\n%s", c.name, diff)
				}
				before = after
				b := res.Manifest.Build
				if b.Trigger != snapshot.TriggerChange || !b.Incremental || b.Changed == 0 {
					t.Errorf("%s: published by %+v, want an incremental build for the change", c.name, b)
				}
				t.Logf("%s: published %v after the commit, %d documents rendered, %d changed: %v",
					c.name, time.Since(began).Round(time.Millisecond), b.Rendered, b.Changed, b.Routes)
			}
		})
	}
}

// feedDiff is what the feeds must announce between two whole catalogues: the courses and
// classes whose document differs or is gone, ascending.
func feedDiff(before, after map[string]string) publish.FeedChanges {
	var ch publish.FeedChanges
	routes := maps.Clone(before)
	maps.Copy(routes, after)
	for _, route := range slices.Sorted(maps.Keys(routes)) {
		kind, id, ok := snapshot.FeedRoute(route)
		if !ok || before[route] == after[route] {
			continue
		}
		if kind == snapshot.KindCourse {
			ch.Courses = append(ch.Courses, id)
		} else {
			ch.Classes = append(ch.Classes, id)
		}
	}
	return ch
}

// TestServeLosesNothingWhenItsConnectionIsKilled kills serve's LISTEN connection with
// pg_terminate_backend while changes are committed, three times: every change is
// published, those committed while nothing listened by the full build after reconnecting.
func TestServeLosesNothingWhenItsConnectionIsKilled(t *testing.T) {
	cfg := freshCfg(t, testkit.NewLocalStore(t))
	s := startServe(t, cfg, nil)
	s.waitServed(t, cfg, expectedDocs(t, cfg.Database.URL), "the build at start")
	for i := range 3 {
		testkit.Exec(t, cfg.Database.URL, fmt.Sprintf(`UPDATE classes SET cost = %d WHERE id = 101`, 1000+i))
		killListener(t, cfg.Database.URL)
		// Committed while no connection listens: its notification is lost.
		testkit.Exec(t, cfg.Database.URL, fmt.Sprintf(`INSERT INTO registrations (id, class_id) VALUES (%d, 102)`, 200+i))
		res := s.waitServed(t, cfg, expectedDocs(t, cfg.Database.URL), fmt.Sprintf("changes around kill %d", i+1))
		t.Logf("kill %d: published by %+v", i+1, res.Manifest.Build)
	}
	if n := countLogs(s.logs, "listening for changes on the primary"); n < 4 {
		t.Errorf("serve connected %d times, want at least 4 (start and after each kill)", n)
	}
}

// killListener terminates the listening connection of serve on dbURL's database and waits
// until it is gone.
func killListener(t *testing.T, dbURL string) {
	t.Helper()
	const q = `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1 AND datname = current_database()`
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, q, freshness.ApplicationName).Scan(&n); err != nil || n != 1 {
		t.Fatalf("terminate the listener: %d terminated, %v; want 1", n, err)
	}
}

// countLogs counts the log lines whose message is msg.
func countLogs(logs *syncBuffer, msg string) int {
	logs.mu.Lock()
	defer logs.mu.Unlock()
	n := 0
	for _, line := range bytes.Split(logs.buf.Bytes(), []byte("\n")) {
		var rec struct {
			Msg string `json:"msg"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Msg == msg {
			n++
		}
	}
	return n
}

// TestServeWaitsForTheReplica pauses the standby's replay, commits a change on the primary
// and checks that serve waits for the replica rather than publish what the replica still
// shows: nothing is published while replay is paused, and the first publication after it
// resumes holds the change. With a short builder.replica_wait, serve stops waiting at the
// bound and publishes what the replica holds.
func TestServeWaitsForTheReplica(t *testing.T) {
	cfg := freshCfg(t, testkit.NewLocalStore(t))
	s := startServe(t, cfg, nil)
	s.waitServed(t, cfg, expectedDocs(t, cfg.Database.URL), "the build at start")
	before := storeDocs(t, cfg)

	pauseReplay(t, cfg.Replica.URL)
	testkit.Exec(t, cfg.Database.URL, `UPDATE classes SET cost = 777 WHERE id = 102`)
	select {
	case r := <-s.runs:
		t.Fatalf("published %+v while the replica had not replayed the change", r)
	case <-time.After(1500 * time.Millisecond):
	}
	if diff := cmp.Diff(before, storeDocs(t, cfg)); diff != "" {
		t.Fatalf("the store changed while the replica lagged (-before +now):\n%s", diff)
	}
	resumeReplay(t, cfg.Replica.URL)
	r := s.next(t)
	if r.err != nil {
		t.Fatalf("build after the replica caught up: %v", r.err)
	}
	if diff := cmp.Diff(expectedDocs(t, cfg.Database.URL), storeDocs(t, cfg)); diff != "" {
		t.Errorf("the first publication after the replica caught up lacks the change (-want +got):\n%s", diff)
	}
}

// TestServeReplicaWaitIsBounded: with replay paused longer than builder.replica_wait, serve
// publishes after the bound and counts the timeout.
func TestServeReplicaWaitIsBounded(t *testing.T) {
	cfg := freshCfg(t, testkit.NewLocalStore(t))
	cfg.Builder.ReplicaWait = 300 * time.Millisecond
	s := startServe(t, cfg, nil)
	s.waitServed(t, cfg, expectedDocs(t, cfg.Database.URL), "the build at start")
	const warning = "the replica has not replayed the changes within builder.replica_wait; reading it anyway, and building them again until a build finds them replayed"
	warned := countLogs(s.logs, warning) // the build at start may have waited too, for other tests' WAL
	pauseReplay(t, cfg.Replica.URL)
	defer resumeReplay(t, cfg.Replica.URL)
	began := time.Now()
	testkit.Exec(t, cfg.Database.URL, `UPDATE classes SET cost = 778 WHERE id = 102`)
	r := s.next(t)
	if r.err != nil {
		t.Fatalf("build: %v", r.err)
	}
	if took := time.Since(began); took < cfg.Builder.ReplicaWait {
		t.Errorf("published %v after the commit, want after waiting builder.replica_wait (%v)", took, cfg.Builder.ReplicaWait)
	}
	if n := countLogs(s.logs, warning) - warned; n != 1 {
		t.Errorf("%d warnings about the replica for the change, want 1", n)
	}
}

// TestServeBuildsAgainWhatTheReplicaMissed is the operator's repro: replay paused past
// builder.replica_wait, a course renamed and a class's cost changed on the primary, replay
// resumed. The build that timed out published the replica's old rows, and nothing built
// them again until builder.schedule (an hour here); serve builds the batch again, with
// backoff while the replica still lags, until a build that saw the replica caught up
// publishes both changes. Seen failing before: no build within 20 s of the resume.
func TestServeBuildsAgainWhatTheReplicaMissed(t *testing.T) {
	cfg := freshCfg(t, testkit.NewLocalStore(t))
	cfg.Builder.ReplicaWait = 300 * time.Millisecond
	s := startServe(t, cfg, nil)
	s.waitServed(t, cfg, expectedDocs(t, cfg.Database.URL), "the build at start")
	pauseReplay(t, cfg.Replica.URL)
	testkit.Exec(t, cfg.Database.URL, `UPDATE courses SET name = 'Databases II' WHERE id = 2;
		UPDATE classes SET cost = 2600 WHERE id = 102`)
	want := expectedDocs(t, cfg.Database.URL)
	builds := buildsFor(t, s, 4*time.Second)
	t.Logf("%d builds in 4 s of replay paused", builds)
	if builds == 0 || builds > 4 {
		// At 300 ms a build, retried at once, it would be over ten; backoff makes three.
		t.Errorf("%d builds in 4 s of replay paused, want 1 (the one that timed out) to 4 (its retries with backoff)", builds)
	}
	if cmp.Equal(want, storeDocs(t, cfg)) {
		t.Fatal("the changes were published while replay was paused: the test proves nothing")
	}
	resumeReplay(t, cfg.Replica.URL)
	resumed := time.Now()
	res := s.waitServed(t, cfg, want, "the changes once the replica replayed them")
	if took := time.Since(resumed); took > 10*time.Second {
		t.Errorf("published %v after replay resumed, want within the backoff (< 10 s)", took)
	}
	t.Logf("published %v after replay resumed by %+v", time.Since(resumed).Round(time.Millisecond), res.Manifest.Build)
	const warning = "the replica has not replayed the changes within builder.replica_wait; reading it anyway, and building them again until a build finds them replayed"
	if countLogs(s.logs, warning) == 0 {
		t.Errorf("serve did not warn %q", warning)
	}
}

// buildsFor counts serve's builds during d, failing the test at a failed one.
func buildsFor(t *testing.T, s *serving, d time.Duration) int {
	t.Helper()
	n := 0
	end := time.After(d)
	for {
		select {
		case r := <-s.runs:
			if r.err != nil {
				t.Errorf("build: %v", r.err)
			}
			n++
		case <-end:
			return n
		}
	}
}

// pauseReplay pauses the standby's replay (of every database on it) until resumeReplay or
// the end of the test.
func pauseReplay(t *testing.T, standby string) {
	t.Helper()
	testkit.Exec(t, standby, `SELECT pg_wal_replay_pause()`)
	t.Cleanup(func() { resumeReplay(t, standby) })
}

func resumeReplay(t *testing.T, standby string) {
	t.Helper()
	testkit.Exec(t, standby, `SELECT pg_wal_replay_resume()`)
}

// TestServeStoppedMidChangeNeverHalfPublishes stops serve, as SIGTERM does, at each phase of
// the build that publishes a change: before the pointer the previous snapshot stays current,
// whole; from the pointer on the new one is current, whole. Never a mix.
func TestServeStoppedMidChangeNeverHalfPublishes(t *testing.T) {
	phases := []struct {
		phase     string
		published bool // whether the change is current after a stop in this phase
	}{
		{publish.PhaseHashing, false},
		{publish.PhaseUploading, false},
		{publish.PhaseManifest, false},
		{publish.PhaseCollecting, true},
	}
	for _, p := range phases {
		t.Run(p.phase, func(t *testing.T) {
			cfg := freshCfg(t, testkit.NewLocalStore(t))
			var mu sync.Mutex
			armed := false
			var s *serving
			s = startServe(t, cfg, func(pr publish.Progress) {
				mu.Lock()
				defer mu.Unlock()
				if armed && pr.Phase == p.phase {
					s.cancel()
				}
			})
			s.waitServed(t, cfg, expectedDocs(t, cfg.Database.URL), "the build at start")
			before := storeDocs(t, cfg)
			mu.Lock()
			armed = true
			mu.Unlock()
			testkit.Exec(t, cfg.Database.URL, `UPDATE classes SET cost = 4242 WHERE id = 102`)
			select {
			case <-s.done:
			case <-time.After(20 * time.Second):
				t.Fatal("serve did not stop within 20 s")
			}
			want := before
			if p.published {
				want = expectedDocs(t, cfg.Database.URL)
			}
			if diff := cmp.Diff(want, storeDocs(t, cfg)); diff != "" {
				t.Errorf("stopped in %s: current snapshot mismatch (-want +got):\n%s", p.phase, diff)
			}
		})
	}
}

// TestServeWarnsOfMissingTriggers: with builder.listen on and a change trigger missing on
// the primary (builder migrate run with --listen false, or a trigger dropped since),
// serve listens and hears nothing of that table; it says so at start, naming the table,
// instead of only "listening for changes on the primary". Seen failing when it said nothing.
func TestServeWarnsOfMissingTriggers(t *testing.T) {
	cfg := freshCfg(t, testkit.NewLocalStore(t))
	testkit.Exec(t, cfg.Database.URL, `DROP TRIGGER catalogue_notify_update ON rooms`)
	s := startServe(t, cfg, nil)
	s.next(t)
	const msg = "a change trigger builder.listen needs is missing on the primary: changes it would announce wait for the schedule"
	deadline := time.Now().Add(10 * time.Second)
	for countLogs(s.logs, msg) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	s.logs.mu.Lock()
	log := s.logs.buf.String()
	s.logs.mu.Unlock()
	if countLogs(s.logs, msg) != 1 || !strings.Contains(log, `"check":"triggers on rooms"`) || !strings.Contains(log, "catalogue_notify_update") {
		t.Errorf("serve's log holds %d warnings %q naming the rooms trigger, want 1", countLogs(s.logs, msg), msg)
	}
}

// TestServeAfterRollback (D48): a rollback is served until serve's next build, which then
// builds everything over the rolled-back snapshot, not over the one serve published last:
// its feeds announce what changes against what is served (D39), here class 102 again,
// whose change the rollback took back and the database still holds.
func TestServeAfterRollback(t *testing.T) {
	cfg := freshCfg(t, testkit.NewLocalStore(t))
	s := startServe(t, cfg, nil)
	start := expectedDocs(t, cfg.Database.URL)
	first := s.waitServed(t, cfg, start, "the build at start")
	testkit.Exec(t, cfg.Database.URL, "UPDATE classes SET cost = 2600 WHERE id = 102")
	s.waitServed(t, cfg, expectedDocs(t, cfg.Database.URL), "the change to class 102")

	// Serve's clock stands still here, so the snapshot is named: both have one time.
	if _, err := Rollback(context.Background(), cfg, first.SnapshotID, nil); err != nil {
		t.Fatalf("Rollback: %v", err)
	}
	select {
	case r := <-s.runs:
		t.Fatalf("serve built %s after the rollback, before any change: want the rollback served until the next change", r.res.SnapshotID)
	case <-time.After(time.Second):
	}

	testkit.Exec(t, cfg.Database.URL, "UPDATE classes SET cost = 150 WHERE id = 101")
	after := expectedDocs(t, cfg.Database.URL)
	res := s.waitServed(t, cfg, after, "the change after the rollback")
	if b := res.Manifest.Build; b.Incremental {
		t.Errorf("the build after the rollback = %+v, want everything built", b)
	}
	if diff := cmp.Diff(feedDiff(start, after), res.Feed, cmpopts.IgnoreFields(publish.FeedChanges{}, "After")); diff != "" {
		t.Errorf("feed changes against the rolled-back snapshot (-want +announced):\n%s", diff)
	}
}

// TestServeQueuesItsMessageHoldingTheLock: serve queues a publication's catalogue.changed
// before it lets the builder lock go, as builder run and rollback do, so that the messages
// of several builders queue in the order of their publications. Here the queueing is held
// up (the endpoints' rows locked) and the lock must still be serve's; it was let go first,
// so another builder could publish and queue the next snapshot's message ahead of this one
// (found by a read-only concurrency review). The queueing is bounded, so that tables locked
// by someone else hold no builder up for longer.
func TestServeQueuesItsMessageHoldingTheLock(t *testing.T) {
	ctx := context.Background()
	cfg := freshCfg(t, testkit.NewLocalStore(t))
	if err := queue.Migrate(ctx, cfg.Database.URL); err != nil {
		t.Fatal(err)
	}
	addEndpoint(t, cfg.Database.URL)
	s := startServeWith(t, cfg, ServeOptions{announceTimeout: 3 * time.Second})
	s.waitServed(t, cfg, expectedDocs(t, cfg.Database.URL), "the build at start")

	hold := testkit.Connect(t, cfg.Database.URL)
	tx, err := hold.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "SELECT id FROM webhook_endpoints FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	testkit.Exec(t, cfg.Database.URL, "UPDATE classes SET cost = 2600 WHERE id = 102")
	testkit.WaitLockWaiter(t, cfg.Database.URL, "%webhook_deliveries%") // the change's message, queueing
	watch := testkit.Connect(t, cfg.Database.URL)
	var free bool
	if err := watch.QueryRow(ctx, "SELECT pg_try_advisory_lock(hashtext($1))", LockName).Scan(&free); err != nil {
		t.Fatal(err)
	}
	if free {
		_, _ = watch.Exec(ctx, "SELECT pg_advisory_unlock(hashtext($1))", LockName)
		t.Error("serve let the builder lock go before its message was queued")
	}
	// Held up past its bound, the queueing gives up and the lock goes.
	testkit.WaitFor(t, 10*time.Second, "the lock let go once the queueing gave up", func() bool {
		var got bool
		if err := watch.QueryRow(ctx, "SELECT pg_try_advisory_lock(hashtext($1))", LockName).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got {
			_, _ = watch.Exec(ctx, "SELECT pg_advisory_unlock(hashtext($1))", LockName)
		}
		return got
	})
	if !strings.Contains(s.logs.String(), "could not queue the webhooks of a publication") {
		t.Error("serve did not log the message it could not queue")
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}
