package faults

import (
	"bytes"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trainingco/catalogue/cmd/internal/cmdtest"
)

// TestStoreKilledDuringRun kills the store, a MinIO of the test's own, with SIGKILL while the
// real builder run is storing objects (issue 4, guarantee 1a). The run must exit 1 with a
// message that says which step failed (and the store's error) and that nothing was
// published; once MinIO is back the pointer must still name the first snapshot, complete,
// and the next run must publish.
//
// The run reaches MinIO through a proxy that holds its second upload (the first one, an
// archive MinIO extracts or a single object, is let through, so the store holds some of the
// new objects): MinIO is killed while that upload is held, then the held request is cut and
// the proxy's port closed, so the run meets a dead store in the middle of its uploads
// however fast the machine is. Without the hold, a fast run could finish storing before the
// kill landed and fail at a later step instead.
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

	// Every class costs more: about 1,100 documents to store.
	env.Exec(t, `UPDATE classes SET cost = cost + 7`)
	proxy := newHoldProxy(t, st.Endpoint)
	proxied := &cmdtest.Env{DatabaseURL: env.DatabaseURL, Store: st, Extra: env.Extra}
	proxied.Store.Endpoint = proxy.srv.URL
	held, release := proxy.arm(nthUpload(2))
	var out, errOut bytes.Buffer
	began := time.Now()
	cmd := startRun(t, proxied, &out, &errOut)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-held:
	case err := <-exited:
		t.Fatalf("the run ended (%v) before its second upload\n%s", err, errOut.String())
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("the run made no second upload within 2 minutes\n%s", errOut.String())
	}
	listed := len(in.keys(t, "objects/"))
	killedAt := time.Since(began)
	m.Kill(t)
	close(release)
	proxy.srv.Close() // later requests are refused, as by the dead MinIO itself
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

	m.Start(t)
	if listed <= stored {
		t.Errorf("MinIO was killed before the run stored any new object (%d objects before and at the kill)", stored)
	}
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

// nthUpload matches the n-th request that stores objects: a single object's PUT under
// objects/ or a batch archive's PUT under uploads/.
func nthUpload(n int) func(*http.Request) bool {
	var seen atomic.Int32
	return func(r *http.Request) bool {
		upload := r.Method == http.MethodPut && (strings.Contains(r.URL.Path, "/objects/") || strings.Contains(r.URL.Path, "/uploads/"))
		return upload && int(seen.Add(1)) == n
	}
}
