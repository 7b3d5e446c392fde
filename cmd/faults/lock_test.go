package faults

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/cmd/internal/cmdtest"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestConcurrentRunsPublishOneAtATime starts three real builder runs at once on a changed
// catalogue (issue 4, guarantee 1, the advisory lock). All three must exit 0 with three
// distinct, complete snapshots of the same documents, and the pointer must name the newest.
// One publication at a time shows in what they stored: the run that took the lock first
// stores the changed documents, and the two that waited for it find them in the snapshot it
// published and store nothing. Runs that overlapped would all read the old snapshot and all
// store the changed documents.
func TestConcurrentRunsPublishOneAtATime(t *testing.T) {
	t.Parallel()
	st := testkit.NewS3Store(t)
	env := cmdtest.NewEnv(t, st)
	env.MustBuilder(t, "seed", "--courses", "20", "--classes", "300", "--registrations", "1000", "--seed", "6")
	first := env.Run(t)
	in := newInspector(t, st)
	in.current(t)
	changeData(t, env, 1)

	const runs = 3
	cmds := make([]*exec.Cmd, runs)
	outs, errs := make([]bytes.Buffer, runs), make([]bytes.Buffer, runs)
	began := time.Now()
	for i := range runs {
		cmds[i] = startRun(t, env, &outs[i], &errs[i])
	}
	var ids []string
	stored, waited := make([]int, 0, runs), 0
	for i, cmd := range cmds {
		err := cmd.Wait()
		r := finished(cmd, err, time.Since(began), outs[i].String(), errs[i].String())
		ids = append(ids, r.mustPublish(t, "concurrent run"))
		stored = append(stored, r.stored)
		if strings.Contains(r.stderr, "waiting for another builder") {
			waited++
		}
	}
	slices.Sort(stored)
	if stored[0] != 0 || stored[1] != 0 || stored[2] == 0 {
		t.Errorf("new objects stored by the three runs = %v; want one run to store the change and two to store nothing", stored)
	}
	sorted := slices.Compact(slices.Sorted(slices.Values(ids)))
	if len(sorted) != runs {
		t.Fatalf("snapshot ids of the three runs = %v, want three distinct ones", ids)
	}
	objects := in.contents(t).objects
	last := in.complete(t, sorted[runs-1], objects)
	for _, id := range sorted[:runs-1] {
		if diff := cmp.Diff(last.Documents, in.complete(t, id, objects).Documents); diff != "" {
			t.Errorf("documents of snapshot %s and %s differ (-%s +%s):\n%s", last.ID, id, last.ID, id, diff)
		}
	}
	if got := in.pointer(t); got != last.ID {
		t.Errorf("pointer = %s, want the newest of the three, %s", got, last.ID)
	}
	status := env.MustBuilder(t, "status")
	for _, id := range append(sorted, first) {
		if !strings.Contains(status, id) {
			t.Errorf("builder status does not list snapshot %s:\n%s", id, status)
		}
	}
	if !strings.Contains(status, "current: "+last.ID+"\n") {
		t.Errorf("builder status does not name %s current:\n%s", last.ID, status)
	}
	t.Logf("%d concurrent runs in %v: objects stored %v, %d said they waited for another builder",
		runs, time.Since(began).Round(time.Millisecond), stored, waited)
}
