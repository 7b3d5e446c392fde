package faults

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/cmd/internal/cmdtest"
	"github.com/trainingco/catalogue/config"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

// watchedCourse is the course whose document the tests read through the edge: its name says
// which generation of the data a snapshot was built from.
const watchedCourse = 1

// watchedPath is the edge's route of watchedCourse.
var watchedPath = "/api/v2" + snapshot.CourseRoute(watchedCourse)

// generationName is the name watchedCourse has in generation gen of the data.
func generationName(gen int) string { return fmt.Sprintf("Watched course, generation %d", gen) }

// changeData makes generation gen of the data: watchedCourse is renamed, and the cost of one
// class in 25 rises, so that a build has about 150 new documents to store.
func changeData(t testing.TB, env *cmdtest.Env, gen int) {
	t.Helper()
	env.Exec(t, fmt.Sprintf(`UPDATE courses SET name = '%s', is_public = true WHERE id = %d;
UPDATE classes SET cost = cost + 1 WHERE id %% 25 = %d;`, generationName(gen), watchedCourse, gen%25))
}

// edgeVars is the environment of every edge the tests start, with extra on top: the pointer
// is polled often so that a change shows within a fraction of a second, and the rate limit
// is out of reach of the tests' own traffic.
func edgeVars(extra map[string]string) map[string]string {
	v := map[string]string{
		config.EnvName("edge.poll_interval"): "100ms",
		config.EnvName("edge.rate_limit"):    "1000000",
	}
	maps.Copy(v, extra)
	return v
}

// runLine is the summary line builder run prints on stdout when it published a snapshot.
var runLine = regexp.MustCompile(`(?m)^snapshot (\S+): (\d+) documents, (\d+) new objects stored, (\d+) bytes, [0-9.]+s$`)

// runResult is how one builder run ended.
type runResult struct {
	stdout, stderr string
	exit           int           // -1 when killed
	killed         bool          // ended by the SIGKILL of the test
	took           time.Duration // from start to exit
	snapshot       string        // the id of the summary line, "" if none
	stored         int           // new objects stored, from the summary line
}

// startRun starts builder run with args in env.
func startRun(t testing.TB, env *cmdtest.Env, stdout, stderr *bytes.Buffer, args ...string) *exec.Cmd {
	t.Helper()
	bin, _ := cmdtest.Binaries(t)
	cmd := exec.Command(bin, append([]string{"run"}, args...)...)
	cmd.Env = append(env.Environ(), noExitSleep())
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start builder run: %v", err)
	}
	return cmd
}

// noExitSleep returns the GORACE setting that stops a binary built with -race from sleeping
// a second at exit (the race runtime's atexit_sleep_ms) after its work is done: that second
// would be a sixth of a run's measured time, and a kill in it a kill of nothing. Races are
// still reported, and still make the binary exit 66.
func noExitSleep() string {
	return "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")
}

// runBuilder runs builder run with args; when killAfter > 0 it sends SIGKILL that long after
// the start, unless the run has ended by then.
func runBuilder(t testing.TB, env *cmdtest.Env, killAfter time.Duration, args ...string) runResult {
	t.Helper()
	var out, errOut bytes.Buffer
	began := time.Now()
	cmd := startRun(t, env, &out, &errOut, args...)
	if killAfter > 0 {
		timer := time.AfterFunc(killAfter, func() { _ = cmd.Process.Kill() })
		defer timer.Stop()
	}
	err := cmd.Wait()
	return finished(cmd, err, time.Since(began), out.String(), errOut.String())
}

// finished describes a builder run that has exited.
func finished(cmd *exec.Cmd, err error, took time.Duration, stdout, stderr string) runResult {
	r := runResult{stdout: stdout, stderr: stderr, exit: cmdtest.ExitCode(err), took: took}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		r.killed = true
	}
	if m := runLine.FindStringSubmatch(stdout); m != nil {
		r.snapshot = m[1]
		r.stored, _ = strconv.Atoi(m[3])
	}
	return r
}

// mustPublish checks that r exited 0 with a summary line and returns the snapshot id.
func (r runResult) mustPublish(t testing.TB, what string) string {
	t.Helper()
	if r.exit != 0 || r.snapshot == "" {
		t.Fatalf("%s: exit %d, want 0 and a summary line\nstdout:\n%s\nstderr:\n%s", what, r.exit, r.stdout, r.stderr)
	}
	return r.snapshot
}

// inspector reads a store the way the edge does, to check what a fault left behind.
type inspector struct {
	st       store.Store
	verified map[string]bool // hashes whose object was read back and matched
}

func newInspector(t testing.TB, cfg config.Store) *inspector {
	t.Helper()
	st, err := store.Open(context.Background(), store.Options(cfg))
	if err != nil {
		t.Fatalf("open store %s: %v", cfg.URL, err)
	}
	return &inspector{st: st, verified: map[string]bool{}}
}

// pointer returns the id the pointer names.
func (in *inspector) pointer(t testing.TB) string {
	t.Helper()
	p, err := snapshot.ReadPointer(context.Background(), in.st)
	if err != nil {
		t.Fatalf("read pointer: %v", err)
	}
	return p.ID
}

// contents is what the store holds: its object keys and manifest ids.
type contents struct {
	objects   map[string]bool
	manifests map[string]bool
}

func (in *inspector) contents(t testing.TB) contents {
	t.Helper()
	c := contents{objects: in.keys(t, "objects/"), manifests: map[string]bool{}}
	for k := range in.keys(t, snapshot.ManifestPrefix) {
		c.manifests[snapshot.IDFromManifestKey(k)] = true
	}
	return c
}

func (in *inspector) keys(t testing.TB, prefix string) map[string]bool {
	t.Helper()
	keys, err := in.st.List(context.Background(), prefix)
	if err != nil {
		t.Fatalf("list %s: %v", prefix, err)
	}
	set := make(map[string]bool, len(keys))
	for _, k := range keys {
		set[k] = true
	}
	return set
}

// complete checks that snapshot id is complete: its manifest reads, and every object it
// names is among objects (a listing of the store) and holds the bytes its hash promises.
// Objects verified once are not read again: they are immutable, and a later deletion would
// show as a key missing from the listing.
func (in *inspector) complete(t testing.TB, id string, objects map[string]bool) *snapshot.Manifest {
	t.Helper()
	ctx := context.Background()
	m, err := snapshot.ReadManifest(ctx, in.st, id)
	if err != nil {
		t.Fatalf("snapshot %s is not complete: %v", id, err)
	}
	var todo []snapshot.Entry
	queued := map[string]bool{}
	for route, e := range m.Documents {
		if !objects[snapshot.ObjectKey(e.Hash)] {
			t.Fatalf("snapshot %s is not complete: the object of %s (%s) is missing", id, route, e.Hash)
		}
		if !in.verified[e.Hash] && !queued[e.Hash] {
			queued[e.Hash] = true
			todo = append(todo, e)
		}
	}
	if err := in.readBack(ctx, todo); err != nil {
		t.Fatalf("snapshot %s is not complete: %v", id, err)
	}
	return m
}

// current checks that the pointer names a complete snapshot and returns its manifest.
func (in *inspector) current(t testing.TB) *snapshot.Manifest {
	t.Helper()
	return in.complete(t, in.pointer(t), in.contents(t).objects)
}

// readBack reads entries and checks each against its hash.
func (in *inspector) readBack(ctx context.Context, entries []snapshot.Entry) error {
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for _, e := range entries {
		g.Go(func() error {
			if _, err := snapshot.ReadDocument(gctx, in.st, e); err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			in.verified[e.Hash] = true
			return nil
		})
	}
	return g.Wait()
}

// checkServed checks that the edge answers the watched course from snapshot id with the
// name of generation gen.
func checkServed(t testing.TB, d *cmdtest.Edge, token, id string, gen int) {
	t.Helper()
	r := d.Get(t, watchedPath, token)
	got := r.Header.Get("X-Catalogue-Snapshot")
	if r.StatusCode != 200 || got != id || !bytes.Contains(r.Data, []byte(`"name":"`+generationName(gen)+`"`)) {
		t.Fatalf("GET %s: %s from snapshot %q, body %s; want 200 from %s naming %q", watchedPath, r.Status, got, r.Data, id, generationName(gen))
	}
}

// waitFor polls cond every 20 ms until it holds or within has passed, and says which.
// The tests poll real processes and servers, which have no clock to inject.
func waitFor(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}
