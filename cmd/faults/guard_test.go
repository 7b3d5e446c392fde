package faults

import (
	"context"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/cmd/internal/cmdtest"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// guardCatalogue is ten public Online courses (ids 1-10) with three upcoming public classes
// each (ids 1-30).
const guardCatalogue = `
INSERT INTO courses (id, name, type, description, is_public)
SELECT i, 'Course ' || i, 'Online', 'About course ' || i, true FROM generate_series(1, 10) AS i;
INSERT INTO classes (id, course_id, start_date, end_date, cost, is_public)
SELECT i, (i - 1) / 3 + 1, DATE '2099-01-01' + i, DATE '2099-01-02' + i, 100, true FROM generate_series(1, 30) AS i;`

// TestPublishGuardRefusesShrink runs the real builder on catalogues that shrank by more than
// builder.max_shrink (default 0.5) against the published one (issue 4, guarantee 2): first
// through an empty replica (CATALOGUE_REPLICA_URL naming a freshly migrated database), then
// with eight of the ten courses withdrawn. Each run must exit 1 with a message naming the
// count, the setting and --force, leave the pointer alone and the edge serving the old
// catalogue; run --force then publishes the withdrawal.
func TestPublishGuardRefusesShrink(t *testing.T) {
	t.Parallel()
	env := cmdtest.NewEnv(t, testkit.NewS3Store(t))
	env.Exec(t, guardCatalogue)
	first := env.Run(t)
	in := newInspector(t, env.Store)
	token := env.Token(t, "guard")
	d := env.StartEdge(t, edgeVars(nil))
	d.WaitSnapshot(t, first, time.Minute)
	const withdrawn = "/api/v2/public/course/5"

	empty := &cmdtest.Env{DatabaseURL: env.DatabaseURL, Store: env.Store, Extra: maps.Clone(env.Extra)}
	empty.Extra[config.EnvName("replica.url")] = testkit.NewMigratedDatabase(t)
	steps := []struct {
		name    string
		env     *cmdtest.Env
		change  string
		wantErr string
	}{
		{"empty replica", empty, "",
			"builder: run: refuse to publish: public courses would fall from 10 to 0, more than builder.max_shrink (0.5) allows; run with --force to publish anyway: catalogue shrank too much; nothing was published\n"},
		{"eight of ten courses withdrawn", env, "UPDATE courses SET is_public = false WHERE id > 2",
			"builder: run: refuse to publish: public courses would fall from 10 to 2, more than builder.max_shrink (0.5) allows; run with --force to publish anyway: catalogue shrank too much; nothing was published\n"},
	}
	for _, s := range steps {
		if s.change != "" {
			env.Exec(t, s.change)
		}
		stdout, stderr, err := s.env.Builder(context.Background(), t, "run")
		stderr = withoutLogLines(stderr) // the message is what is left once the JSON log is taken out
		if code := cmdtest.ExitCode(err); code != 1 || stdout != "" || stderr != s.wantErr {
			t.Errorf("builder run with the %s: exit %d, stdout %q, stderr %q; want exit 1, no stdout, stderr %q", s.name, code, stdout, stderr, s.wantErr)
		}
		if got := in.pointer(t); got != first {
			t.Fatalf("pointer after the refused run with the %s = %s, want %s", s.name, got, first)
		}
		r := d.Get(t, withdrawn, token)
		if r.StatusCode != http.StatusOK || r.Header.Get("X-Catalogue-Snapshot") != first {
			t.Errorf("GET %s after the refused run with the %s: %s from snapshot %q, want 200 from %s", withdrawn, s.name, r.Status, r.Header.Get("X-Catalogue-Snapshot"), first)
		}
	}

	forced := env.Run(t, "--force")
	if got := in.current(t); got.ID != forced || got.Counts.Courses != 2 || got.Counts.Classes != 6 {
		t.Fatalf("after run --force the pointer names %s with %+v, want %s with 2 courses and 6 classes", got.ID, got.Counts, forced)
	}
	d.WaitSnapshot(t, forced, 30*time.Second)
	if r := d.Get(t, withdrawn, token); r.StatusCode != http.StatusNotFound {
		t.Errorf("GET %s after run --force: %s, want 404", withdrawn, r.Status)
	}
}

// withoutLogLines returns s without its JSON log lines (builder run logs its configuration,
// and may log more, as JSON lines on stderr).
func withoutLogLines(s string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(line, "{") {
			b.WriteString(line)
		}
	}
	return b.String()
}
