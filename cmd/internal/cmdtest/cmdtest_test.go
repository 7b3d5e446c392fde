package cmdtest_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/cmd/internal/cmdtest"
	"github.com/trainingco/catalogue/scripts/testkit"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

// TestHarness runs the whole cycle once on a local store: migrate, run, token, edge, stop.
func TestHarness(t *testing.T) {
	env := cmdtest.NewEnv(t, testkit.NewLocalStore(t))
	env.Exec(t, `INSERT INTO courses (id, name, type, description, is_public) VALUES (1, 'Alpha', 'Online', 'd', true)`)
	id := env.Run(t)
	token := env.Token(t, "harness")
	d := env.StartEdge(t, nil)
	d.WaitSnapshot(t, id, 10*time.Second)

	r := d.Get(t, "/api/v2/public/course/1", token)
	if r.StatusCode != http.StatusOK || r.Header.Get("X-Catalogue-Snapshot") != id {
		t.Fatalf("GET course 1: %s, snapshot %q, want 200 and %q\n%s", r.Status, r.Header.Get("X-Catalogue-Snapshot"), id, r.Data)
	}
	if r := d.Get(t, "/api/v2/public/course/1", ""); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET course 1 without token: %s, want 401", r.Status)
	}
	if err := d.Stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, d.Logs())
	}
	if !strings.Contains(d.Logs(), `"stopped"`) {
		t.Errorf("logs lack the stopped line:\n%s", d.Logs())
	}
}

// TestExitCode checks that a failing builder command is reported with its exit status.
func TestExitCode(t *testing.T) {
	env := cmdtest.NewEnv(t, testkit.NewLocalStore(t))
	_, stderr, err := env.Builder(t.Context(), t, "no-such-command")
	if got := cmdtest.ExitCode(err); got != 2 {
		t.Errorf("builder no-such-command: exit %d, want 2 (usage error)\n%s", got, stderr)
	}
}
