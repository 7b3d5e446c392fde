package faults

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/cmd/internal/cmdtest"
)

// TestStoreKilledDuringRun kills the store, a MinIO of the test's own, with SIGKILL while the
// real builder run is storing objects (issue 4, guarantee 1a). The run must exit 1 with a
// message that says which step failed (and the store's error) and that nothing was
// published; once MinIO is back the
// pointer must still name the first snapshot, complete, and the next run must publish.
func TestStoreKilledDuringRun(t *testing.T) {
	t.Parallel()
	m := startMinIO(t)
	st := m.store("faults")
	env := cmdtest.NewEnv(t, st)
	env.MustBuilder(t, "seed", "--courses", "30", "--classes", "1200", "--registrations", "5000", "--seed", "5")
	first := env.Run(t)
	in := newInspector(t, st)
	in.current(t)
	stored := len(in.contents(t).objects)

	// Every class costs more: about 1,100 documents to store, long enough to stop MinIO
	// in the middle of the upload.
	env.Exec(t, `UPDATE classes SET cost = cost + 7`)
	var out, errOut bytes.Buffer
	began := time.Now()
	cmd := startRun(t, env, &out, &errOut)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var listed int
	if !waitFor(2*time.Minute, func() bool { listed = len(in.keys(t, "objects/")); return listed > stored }) {
		t.Fatalf("the run stored no object within 2 minutes")
	}
	killedAt := time.Since(began)
	m.kill(t)
	var r runResult
	select {
	case err := <-exited:
		r = finished(cmd, err, time.Since(began), out.String(), errOut.String())
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("builder run still running 2 minutes after MinIO was killed\n%s", errOut.String())
	}
	if r.exit != 1 || r.stdout != "" {
		t.Fatalf("builder run with MinIO killed after %v (%d of about 1,100 new objects stored): exit %d, stdout %q; want exit 1 and no summary\nstderr:\n%s",
			killedAt, listed-stored, r.exit, r.stdout, r.stderr)
	}
	// One object ("store object objects/…") or, on MinIO, a batch ("store objects: upload
	// batch of N objects (first objects/…)"): either way the step and an object are named.
	for _, want := range []string{"builder: run: store object", "objects/", "nothing was published"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("builder run's message lacks %q:\n%s", want, r.stderr)
		}
	}

	m.start(t)
	if got := in.pointer(t); got != first {
		t.Fatalf("pointer after the failed run = %s, want the first snapshot %s", got, first)
	}
	in.current(t)
	next := env.Run(t)
	if got := in.current(t); got.ID != next {
		t.Fatalf("pointer after the next run = %s, want %s", got.ID, next)
	}
	t.Logf("MinIO killed %v into the run, after %d new objects were stored; the run exited %d after %v: %s",
		killedAt.Round(time.Millisecond), listed-stored, r.exit, r.took.Round(time.Millisecond), strings.TrimSpace(r.stderr))
}
