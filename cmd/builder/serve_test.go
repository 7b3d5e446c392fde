package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trainingco/catalogue/scripts/testkit"
)

// logWatcher reads serve's JSON log lines as they are written.
type logWatcher struct {
	mu    sync.Mutex
	lines []map[string]any
}

func (w *logWatcher) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil {
			w.mu.Lock()
			w.lines = append(w.lines, rec)
			w.mu.Unlock()
		}
	}
}

// wait waits, at most 20 s, for a line whose msg is msg and for which ok holds.
func (w *logWatcher) wait(t *testing.T, msg string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		w.mu.Lock()
		for _, l := range w.lines {
			if l["msg"] == msg && (ok == nil || ok(l)) {
				w.mu.Unlock()
				return l
			}
		}
		w.mu.Unlock()
	}
	t.Fatalf("no log line %q within 20 s", msg)
	return nil
}

// TestServeCommandPublishesChanges runs builder serve as the command does, commits a change
// and checks the three places it shows: the log line of its build, builder status (the
// last change-triggered build and what it re-rendered) and the metrics listener.
func TestServeCommandPublishesChanges(t *testing.T) {
	st := testkit.NewLocalStore(t)
	db := testkit.NewMigratedDatabase(t)
	mustRunCmd(t, "seed", "--database-url", db, "--courses", "3", "--classes", "12", "--registrations", "20", "--seed", "3")
	conf := filepath.Join(t.TempDir(), "catalogue.yaml")
	yaml := fmt.Sprintf("database:\n  url: %q\nstore:\n  url: %q\nbuilder:\n  schedule: \"@every 1h\"\n  metrics_listen: \"127.0.0.1:0\"\n", db, st.URL)
	if err := os.WriteFile(conf, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	w := &logWatcher{}
	go w.read(pr)
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve", "--config", conf}, io.Discard, pw) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve returned %v, want nil after SIGTERM", err)
		}
		pw.Close()
	}()

	w.wait(t, "published snapshot", func(l map[string]any) bool { return l["kind"] == "full" })
	addr := w.wait(t, "metrics at /metrics", nil)["address"].(string)
	testkit.Exec(t, db, `UPDATE classes SET cost = 12345 WHERE id = 4`)
	line := w.wait(t, "published snapshot", func(l map[string]any) bool { return l["kind"] == "changes" })
	if lag, ok := line["commit_to_published_seconds"].(float64); !ok || lag <= 0 || lag > 10 {
		t.Errorf("the change's log line %v, want commit_to_published_seconds between 0 and 10", line)
	}

	status := mustRunCmd(t, "status", "--config", conf)
	for _, want := range []string{
		"last change-triggered build: ",
		"  notifications: classes 1\n",
		"  build:         change (only what changed, over ",
		"    /public/class/4\n",
	} {
		if !strings.Contains(status, want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
	}

	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, re := range []string{
		`catalogue_builder_builds_total\{kind="changes",result="published",trigger="change"\} 1\n`,
		`catalogue_builder_builds_total\{kind="full",result="published",trigger="start"\} 1\n`,
		`catalogue_builder_commit_to_published_seconds_count 1\n`,
		`catalogue_builder_notifications_total [1-9]`,
		`catalogue_builder_listen_connects_total 1\n`,
		`catalogue_builder_listening 1\n`,
	} {
		if !regexp.MustCompile(re).Match(body) {
			t.Errorf("/metrics lacks %s", re)
		}
	}
}
