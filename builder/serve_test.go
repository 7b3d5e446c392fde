package builder

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/publish"
	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestServeRetriesAfterAFailedRun starts serve on a database without the schema, so the
// run at start fails; the test then creates the schema, the next scheduled run publishes,
// and cancelling the context stops serve.
func TestServeRetriesAfterAFailedRun(t *testing.T) {
	cfg := config.Default()
	cfg.Database.URL = testkit.NewDatabase(t)
	cfg.Store = testkit.NewLocalStore(t)
	cfg.Builder.Schedule = "@every 1s"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var logs syncBuffer
	var outcomes []error
	var published publish.Result
	err := Serve(ctx, cfg, ServeOptions{
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		Now:    clock(),
		AfterRun: func(res publish.Result, err error) {
			outcomes = append(outcomes, err)
			if err != nil {
				testkit.Exec(t, cfg.Database.URL, templates.MustDefault().Migration(true)+fixture)
				return
			}
			published = res
			cancel() // as SIGTERM would
		},
	})
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if len(outcomes) != 2 || outcomes[0] == nil || outcomes[1] != nil {
		t.Fatalf("run outcomes = %v, want a failure and then a success", outcomes)
	}
	if got := currentID(t, cfg); got != published.SnapshotID {
		t.Errorf("current = %s, want %s", got, published.SnapshotID)
	}
	var msgs []string
	for _, line := range bytes.Split(bytes.TrimSpace(logs.buf.Bytes()), []byte("\n")) {
		var rec struct {
			Level string `json:"level"`
			Msg   string `json:"msg"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("log line is not JSON: %s", line)
		}
		if strings.Contains(rec.Msg, "skipped") {
			continue // a tick during a slow run (the fixture is loaded inside the first)
		}
		msgs = append(msgs, rec.Level+" "+rec.Msg)
	}
	want := []string{
		"INFO builder serve starting",
		"WARN webhooks are off: the database has no webhook tables yet; run builder migrate", // no schema at all yet
		"INFO listening for changes on the primary",                                          // its build is the one at start
		"ERROR build failed; retrying",
		"INFO retrying the failed build",
		"INFO published snapshot",
		"INFO builder serve stopping: waiting for the run in progress",
		"INFO builder serve stopped",
	}
	if d := cmp.Diff(want, msgs); d != "" {
		t.Errorf("log mismatch (-want +got):\n%s", d)
	}
}

// TestServeStopsWithoutPublishingOnCancel cancels the context, as SIGTERM does, while the
// second run is under way: serve returns, and the first snapshot stays current.
func TestServeStopsWithoutPublishingOnCancel(t *testing.T) {
	for name, cfg := range newFixture(t) {
		t.Run(name, func(t *testing.T) {
			cfg.Builder.Schedule = "@every 1s"
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			armed := false // set after the first run: the next reading of the clock cancels
			clk := clock()
			var outcomes []publish.Result
			var errs []error
			err := Serve(ctx, cfg, ServeOptions{
				Logger: slog.New(slog.NewJSONHandler(&syncBuffer{}, nil)),
				Now: func() time.Time {
					mu.Lock()
					defer mu.Unlock()
					if armed {
						cancel()
					}
					return clk()
				},
				AfterRun: func(res publish.Result, err error) {
					mu.Lock()
					defer mu.Unlock()
					outcomes, errs = append(outcomes, res), append(errs, err)
					armed = true
				},
			})
			if err != nil {
				t.Fatalf("Serve: %v", err)
			}
			if len(errs) != 2 || errs[0] != nil || !errors.Is(errs[1], context.Canceled) {
				t.Fatalf("run outcomes = %v, want a success and then a cancelled run", errs)
			}
			if got := currentID(t, cfg); got != outcomes[0].SnapshotID {
				t.Errorf("current = %s, want the first snapshot %s", got, outcomes[0].SnapshotID)
			}
			keys, err := mustOpenStore(t, cfg).List(context.Background(), snapshot.ManifestPrefix)
			if err != nil || len(keys) != 1 {
				t.Errorf("manifests = %v, %v; want the first one only", keys, err)
			}
		})
	}
}

// TestServeWithoutPrimarySaysWhyNoWebhooks: a builder given only replica.url builds from the
// replica, and has no webhooks, whose queue is on the primary: it says that once, rather
// than "could not start; trying again" every 30 s with pgx's error for a connection to a
// local socket it was never told of.
func TestServeWithoutPrimarySaysWhyNoWebhooks(t *testing.T) {
	cfg := config.Default()
	cfg.Replica.URL = testkit.NewDatabase(t)
	testkit.Exec(t, cfg.Replica.URL, templates.MustDefault().Migration(false)+fixture)
	cfg.Store = testkit.NewLocalStore(t)
	cfg.Builder.Schedule = "@every 1h"
	s := startServe(t, cfg, nil)
	if r := s.next(t); r.err != nil {
		t.Fatalf("the build at start: %v", r.err)
	}
	s.stop()
	const want = "webhooks are off: database.url is not set (their queue is in the primary)"
	if n := countLogs(s.logs, want); n != 1 || strings.Contains(s.logs.buf.String(), "could not start") {
		t.Errorf("serve's log holds %q %d times, want once and no failure to start:\n%s", want, n, s.logs.buf.String())
	}
}

// TestServeLogsAnUnreachablePrimaryOnce: builder serve tries its listening connection again
// every second, and said so every second while the primary could not be reached (602
// identical warnings in ten minutes); it says it once while the failure lasts.
func TestServeLogsAnUnreachablePrimaryOnce(t *testing.T) {
	cfg := config.Default()
	cfg.Database.URL = "postgres://catalogue@127.0.0.1:1/catalogue?sslmode=disable&connect_timeout=2"
	cfg.Store = testkit.NewLocalStore(t)
	cfg.Builder.Schedule = "@every 1h"
	s := startServe(t, cfg, nil)
	time.Sleep(3500 * time.Millisecond) // three retries or more
	s.stop()
	const msg = "listening for changes: reconnecting; until then changes are published on the schedule"
	if n := countLogs(s.logs, msg); n != 1 {
		t.Errorf("serve logged %q %d times in 3.5 s, want once", msg, n)
	}
}

// TestServeStoppedMidBuildSaysNoRetry: SIGTERM during a build interrupts it, and serve
// stops; it logged "retrying the failed build" after "stopping", of a retry that never
// came. Seen failing before.
func TestServeStoppedMidBuildSaysNoRetry(t *testing.T) {
	cfg := config.Default()
	cfg.Database.URL = testkit.NewMigratedDatabase(t)
	testkit.Exec(t, cfg.Database.URL, fixture)
	cfg.Store = testkit.NewLocalStore(t)
	cfg.Builder.Schedule = "@every 1h"
	var mu sync.Mutex // holds back the build's progress until s is set
	var s *serving
	mu.Lock()
	s = startServe(t, cfg, func(p publish.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Phase == publish.PhaseUploading {
			s.cancel() // as SIGTERM would
		}
	})
	mu.Unlock()
	if r := s.next(t); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("the build at start: %v, want it interrupted", r.err)
	}
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop within 20 s")
	}
	if n := countLogs(s.logs, "build interrupted by shutdown; nothing was published"); n != 1 {
		t.Errorf("serve said the build was interrupted %d times, want once", n)
	}
	if n := countLogs(s.logs, "retrying the failed build"); n != 0 {
		t.Errorf("serve said %d times it retries the interrupted build, want never:\n%s", n, s.logs.String())
	}
}
