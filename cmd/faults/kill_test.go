package faults

import (
	"maps"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/cmd/internal/cmdtest"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// killSeed is the data set of the kill test: about 1,300 documents, so that a run (with
// -race) lasts about a second and the first publication a few.
var killSeed = []string{"--courses", "50", "--classes", "1500", "--registrations", "7500", "--seed", "4"}

// killPhase names where a killed run was stopped, judged from what it left in the store.
func killPhase(before, after contents, pointerMoved bool) string {
	switch {
	case pointerMoved:
		return "after the pointer"
	case len(after.manifests) > len(before.manifests):
		return "between manifest and pointer"
	case len(after.objects) > len(before.objects):
		return "while storing objects"
	}
	return "before any write"
}

// TestKilledRunsNeverChangeWhatIsServed kills the real builder run with SIGKILL at random
// moments spread over a whole run (issue 4, guarantee 1). Each round publishes a change
// uninterrupted (which times a run), then makes another change and kills a run of it after
// a delay drawn from the k-th of n equal slices of that time, the slices in random order.
// After each kill the pointer must be unchanged, with the edge still serving the previous
// snapshot's document, or name a complete snapshot that the edge then serves; the next run
// must publish normally. A reader hits the edge throughout and every answer must be a
// published snapshot's own document.
func TestKilledRunsNeverChangeWhatIsServed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		store func(testing.TB) config.Store
		kills int
	}{
		{"s3", testkit.NewS3Store, 20},
		{"local", testkit.NewLocalStore, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			killLoop(t, tt.store(t), tt.kills)
		})
	}
}

// killRig is the installation of one kill test: a builder environment, the store seen by
// an inspector, and an edge with a reader on it.
type killRig struct {
	env       *cmdtest.Env
	in        *inspector
	edge      *cmdtest.Edge
	token     string
	published map[string]*snapshot.Manifest // every snapshot the pointer has named
	prev      string                        // the snapshot the pointer names
	gen       int                           // the generation of the data
}

// newKillRig makes an installation on store st with builder settings extra (CATALOGUE_*
// variables), seeds it with the builder seed arguments, publishes the first generation of
// the data and starts an edge serving it.
func newKillRig(t *testing.T, st config.Store, extra map[string]string, seed ...string) *killRig {
	env := cmdtest.NewEnv(t, st)
	maps.Copy(env.Extra, extra)
	env.MustBuilder(t, append([]string{"seed"}, seed...)...)
	changeData(t, env, 0)
	rig := &killRig{env: env, prev: env.Run(t), in: newInspector(t, st), token: env.Token(t, "faults")}
	rig.published = map[string]*snapshot.Manifest{rig.prev: rig.in.current(t)}
	rig.edge = env.StartEdge(t, edgeVars(nil))
	rig.edge.WaitSnapshot(t, rig.prev, time.Minute)
	return rig
}

func killLoop(t *testing.T, st config.Store, kills int) {
	rig := newKillRig(t, st, nil, killSeed...)
	env := rig.env
	w := watch(rig.edge.URL, rig.token, snapshot.CourseRoute(watchedCourse), 25*time.Millisecond)

	phases := map[string]int{}
	var killed, rounds int
	strata := rand.Perm(kills)
	for killed < kills && rounds < 2*kills {
		took, before := rig.publish(t)
		// A run of the next change, killed somewhere in the k-th slice of the time a run took.
		delay := time.Duration((float64(strata[rounds%kills]) + rand.Float64()) / float64(kills) * float64(took))
		rounds++
		phase := rig.kill(t, delay, before)
		if phase != "finished before the kill" {
			killed++
		}
		phases[phase]++
	}
	// After the last kill the next run completes normally.
	rig.publish(t)
	if out := env.MustBuilder(t, "status"); !strings.Contains(out, "current: "+rig.prev+"\n") {
		t.Errorf("builder status after the kills:\n%s\nwant current: %s", out, rig.prev)
	}

	sent, failed := w.finish()
	w.check(t, rig.published)
	if killed < kills {
		t.Errorf("only %d of %d rounds killed a running builder (the others finished first)", killed, rounds)
	}
	t.Logf("%s: %d runs killed with SIGKILL in %d rounds; where: %v; %d reads of the edge, %d failed",
		st.URL[:strings.Index(st.URL, ":")], killed, rounds, phases, sent, failed)
}

// publish changes the data and publishes it with an uninterrupted run, which must succeed
// and be served. It returns how long the run took and what the store then holds.
func (rig *killRig) publish(t *testing.T) (time.Duration, contents) {
	t.Helper()
	rig.gen++
	changeData(t, rig.env, rig.gen)
	r := runBuilder(t, rig.env, 0)
	rig.prev = r.mustPublish(t, "uninterrupted run")
	c := rig.in.contents(t)
	rig.published[rig.prev] = rig.in.complete(t, rig.prev, c.objects)
	rig.edge.WaitSnapshot(t, rig.prev, 30*time.Second)
	checkServed(t, rig.edge, rig.token, rig.prev, rig.gen)
	return r.took, c
}

// kill changes the data and kills a run of it after delay. The pointer must then be where
// it was, with the edge still serving the previous snapshot, or name the new snapshot,
// complete, which the edge then serves. It returns where the run was stopped.
func (rig *killRig) kill(t *testing.T, delay time.Duration, before contents) string {
	t.Helper()
	rig.gen++
	changeData(t, rig.env, rig.gen)
	r := runBuilder(t, rig.env, delay)
	after := rig.in.contents(t)
	ptr := rig.in.pointer(t)
	phase := "finished before the kill"
	switch {
	case r.killed:
		phase = killPhase(before, after, ptr != rig.prev)
	case r.exit != 0:
		t.Fatalf("a run that was not killed exited %d\n%s", r.exit, r.stderr)
	}
	if ptr == rig.prev {
		checkServed(t, rig.edge, rig.token, rig.prev, rig.gen-1)
		return phase
	}
	if !after.manifests[ptr] || before.manifests[ptr] {
		t.Fatalf("killed after %v (%s): the pointer names %s, not the new snapshot", delay, phase, ptr)
	}
	rig.published[ptr] = rig.in.complete(t, ptr, after.objects)
	rig.edge.WaitSnapshot(t, ptr, 30*time.Second)
	checkServed(t, rig.edge, rig.token, ptr, rig.gen)
	rig.prev = ptr
	return phase
}
